// Tracing first: it must patch express and pg before they are loaded.
import { startTracing, stopTracing } from '@seller-api/service-kit/tracing';
startTracing('gateway');

import { ConfigError, handleSignals } from '@seller-api/service-kit';
import { loadGatewayConfig } from './config';
import { startGateway } from './service';

async function main(): Promise<void> {
  const config = loadGatewayConfig();
  const gateway = await startGateway(config);
  // The spans still buffered are sent once the service has stopped.
  handleSignals(gateway.runtime.logger, () => gateway.stop().then(stopTracing), config.SHUTDOWN_TIMEOUT_MS);
}

main().catch((err: unknown) => {
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
});
