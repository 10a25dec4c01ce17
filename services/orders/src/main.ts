// Tracing first: it must patch express and pg before they are loaded.
import { startTracing, stopTracing } from '@seller-api/service-kit/tracing';
startTracing('orders');

import { ConfigError, handleSignals } from '@seller-api/service-kit';
import { loadOrdersConfig } from './config';
import { startOrders } from './service';

async function main(): Promise<void> {
  const config = loadOrdersConfig();
  const service = await startOrders(config);
  // The spans still buffered are sent once the service has stopped.
  handleSignals(service.runtime.logger, () => service.stop().then(stopTracing), config.SHUTDOWN_TIMEOUT_MS);
}

main().catch((err: unknown) => {
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
});
