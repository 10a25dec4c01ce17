import { createRuntime, serveService, type Runtime } from '@seller-api/service-kit';
import { Pool } from 'pg';
import type pino from 'pino';
import type { DispatcherConfig } from './config';
import { entities } from './db/entities';
import { SCHEMA, migrations } from './db/migrations';
import type { Resolver } from '@seller-api/service-kit';
import { intakeHandler } from './events/intake';
import { createDispatcherMetrics, registerBacklogGauge } from './events/metrics';
import { DeliverySender } from './events/sender';
import { INTAKE_QUEUE, topology } from './events/topology';
import { mountRoutes } from './http/routes';

export interface DispatcherService {
  runtime: Runtime;
  sender: DeliverySender;
  port: number;
  stop(): Promise<void>;
}

export async function startDispatcher(
  config: DispatcherConfig,
  options: { logDestination?: pino.DestinationStream; metrics?: boolean; resolve?: Resolver } = {},
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
  registerBacklogGauge(runtime.metrics, runtime.orm);
  // The sender's statements go through a small pool of their own (SenderOptions.pool): one claim
  // and one outcome batch at a time, plus the release of what a stopping round hands back.
  const senderPool = new Pool({
    connectionString: config.DATABASE_URL,
    max: 3,
    application_name: 'webhook-dispatcher-sender',
    // Every statement of the sender finds its rows by key or reads the due index in order. Its
    // statements are prepared and keep the plan made in their first executions for the connection's
    // life: planned while the table was small, the claim's update joined its rows by scanning the
    // whole table, every claim, as the table grew without end (a third of PostgreSQL's time, bench/README.md).
    options: '-c enable_seqscan=off',
  });
  senderPool.on('error', (err) => runtime.logger.warn({ err: err.message }, 'sender pool error'));
  const sender = new DeliverySender({
    pool: senderPool,
    logger: runtime.logger,
    metrics: createDispatcherMetrics(runtime.metrics),
    schedule: config.WEBHOOK_RETRY_SCHEDULE,
    attemptTimeoutMs: config.WEBHOOK_ATTEMPT_TIMEOUT_MS,
    concurrency: config.WEBHOOK_CONCURRENCY,
    destinationConcurrency: config.WEBHOOK_DESTINATION_CONCURRENCY,
    pollIntervalMs: config.WEBHOOK_POLL_INTERVAL_MS,
    allowPrivateTargets: config.WEBHOOK_ALLOW_PRIVATE_TARGETS,
    resolve: options.resolve,
  });
  const policy = { allowPrivate: config.WEBHOOK_ALLOW_PRIVATE_TARGETS, resolve: options.resolve };
  const { server } = await serveService(runtime, {
    port: config.PORT,
    metricsPort: options.metrics === false ? undefined : config.METRICS_PORT,
    internalSecret: config.INTERNAL_SECRET,
    mount: (app) => mountRoutes(app, { runtime, policy, onRequeued: () => sender.rescan() }),
  });
  const intake = intakeHandler(runtime.sql, runtime.logger);
  await runtime.broker.consume(INTAKE_QUEUE, async (message) => {
    await intake(message);
    sender.wake();
  });
  sender.start();
  const address = server.address();
  return {
    runtime,
    sender,
    port: typeof address === 'object' && address ? address.port : config.PORT,
    stop: () =>
      runtime.stop(async () => {
        await sender.stop();
        await senderPool.end();
      }),
  };
}
