import {
  createRuntime,
  serveService,
  callerKeysOf,
  type Runtime,
  localTargets,
} from '@seller-api/service-kit';
import { DISPATCHER_ACCESS } from './http/callers';
import type pino from 'pino';
import type { DispatcherConfig } from './config';
import { entities } from './db/entities';
import { SCHEMA, migrations } from './db/migrations';
import type { Resolver } from '@seller-api/service-kit';
import { intakeHandler } from './events/intake';
import { createDispatcherMetrics, registerBacklogGauge } from './metrics';
import { DeliverySender } from './jobs/sender';
import { INTAKE_QUEUE, topology } from './events/topology';
import { mountRoutes } from './http/routes';
import { SecretBox } from './domain/secret-box';
import { startHistoryRetention } from './jobs/history-retention';
import { startSecretSealing } from './jobs/seal-secrets';
import { startStrandedMoves } from './jobs/stranded-deliveries';

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
    idempotency: true,
  });
  registerBacklogGauge(runtime.metrics, runtime.sql);
  const secrets = new SecretBox(config.WEBHOOK_SECRETS_KEY, config.WEBHOOK_SECRETS_KEY_PREVIOUS);
  const sender = new DeliverySender({
    sql: runtime.sql,
    logger: runtime.logger,
    metrics: createDispatcherMetrics(runtime.metrics),
    schedule: config.WEBHOOK_RETRY_SCHEDULE,
    attemptTimeoutMs: config.WEBHOOK_ATTEMPT_TIMEOUT_MS,
    concurrency: config.WEBHOOK_CONCURRENCY,
    destinationConcurrency: config.WEBHOOK_DESTINATION_CONCURRENCY,
    pollIntervalMs: config.WEBHOOK_POLL_INTERVAL_MS,
    allowPrivateTargets: localTargets(config).allowPrivate,
    allowLoopbackTargets: localTargets(config).allowLoopback,
    resolve: options.resolve,
    secrets,
  });
  const policy = {
    ...localTargets(config),
    resolve: options.resolve,
    logger: runtime.logger,
  };
  const { server } = await serveService(runtime, {
    port: config.PORT,
    metricsPort: options.metrics === false ? undefined : config.METRICS_PORT,
    callerKeys: callerKeysOf(config, 'webhook-dispatcher'),
    access: DISPATCHER_ACCESS,
    mount: (app) =>
      mountRoutes(app, {
        runtime,
        policy,
        secrets,
        onRequeued: () => sender.rescan(),
        changing: (id, change) => sender.changing(id, change),
        retired: (id) => sender.changed(id),
        eventsRetentionDays: config.EVENTS_RETENTION_DAYS,
        deliveriesRetentionDays: config.DELIVERIES_RETENTION_DAYS,
      }),
  });
  // Before the first message: the partitions it is stored in must exist (jobs/history-retention.ts).
  const retention = await startHistoryRetention(runtime, {
    events: config.EVENTS_RETENTION_DAYS,
    deliveries: config.DELIVERIES_RETENTION_DAYS,
  });
  const intake = intakeHandler(runtime.sql, config.EVENTS_RETENTION_DAYS);
  await runtime.broker.consume(INTAKE_QUEUE, async (message) => {
    await intake(message);
    sender.wake();
  });
  sender.start();
  const stranded = startStrandedMoves(runtime, () => sender.rescan());
  const sealing = startSecretSealing(runtime.sql, secrets, runtime.logger);
  const address = server.address();
  return {
    runtime,
    sender,
    port: typeof address === 'object' && address ? address.port : config.PORT,
    stop: () =>
      runtime.stop(async () => {
        await retention.stop();
        await stranded.stop();
        await sealing.stop();
        await sender.stop();
      }),
  };
}
