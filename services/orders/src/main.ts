// Tracing first: it must patch express and pg before they are loaded.
import { startTracing } from '@seller-api/service-kit/tracing';
startTracing('orders');

import { ConfigError, handleSignals } from '@seller-api/service-kit';
import { loadOrdersConfig } from './config';
import { startOrders } from './service';

async function main(): Promise<void> {
  const config = loadOrdersConfig();
  const service = await startOrders(config);
  handleSignals(service.runtime.logger, service.stop, config.SHUTDOWN_TIMEOUT_MS);
}

main().catch((err: unknown) => {
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
});
