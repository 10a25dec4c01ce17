import { createRuntime, serveService, type Runtime } from '@seller-api/service-kit';
import type pino from 'pino';
import type { DispatcherConfig } from './config';
import { entities } from './db/entities';
import { SCHEMA, migrations } from './db/migrations';
import { topology } from './events/topology';
import { mountRoutes } from './http/routes';

export interface DispatcherService {
  runtime: Runtime;
  port: number;
  stop(): Promise<void>;
}

export async function startDispatcher(
  config: DispatcherConfig,
  options: { logDestination?: pino.DestinationStream; metrics?: boolean } = {},
): Promise<DispatcherService> {
  const runtime = await createRuntime({
    service: 'webhook-dispatcher',
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
