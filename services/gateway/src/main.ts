// Tracing first: it must patch express and pg before they are loaded.
import { startTracing } from '@seller-api/service-kit/tracing';
startTracing('gateway');

import { ConfigError, handleSignals } from '@seller-api/service-kit';
import { loadGatewayConfig } from './config';
import { startGateway } from './service';

async function main(): Promise<void> {
  const config = loadGatewayConfig();
  const gateway = await startGateway(config);
  handleSignals(gateway.runtime.logger, gateway.stop, config.SHUTDOWN_TIMEOUT_MS);
}

main().catch((err: unknown) => {
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
});
