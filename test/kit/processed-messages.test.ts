import { Migration } from '@mikro-orm/migrations';
import { kitMigrationSql, pruneProcessedMessages, sqlOf } from '@seller-api/service-kit';
import { useDatabase } from '../support/database';

const SCHEMA = 'kit_processed_messages_test';

class Init extends Migration {
  override async up(): Promise<void> {
    for (const statement of kitMigrationSql(SCHEMA)) this.addSql(statement);
    this.addSql(
      `create index processed_messages_processed_at_idx on ${SCHEMA}.processed_messages using brin (processed_at)`,
    );
  }
}

const db = useDatabase({ schema: SCHEMA, migrations: [{ name: 'Init', class: Init }], fresh: true });

it('deletes the records older than 30 days, in batches, and keeps the younger ones', async () => {
  const sql = sqlOf(db.orm);
  await sql.query(
    `insert into ${SCHEMA}.processed_messages (consumer, message_id, processed_at)
     select 'ledger', 'old-' || i, now() - interval '31 days' from generate_series(1, 7) i
     union all
     select 'ledger', 'new-' || i, now() - interval '29 days' from generate_series(1, 3) i`,
  );
  expect(await pruneProcessedMessages(sql, SCHEMA, 2)).toBe(7);
  const left = await sql.query<{ message_id: string }>(
    `select message_id from ${SCHEMA}.processed_messages order by message_id`,
  );
  expect(left.map((r) => r.message_id)).toEqual(['new-1', 'new-2', 'new-3']);
  expect(await pruneProcessedMessages(sql, SCHEMA, 2)).toBe(0);
});
