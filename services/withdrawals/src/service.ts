import { createRuntime, serveService, type Runtime } from '@seller-api/service-kit';
import type pino from 'pino';
import type { WithdrawalsConfig } from './config';
import { entities } from './db/entities';
import { SCHEMA, migrations } from './db/migrations';
import { topology } from './events/topology';
import { mountRoutes } from './http/routes';

export interface WithdrawalsService {
  runtime: Runtime;
  port: number;
  stop(): Promise<void>;
}

export async function startWithdrawals(
  config: WithdrawalsConfig,
  options: { logDestination?: pino.DestinationStream; metrics?: boolean } = {},
): Promise<WithdrawalsService> {
  const runtime = await createRuntime({
    service: 'withdrawals',
    config,
    schema: SCHEMA,
    entities,
    migrations,
    topology,
    logDestination: options.logDestination,
  });
  const { server } = await serveService(runtime, {
    port: config.PORT,
    metricsPort: options.metrics === false ? undefined : config.METRICS_PORT,
    internalSecret: config.INTERNAL_SECRET,
    mount: (app) => mountRoutes(app, runtime),
  });
  const address = server.address();
  return {
    runtime,
    port: typeof address === 'object' && address ? address.port : config.PORT,
    stop: () => runtime.stop(),
  };
}
