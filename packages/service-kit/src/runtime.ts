import type http from 'node:http';
import type { EntitySchema } from '@mikro-orm/postgresql';
import type { Express } from 'express';
import pino from 'pino';
import { Broker, type Topology } from './broker';
import {
  databaseOptionsOf,
  ensureDatabase,
  migrate,
  openDatabase,
  pingDatabase,
  type MigrationClass,
  type MikroORM,
} from './db';
import { mountHealth, type HealthOptions, type Probe } from './health';
import { IdempotencyCleanup, IdempotencyGuard } from './idempotency';
import { startProcessedMessagesPruning } from './processed-messages';
import { closeServer, listen } from './lifecycle';
import { createLogger, type Logger } from './logger';
import { createMetrics, registerOutboxGauges, startMetricsServer, type Metrics } from './metrics';
import { OutboxRelay } from './outbox';
import { sqlOf, type Sql } from './sql';

export interface RuntimeConfig {
  NODE_ENV: string;
  LOG_LEVEL: string;
  DATABASE_URL: string;
  DATABASE_LOCK_URL?: string;
  DATABASE_PREPARED_STATEMENTS?: boolean;
  AMQP_URL: string;
  AMQP_NAMESPACE: string;
  MIGRATE_ON_START: boolean;
  SHUTDOWN_TIMEOUT_MS: number;
}

export interface RuntimeOptions {
  service: string;
  config: RuntimeConfig;
  schema: string;
  entities: EntitySchema[];
  migrations: Array<{ name: string; class: MigrationClass }>;
  topology: Topology;
  /** Tests pass a destination to read log lines. */
  logDestination?: pino.DestinationStream;
  poolMax?: number;
  /** The service makes keyed changes: its schema has idempotency_keys (idempotencyMigrationSql). */
  idempotency?: boolean;
}

/** What every service holds: logger, metrics, database, broker and outbox relay, wired in that order. */
export interface Runtime {
  service: string;
  logger: Logger;
  metrics: Metrics;
  orm: MikroORM;
  /** Plain statements on the ORM's pool, for hot paths (sql.ts). */
  sql: Sql;
  broker: Broker;
  relay: OutboxRelay;
  /**
   * Idempotency-Key records in this service's schema (idempotency.ts); usable where the schema has
   * the table (idempotencyMigrationSql), whose cleanup runs when the options say `idempotency`.
   */
  idempotency: IdempotencyGuard;
  schema: string;
  isShuttingDown(): boolean;
  /** Health routes for this service; `extra` adds probes such as Redis. */
  mountHealth(app: Express, extra?: Record<string, Probe>, options?: HealthOptions): void;
  /** Serve the app (an express app or a plain listener) and, when `metricsPort` is given, `/metrics` on its own port. */
  serve(
    app: Express | http.RequestListener,
    port: number,
    metricsPort?: number,
  ): Promise<{ server: http.Server; metricsServer?: http.Server }>;
  /** Phase one: stop intake and wait for in-flight work. Phase two: close connections. */
  stop(beforeClose?: () => Promise<void>): Promise<void>;
}

export async function createRuntime(options: RuntimeOptions): Promise<Runtime> {
  const { config, schema } = options;
  const logger = createLogger(options.service, config.LOG_LEVEL, options.logDestination);
  const metrics = createMetrics(options.service);
  if (config.NODE_ENV !== 'production') await ensureDatabase(config.DATABASE_URL);
  const orm = await openDatabase({
    ...databaseOptionsOf(config),
    schema,
    entities: options.entities,
    migrations: options.migrations,
    logger,
    poolMax: options.poolMax,
  });
  if (config.MIGRATE_ON_START) {
    const applied = await migrate(orm, schema);
    if (applied.length) logger.info({ applied }, 'migrations applied');
  }
  const broker = new Broker({
    url: config.AMQP_URL,
    namespace: config.AMQP_NAMESPACE,
    logger,
    topology: options.topology,
  });
  broker.on('handled', (queue: string, outcome: string) => metrics.messagesConsumed.inc({ queue, outcome }));
  broker.on('consuming', (queue: string, active: boolean) =>
    metrics.consumerActive.set({ queue }, active ? 1 : 0),
  );
  await broker.start();
  const sql = sqlOf(orm);
  const relay = new OutboxRelay({ orm, sql, schema, broker, logger, metrics });
  relay.start();
  registerOutboxGauges(metrics, orm, schema);
  const idempotency = new IdempotencyGuard(orm, sql, schema);
  const cleanup = options.idempotency ? new IdempotencyCleanup(sql, schema, logger) : null;
  cleanup?.start();
  const pruning = startProcessedMessagesPruning(sql, schema, logger);

  let shuttingDown = false;
  let stopping: Promise<void> | null = null;
  const servers: http.Server[] = [];
  return {
    service: options.service,
    logger,
    metrics,
    orm,
    sql,
    broker,
    relay,
    idempotency,
    schema,
    isShuttingDown: () => shuttingDown,
    mountHealth(app, extra = {}, healthOptions = {}) {
      mountHealth(
        app,
        {
          postgres: () => pingDatabase(orm),
          rabbitmq: async () => {
            if (!broker.isConnected()) throw new Error('disconnected');
          },
          ...extra,
        },
        () => shuttingDown,
        (check, ok) => metrics.readiness.set({ check }, ok ? 1 : 0),
        healthOptions,
      );
    },
    async serve(app, port, metricsPort) {
      const server = await listen(app, port);
      servers.push(server);
      let metricsServer: http.Server | undefined;
      if (metricsPort !== undefined) {
        metricsServer = await startMetricsServer(metrics, metricsPort);
        servers.push(metricsServer);
      }
      return { server, metricsServer };
    },
    stop(beforeClose) {
      // Idempotent: a second call (a signal during shutdown, a test) waits for the first.
      stopping ??= (async () => {
        shuttingDown = true;
        const grace = Math.max(1_000, config.SHUTDOWN_TIMEOUT_MS - 2_000);
        await Promise.all(servers.map((s) => closeServer(s, grace)));
        await relay.stop();
        await cleanup?.stop();
        await pruning.stop();
        await beforeClose?.();
        await broker.close();
        await orm.close(true);
      })();
      return stopping;
    },
  };
}
