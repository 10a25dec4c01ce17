import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';

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
  /** Gives back what `acquire` handed out; a transaction's connection stays with its transaction. */
  release(client: PgClient): Promise<void>;
}

/** The knex client MikroORM 6 drives its pool with; a knex transaction has one bound to its connection. */
interface KnexClient {
  acquireConnection(): Promise<PgClient>;
  releaseConnection(connection: PgClient): Promise<unknown>;
}

/**
 * The raw pg connections of the ORM: from its pool for `source` an ORM, or the one the transaction of
 * `source`, a transactional EntityManager, runs on. The only place that knows how MikroORM hands them
 * out. On MikroORM 6 it relies on knex, which is not a documented API of either: the knex instance
 * (`getKnex()`, public) has a `client` whose `acquireConnection()` and `releaseConnection()` lend the
 * pool's pg clients, and a knex transaction (the ORM's transaction context) has a client whose
 * `acquireConnection()` returns the transaction's own connection.
 */
export function pgConnections(source: MikroORM | EntityManager): PgConnections {
  if ('em' in source) {
    const client = source.em.getConnection().getKnex().client as KnexClient;
    return {
      acquire: () => client.acquireConnection(),
      release: async (connection) => {
        await client.releaseConnection(connection);
      },
    };
  }
  const trx = source.getTransactionContext<{ client: KnexClient }>();
  if (!trx) throw new Error('the EntityManager is not in a transaction');
  return {
    acquire: () => trx.client.acquireConnection(),
    release: async () => undefined,
  };
}
