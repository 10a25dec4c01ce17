import { sqlOf, type Sql } from '@seller-api/service-kit';
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
