import { Migration } from '@mikro-orm/migrations';
import { IdempotencyCleanup, createLogger, sqlOf, type MikroORM } from '@seller-api/service-kit';
import { openMigrated } from '../support/database';
import { testEnv } from '../support/env';

const SCHEMA = 'kit_idempotency_test';

class Init extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table ${SCHEMA}.idempotency_keys (
      scope text not null, key text not null, fingerprint text not null, status smallint not null,
      body text not null, created_at timestamptz(3) not null default now(), primary key (scope, key))`);
  }
}

const logger = createLogger('idempotency-cleanup-test', 'silent');
let orm: MikroORM;

beforeAll(async () => {
  orm = await openMigrated(testEnv(), {
    schema: SCHEMA,
    entities: [],
    migrations: [{ name: 'Init', class: Init }],
    logger,
  });
});
afterAll(() => orm.close(true));

it('deletes the answers older than 24 hours, in batches, and keeps the younger ones', async () => {
  const sql = sqlOf(orm);
  await sql.query(`truncate ${SCHEMA}.idempotency_keys`);
  await sql.query(
    `insert into ${SCHEMA}.idempotency_keys (scope, key, fingerprint, status, body, created_at)
     select 's', 'old-' || i, 'f', 201, '{}', now() - interval '25 hours' from generate_series(1, 7) i
     union all
     select 's', 'new-' || i, 'f', 201, '{}', now() - interval '23 hours' from generate_series(1, 3) i`,
  );
  const cleanup = new IdempotencyCleanup(sql, SCHEMA, logger);
  expect(await cleanup.sweep(2)).toBe(7);
  const left = await sql.query<{ key: string }>(`select key from ${SCHEMA}.idempotency_keys order by key`);
  expect(left.map((r) => r.key)).toEqual(['new-1', 'new-2', 'new-3']);
});
