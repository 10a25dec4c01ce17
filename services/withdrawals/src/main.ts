// Tracing first: it must patch express and pg before they are loaded.
import { startTracing, stopTracing } from '@seller-api/service-kit/tracing';
startTracing('withdrawals');

import { ConfigError, handleSignals } from '@seller-api/service-kit';
import { loadWithdrawalsConfig } from './config';
import { startWithdrawals } from './service';

async function main(): Promise<void> {
  const config = loadWithdrawalsConfig();
  const service = await startWithdrawals(config);
  // The spans still buffered are sent once the service has stopped.
  handleSignals(service.runtime.logger, () => service.stop().then(stopTracing), config.SHUTDOWN_TIMEOUT_MS);
}

main().catch((err: unknown) => {
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
});
