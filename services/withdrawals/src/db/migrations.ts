import { Migration } from '@mikro-orm/migrations';
import { kitMigrationSql } from '@seller-api/service-kit';

export const SCHEMA = 'withdrawals';

class Migration20261123Init extends Migration {
  override async up(): Promise<void> {
    for (const sql of kitMigrationSql(SCHEMA)) this.addSql(sql);
    // Double-entry journal: every entry's lines sum to zero; balances are sums of lines, never edited.
    this.addSql(`create table if not exists withdrawals.ledger_lines (
      id bigserial primary key,
      entry_id uuid not null,
      seller_id uuid not null,
      environment text not null check (environment in ('test', 'live')),
      account text not null,
      amount bigint not null,
      created_at timestamptz(3) not null default now()
    )`);
    this.addSql(
      `create index if not exists ledger_lines_seller_idx on withdrawals.ledger_lines (seller_id, environment, account)`,
    );
  }
}

export const migrations = [{ name: 'Migration20261123Init', class: Migration20261123Init }];
