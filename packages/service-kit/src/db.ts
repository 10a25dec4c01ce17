import { Migrator } from '@mikro-orm/migrations';
import { MikroORM, type EntityManager, type EntitySchema, type Options } from '@mikro-orm/postgresql';
import type { Migration } from '@mikro-orm/migrations';
import { Client } from 'pg';
import type { Logger } from './logger';
import { OutboxMessageSchema } from './outbox';
import {
  connectionSettings,
  lockConnectionConfig,
  pgConnections,
  rememberSettings,
  rowsOfResult,
  type PgClient,
  type PgStatement,
} from './pg-connections';

export type { MikroORM };
export type MigrationClass = new (...args: ConstructorParameters<typeof Migration>) => Migration;

export interface DatabaseOptions {
  url: string;
  /**
   * A direct address of the same database for the session-level advisory locks (migrate, and
   * withReplicaLock), when `url` goes through a pooler in transaction mode. Unset: `url`.
   */
  lockUrl?: string;
  /** false: the kit's statements are sent unnamed (sql.ts). Default true. */
  preparedStatements?: boolean;
  /** Each service owns one PostgreSQL schema; nobody else reads it. */
  schema: string;
  entities: EntitySchema[];
  migrations: Array<{ name: string; class: MigrationClass }>;
  poolMax?: number;
  logger: Logger;
}

/** Development convenience: create the database named in the URL if it is missing. */
export async function ensureDatabase(url: string): Promise<void> {
  const target = new URL(url);
  const name = decodeURIComponent(target.pathname.slice(1));
  if (!name) return;
  const admin = new URL(url);
  admin.pathname = '/postgres';
  const client = new Client({ connectionString: admin.toString() });
  await client.connect();
  try {
    const found = await client.query('select 1 from pg_database where datname = $1', [name]);
    if (found.rowCount === 0) {
      await client.query(`create database "${name.replace(/"/g, '""')}"`).catch((err: { code?: string }) => {
        // Another process created it first (42P04 duplicate_database, 23505 on the catalog).
        if (err.code !== '42P04' && err.code !== '23505') throw err;
      });
    }
  } finally {
    await client.end();
  }
}

export async function openDatabase(options: DatabaseOptions): Promise<MikroORM> {
  const config: Options = {
    clientUrl: options.url,
    schema: options.schema,
    entities: [OutboxMessageSchema, ...options.entities],
    extensions: [Migrator],
    migrations: {
      migrationsList: options.migrations,
      tableName: 'schema_migrations',
      transactional: true,
      allOrNothing: true,
      snapshot: false,
      silent: true,
    },
    discovery: { warnWhenNoEntities: false },
    pool: { min: 0, max: options.poolMax ?? 10, idleTimeoutMillis: 30_000 },
    // pg.Pool's options. Its connect timeout also bounds the wait for a free connection of a full pool.
    driverOptions: { application_name: options.schema, connectionTimeoutMillis: 5_000 },
    allowGlobalContext: false,
    ensureDatabase: false,
    forceUtcTimezone: true,
    debug: false,
    logger: (message) => options.logger.debug({ orm: message }, 'orm'),
  };
  const orm = await MikroORM.init(config);
  rememberSettings(orm, { lockUrl: options.lockUrl, preparedStatements: options.preparedStatements ?? true });
  return orm;
}

/** The database settings of a loaded configuration (config.ts, databaseEnv), as openDatabase takes them. */
export function databaseOptionsOf(config: {
  DATABASE_URL: string;
  DATABASE_LOCK_URL?: string;
  DATABASE_PREPARED_STATEMENTS?: boolean;
}): Pick<DatabaseOptions, 'url' | 'lockUrl' | 'preparedStatements'> {
  return {
    url: config.DATABASE_URL,
    lockUrl: config.DATABASE_LOCK_URL,
    preparedStatements: config.DATABASE_PREPARED_STATEMENTS,
  };
}

/** Apply pending migrations; safe to run on every start and from several replicas at once. */
export async function migrate(orm: MikroORM, schema: string): Promise<string[]> {
  // One migrator at a time per schema, across replicas: a transaction-scoped advisory lock would be
  // released too early, so take a connection-level lock on a dedicated connection while the migrator
  // runs on others. Behind a pooler in transaction mode a pooled connection is no session of its own:
  // the lock goes to the direct lock address then.
  const lockConnection = await openLockConnection(orm);
  const client = lockConnection.client;
  const lockKey = `migrate:${schema}`;
  const lock: PgStatement = { name: '', text: 'select pg_advisory_lock(hashtext($1))', values: [lockKey] };
  try {
    await client.query(lock);
    // A service's role owns its schema but may not create schemas (docs/deploy.md): create it only
    // when it is missing, as the shared development role does.
    const found = await client.query({
      name: '',
      text: 'select 1 from pg_namespace where nspname = $1',
      values: [schema],
    });
    if (rowsOfResult(found).length === 0) {
      await client.query(`create schema if not exists "${schema.replace(/"/g, '""')}"`);
    }
    const applied = await orm.migrator.up();
    return applied.map((m) => m.name);
  } finally {
    await client.query({ ...lock, text: 'select pg_advisory_unlock(hashtext($1))' }).catch(() => undefined);
    await lockConnection.close();
  }
}

/**
 * A connection for a session-level lock: one of the ORM's pool, or, with a lock address, a direct one
 * of its own, closed after (which ends its lock too).
 */
async function openLockConnection(orm: MikroORM): Promise<{ client: PgClient; close(): Promise<void> }> {
  if (connectionSettings(orm).lockUrl === undefined) {
    const connections = pgConnections(orm);
    const client = await connections.acquire();
    return { client, close: () => connections.release(client) };
  }
  const client = new Client(lockConnectionConfig(orm));
  // A connection lost while idle reports here; the next statement fails and says so.
  client.on('error', () => undefined);
  await client.connect();
  return { client, close: () => client.end().catch(() => undefined) };
}

export async function pingDatabase(orm: MikroORM): Promise<void> {
  await orm.em.getConnection().execute('select 1');
}

/**
 * `work` in a transaction: the caller's, when `em` is in one (a keyed request's, idempotency.ts: its
 * record must commit with the change), else one of its own on a fork.
 */
export function inTransaction<T>(em: EntityManager, work: (tx: EntityManager) => Promise<T>): Promise<T> {
  return em.getTransactionContext() ? em.transactional(work) : em.fork().transactional(work);
}

/**
 * The caller's transaction when `em` is in one, else a fork. A keyed request holds one
 * connection for its transaction; a fork inside it would take a second from the pool, and enough such
 * requests at once would each hold one and wait for another forever.
 */
export function callerOrFork(em: EntityManager): EntityManager {
  return em.getTransactionContext() ? em : em.fork();
}
