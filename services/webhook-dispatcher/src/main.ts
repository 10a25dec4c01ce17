// Tracing first: it must patch express and pg before they are loaded.
import { startTracing, stopTracing } from '@seller-api/service-kit/tracing';
startTracing('webhook-dispatcher');

import { ConfigError, handleSignals } from '@seller-api/service-kit';
import { loadDispatcherConfig } from './config';
import { startDispatcher } from './service';

async function main(): Promise<void> {
  const config = loadDispatcherConfig();
  const service = await startDispatcher(config);
  // The spans still buffered are sent once the service has stopped.
  handleSignals(service.runtime.logger, () => service.stop().then(stopTracing), config.SHUTDOWN_TIMEOUT_MS);
}

main().catch((err: unknown) => {
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
});
