import { createHash } from 'node:crypto';
import type { EntitySchema } from '@mikro-orm/core';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { connectionSettings, pgConnections, rowsOfResult, type PgStatement } from './pg-connections';
import { WriteBatch, type WriteBatchOptions } from './write-batch';

/**
 * Parameterised statements on a raw connection of the ORM's own pool, for hot paths: no query
 * builder and no entity mapping, and pg sends a statement with its parameters in one write (the
 * ORM's `execute` inlines them into a simple query, built on every call).
 */
export interface Sql {
  query<R extends object = Record<string, unknown>>(
    text: string,
    values?: unknown[],
    options?: QueryOptions,
  ): Promise<R[]>;
  /**
   * A transaction on one connection. `opening` (a statement without parameters) travels with the
   * BEGIN in one round trip, and its rows are handed to `work`, which may send more statements. It
   * commits when `work` resolves and rolls back when it throws.
   */
  transaction<R extends object, T>(
    opening: string,
    work: (rows: R[], query: SqlQuery) => Promise<T>,
  ): Promise<T>;
  /** `"schema"."table"` and the columns of an entity, in its properties' order. */
  table(entity: EntitySchema<object> | string): TableOf;
}

export interface QueryOptions {
  /**
   * Planned at every run (sent unnamed) rather than prepared. A prepared statement keeps the plan
   * PostgreSQL settles on after its first five runs for the connection's life: for a join with a
   * table that grows from nothing (the webhooks a dispatcher looks up, say), a plan made while it was
   * small reads all of it once it is large.
   */
  planEachRun?: boolean;
}

export type SqlQuery = <R extends object = Record<string, unknown>>(
  text: string,
  values?: unknown[],
) => Promise<R[]>;

export interface TableOf {
  name: string;
  /** [property, column] pairs of the entity's stored scalar properties. */
  columns: Array<[string, string]>;
  /** The quoted column list, for statements. */
  columnList: string;
}

// Statements with parameters run prepared, named after their text: PostgreSQL parses and plans a hot
// statement (a batch insert of several CTEs, say) once per connection instead of on every call. Texts
// are fixed per call site; past this many, a text (one built with a varying shape) runs unnamed, so a
// connection never holds an unbounded number of prepared statements. A statement's result columns
// must be named, never `*`: a prepared statement whose result type changes under it (a migration of a
// newer release adding a column) fails until its connection is replaced. Behind PgBouncer in
// transaction mode this needs its prepared statement support (1.21 and later, max_prepared_statements
// at least MAX_NAMED); before it, DATABASE_PREPARED_STATEMENTS=false sends every statement unnamed
// (docs/deploy.md, "PgBouncer").
const MAX_NAMED = 200;
const statementNames = new Map<string, string>();

function statement(
  text: string,
  values: unknown[],
  named: boolean,
  options?: QueryOptions,
): string | PgStatement {
  if (values.length === 0) return text;
  if (!named || options?.planEachRun) return { name: '', text, values };
  let name = statementNames.get(text);
  if (name === undefined) {
    if (statementNames.size >= MAX_NAMED) return { name: '', text, values };
    name = `sql_${createHash('sha256').update(text).digest('hex').slice(0, 32)}`;
    statementNames.set(text, name);
  }
  return { name, text, values };
}

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

export function sqlOf(orm: MikroORM): Sql {
  const connections = pgConnections(orm);
  const named = connectionSettings(orm).preparedStatements;
  const defaultSchema = orm.config.get('schema');
  const tables = new Map<string, TableOf>();
  return {
    async query<R extends object>(
      text: string,
      values: unknown[] = [],
      options?: QueryOptions,
    ): Promise<R[]> {
      const connection = await connections.acquire();
      try {
        return rowsOfResult(await connection.query(statement(text, values, named, options))) as R[];
      } finally {
        await connections.release(connection);
      }
    },
    async transaction<R extends object, T>(
      opening: string,
      work: (rows: R[], query: SqlQuery) => Promise<T>,
    ): Promise<T> {
      const connection = await connections.acquire();
      const query: SqlQuery = async <Q extends object>(text: string, values: unknown[] = []) =>
        rowsOfResult(await connection.query(statement(text, values, named))) as Q[];
      let broken = false;
      try {
        // No parameters, so pg sends a simple query, which may hold several statements. If the
        // opening statement fails, the transaction it opened is rolled back like any other failure.
        const value = await work((await query(`begin; ${opening}`)) as R[], query);
        await query('commit');
        return value;
      } catch (err) {
        // A connection that cannot roll back may still be inside the transaction: it is closed rather
        // than given back to the pool.
        await connection.query('rollback').catch(() => {
          broken = true;
        });
        throw err;
      } finally {
        await connections.release(connection, broken);
      }
    },
    table(entity) {
      const name = typeof entity === 'string' ? entity : entity.meta.className;
      let found = tables.get(name);
      if (!found) {
        const meta = orm.getMetadata().getByClassName(name, false);
        if (!meta) throw new Error(`unknown entity ${name}`);
        const schema = meta.schema && meta.schema !== '*' ? meta.schema : defaultSchema;
        const columns = meta.props
          .filter((p) => p.kind === 'scalar' && p.persist !== false && p.fieldNames?.length === 1)
          .map((p): [string, string] => [p.name, p.fieldNames[0] as string]);
        found = {
          name: schema ? `${quote(schema)}.${quote(meta.tableName)}` : quote(meta.tableName),
          columns,
          columnList: columns.map(([, column]) => quote(column)).join(', '),
        };
        tables.set(name, found);
      }
      return found;
    },
  };
}

/**
 * `sql`'s statements on the connection of the ORM transaction `tx` is in: a raw-SQL path and ORM
 * code in one transaction (an Idempotency-Key's record with the change it guards, idempotency.ts).
 */
export function sqlInTransaction(sql: Sql, tx: EntityManager): Sql {
  const connections = pgConnections(tx);
  // Kysely, which runs the ORM transaction's statements, sends them unnamed whatever the name.
  const query: SqlQuery = async <R extends object>(text: string, values: unknown[] = []) =>
    rowsOfResult(await (await connections.acquire()).query(statement(text, values, false))) as R[];
  return {
    query: (text, values) => query(text, values ?? []).then((rows) => rows as never),
    transaction: async (opening, work) => work((await query(opening)) as never, query),
    table: (entity) => sql.table(entity),
  };
}

/** Rows of one entity for `insertTogether`; made by `rowsOf`, which checks them against the entity. */
export interface InsertRows {
  entityName: string;
  rows: object[];
}

/**
 * `Computed` names the properties the rows leave out because the statement computes their columns
 * (insertPart's `computed`).
 */
export function rowsOf<T extends object, Computed extends keyof T = never>(
  entity: EntitySchema<T>,
  rows: Array<Omit<T, Computed>>,
): InsertRows {
  return { entityName: entity.meta.className, rows };
}

/** A row as a JSON object keyed by column, the shape `json_populate_recordset` reads. */
function rowJson(table: TableOf, row: object): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const values = row as Record<string, unknown>;
  for (const [property, column] of table.columns) {
    const value = values[property];
    out[column] = value instanceof Date ? value.toISOString() : (value ?? null);
  }
  return out;
}

/** An INSERT of one entity's rows for a statement of CTEs, and the JSON parameter it reads. */
export interface InsertPart {
  text: string;
  value: string;
}

/**
 * `insert into <table> (<columns>) select ... from json_populate_recordset(...) r`, reading the rows
 * from parameter `$param` as one JSON array, so the table's own column types convert them and the
 * text depends only on the entity: any number of rows is the same statement. `computed` gives the SQL
 * of columns the rows do not carry, over the record `r` (a key a CTE of the same statement returns).
 * `json`, not `jsonb`: the text is read once, without building a binary document that sorts each
 * object's keys first (a fifth less time for a batch of order rows, measured).
 */
export function insertPart(
  sql: Sql,
  insert: InsertRows,
  param: number,
  computed: Record<string, string> = {},
): InsertPart {
  const table = sql.table(insert.entityName);
  return {
    text: insertText(sql, table, param, computed),
    value: JSON.stringify(insert.rows.map((row) => rowJson(table, row))),
  };
}

// The texts of insertPart, made once per Sql (a table's name depends on its ORM's schema) rather
// than for every batch: they depend only on the entity, the parameter and the computed columns.
const insertTexts = new WeakMap<Sql, Map<string, string>>();

function insertText(sql: Sql, table: TableOf, param: number, computed: Record<string, string>): string {
  let texts = insertTexts.get(sql);
  if (!texts) insertTexts.set(sql, (texts = new Map()));
  const key = `${table.name} ${param} ${JSON.stringify(computed)}`;
  let text = texts.get(key);
  if (text === undefined) {
    const select = table.columns.map(([, column]) => computed[column] ?? `r.${quote(column)}`).join(', ');
    text = `insert into ${table.name} (${table.columnList}) select ${select} from json_populate_recordset(null::${table.name}, $${param}::json) r`;
    texts.set(key, text);
  }
  return text;
}

/**
 * Inserts rows of several entities (outbox messages among them) in one statement, as data-modifying
 * CTEs (insertPart): atomic on its own, without a transaction around it, in one round trip instead of
 * a BEGIN, one INSERT per entity and a COMMIT. The caller wakes the outbox relay afterwards.
 */
export async function insertTogether(sql: Sql, inserts: InsertRows[]): Promise<void> {
  const parts = inserts
    .filter((insert) => insert.rows.length > 0)
    .map((insert, i) => insertPart(sql, insert, i + 1));
  const main = parts.pop();
  if (!main) return;
  const text = parts.map((part, i) => `w${i} as (${part.text})`);
  await sql.query(text.length ? `with ${text.join(', ')} ${main.text}` : main.text, [
    ...parts.map((part) => part.value),
    main.value,
  ]);
}

/**
 * Group-committed inserts (WriteBatch): `rowsOfBatch` turns the items of a batch into their rows, and
 * the batch is written by one `insertTogether`.
 */
export function insertBatch<I>(
  sql: Sql,
  rowsOfBatch: (items: I[]) => InsertRows[],
  options?: WriteBatchOptions,
): WriteBatch<I, void> {
  return new WriteBatch(async (items) => {
    await insertTogether(sql, rowsOfBatch(items));
    return items.map(() => undefined);
  }, options);
}

/**
 * Deletes the rows of `table` (schema-qualified and quoted as needed) that match `where` (its
 * parameters `$1`... are `values`), `batch` rows per statement, so that no statement holds many locks
 * or runs long; callers running it together share the work (SKIP LOCKED). Rows are named by table and
 * position, which stays right on a partitioned table. Answers how many went.
 */
export async function deleteInBatches(
  sql: Sql,
  table: string,
  where: string,
  values: unknown[],
  batch: number,
): Promise<number> {
  let total = 0;
  for (;;) {
    const rows = await sql.query<{ n: number }>(
      `with gone as (
         delete from ${table} where (tableoid, ctid) in (
           select tableoid, ctid from ${table} where ${where} limit $${values.length + 1} for update skip locked)
         returning 1)
       select count(*)::int as n from gone`,
      [...values, batch],
    );
    const n = rows[0]?.n ?? 0;
    total += n;
    if (n < batch) return total;
  }
}
