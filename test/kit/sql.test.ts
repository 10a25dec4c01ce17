import { sqlInTransaction, sqlOf, type Sql } from '@seller-api/service-kit';
import { useDatabase } from '../support/database';

/*
 * The kit's statements run prepared, named after their text, unless a call asks for a plan at every
 * run (QueryOptions.planEachRun).
 */
const SCHEMA = 'kit_sql_test';
// One connection: the prepared statements listed are those of the connection the statements ran on.
const db = useDatabase({ schema: SCHEMA, poolMax: 1 });
let sql: Sql;
beforeAll(() => {
  sql = sqlOf(db.orm);
});

const prepared = async () =>
  (await sql.query<{ statement: string }>('select statement from pg_prepared_statements')).map(
    (r) => r.statement,
  );

test('a statement with parameters is prepared once per connection, one planned at every run is not', async () => {
  const named = `select $1::int + 1 as n /* prepared ${Date.now()} */`;
  const unnamed = `select $1::int + 2 as n /* unnamed ${Date.now()} */`;
  expect(await sql.query<{ n: number }>(named, [1])).toEqual([{ n: 2 }]);
  expect(await sql.query<{ n: number }>(unnamed, [1], { planEachRun: true })).toEqual([{ n: 3 }]);
  const statements = await prepared();
  expect(statements).toContain(named);
  expect(statements).not.toContain(unnamed);
});

test('sqlInTransaction runs on the connection of the ORM transaction, not one of the pool', async () => {
  // The pool's one connection is the transaction's: a statement that took one from the pool would wait.
  const seen = await db.orm.em.fork().transactional(async (tx) => {
    await tx.execute(`select set_config('kit_sql_test.mark', 'in-tx', true)`);
    const inTx = sqlInTransaction(sql, tx);
    const [row] = await inTx.query<{ mark: string; n: number }>(
      `select current_setting('kit_sql_test.mark', true) as mark, $1::int as n`,
      [7],
    );
    return row;
  });
  expect(seen).toEqual({ mark: 'in-tx', n: 7 });
  // Transaction-local: gone with the commit, so the statement above ran inside it.
  const [after] = await sql.query<{ mark: string | null }>(
    `select nullif(current_setting('kit_sql_test.mark', true), '') as mark`,
  );
  expect(after?.mark).toBeNull();
});

test('sqlInTransaction refuses an EntityManager outside a transaction', () => {
  expect(() => sqlInTransaction(sql, db.orm.em.fork())).toThrow(/not in a transaction/);
});
