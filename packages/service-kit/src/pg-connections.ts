import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { CompiledQuery, type Kysely } from 'kysely';
import type { ClientConfig, Pool, PoolClient } from 'pg';

/** A query's result; several, one per statement, for a simple query of several statements. */
export type PgResult = { rows: unknown[] } | Array<{ rows: unknown[] }>;

/** The rows of a result: those of its last statement for a simple query of several. */
export const rowsOfResult = (result: PgResult): unknown[] =>
  Array.isArray(result) ? (result[result.length - 1]?.rows ?? []) : result.rows;

/** A statement with parameters, sent prepared under `name` (unnamed when it is ''). */
export interface PgStatement {
  name: string;
  text: string;
  values: unknown[];
}

/** What the kit needs of a pg connection: a statement without parameters is a simple query. */
export interface PgClient {
  query(query: string | PgStatement): Promise<PgResult>;
}

export interface PgConnections {
  acquire(): Promise<PgClient>;
  /**
   * Gives back what `acquire` handed out; a transaction's connection stays with its transaction.
   * `broken`: the connection may be in an unknown state (a failed rollback), so it is closed instead.
   */
  release(client: PgClient, broken?: boolean): Promise<void>;
}

/**
 * The raw pg connections of the ORM: from its pool for `source` an ORM, or the one the transaction of
 * `source`, a transactional EntityManager, runs on. The only place that knows how MikroORM hands them
 * out. On MikroORM 7, with public APIs only: the PostgreSQL connection's `getNativeClient()` is its
 * `pg.Pool`, whose clients this lends; a transactional EntityManager's transaction context is a Kysely
 * transaction, bound to its connection, which runs a `CompiledQuery` there. Kysely sends the
 * statement's parameters but never a name: in a transaction, a statement is planned at every run.
 */
export function pgConnections(source: MikroORM | EntityManager): PgConnections {
  if ('em' in source) {
    const connection = source.em.getConnection();
    // Kept once had: after `orm.close()` it is ended and refuses, where asking again would reconnect.
    let pool: Promise<Pool> | undefined;
    return {
      acquire: async () => {
        // A failed first ask is not kept: the next acquire asks again.
        pool ??= connection.getNativeClient().catch((err: unknown) => {
          pool = undefined;
          throw err;
        });
        return (await pool).connect() as Promise<PgClient>;
      },
      release: async (client, broken) => {
        (client as unknown as PoolClient).release(broken === true ? true : undefined);
      },
    };
  }
  const trx = source.getTransactionContext<Kysely<unknown>>();
  if (!trx) throw new Error('the EntityManager is not in a transaction');
  const client: PgClient = {
    async query(query) {
      const compiled =
        typeof query === 'string' ? CompiledQuery.raw(query) : CompiledQuery.raw(query.text, query.values);
      return { rows: (await trx.executeQuery(compiled)).rows };
    },
  };
  return {
    acquire: async () => client,
    release: async () => undefined,
  };
}

/** How the ORM's connections are used beyond MikroORM's own options (openDatabase's). */
export interface ConnectionSettings {
  /** The direct address of the session-level advisory locks; unset, the ORM's own. */
  lockUrl?: string;
  /** false: the kit's statements are sent unnamed (sql.ts). */
  preparedStatements: boolean;
}

const settingsOf = new WeakMap<MikroORM, ConnectionSettings>();

export function rememberSettings(orm: MikroORM, settings: ConnectionSettings): void {
  settingsOf.set(orm, settings);
}

/** The settings openDatabase gave `orm`; an ORM opened otherwise gets the defaults. */
export function connectionSettings(orm: MikroORM): ConnectionSettings {
  return settingsOf.get(orm) ?? { preparedStatements: true };
}

/**
 * The settings of a connection of its own for a session-level advisory lock: the lock address when
 * there is one, else those the ORM's pool opens its connections with (MikroORM's public
 * `getConnectionOptions`), with the `driverOptions` openDatabase gives it (application name, connect
 * timeout) either way.
 */
export function lockConnectionConfig(orm: MikroORM): ClientConfig {
  const driverOptions = orm.config.get('driverOptions') as ClientConfig | undefined;
  const { lockUrl } = connectionSettings(orm);
  return {
    ...(lockUrl
      ? { connectionString: lockUrl }
      : (orm.em.getConnection().getConnectionOptions() as ClientConfig)),
    ...driverOptions,
    // The connection may idle for a long time: TCP keepalive lets a peer lost behind a partition or a
    // NAT be noticed in a minute rather than the OS's two hours, so its lock does not outlive it.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  };
}
