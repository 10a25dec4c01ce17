// Tracing first: it must patch express and pg before they are loaded.
import { startTracing } from '@seller-api/service-kit/tracing';
startTracing('webhook-dispatcher');

import { ConfigError, handleSignals } from '@seller-api/service-kit';
import { loadDispatcherConfig } from './config';
import { startDispatcher } from './service';

async function main(): Promise<void> {
  const config = loadDispatcherConfig();
  const service = await startDispatcher(config);
  handleSignals(service.runtime.logger, service.stop, config.SHUTDOWN_TIMEOUT_MS);
}

main().catch((err: unknown) => {
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
});
