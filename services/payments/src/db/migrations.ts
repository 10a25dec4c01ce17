import { Migration } from '@mikro-orm/migrations';
import { kitMigrationSql } from '@seller-api/service-kit';

export const SCHEMA = 'payments';

class Migration20261123Init extends Migration {
  override async up(): Promise<void> {
    for (const sql of kitMigrationSql(SCHEMA)) this.addSql(sql);
  }
}

/** PIX charges: one transaction per order (unique order_id), found by its txid when the PSP reports. */
class Migration20261124Transactions extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table if not exists payments.transactions (
      id uuid primary key,
      order_id uuid not null,
      seller_id uuid not null,
      environment text not null check (environment in ('test', 'live')),
      seller_name text,
      status text not null check (status in ('CREATED', 'APPROVED', 'REFUNDED')),
      method text not null default 'PIX',
      txid text not null,
      copy_and_paste text not null,
      gross_amount bigint not null check (gross_amount > 0),
      fee_amount bigint not null check (fee_amount >= 0),
      net_amount bigint not null check (net_amount >= 0),
      expires_at timestamptz(3) not null,
      created_at timestamptz(3) not null default now(),
      approved_at timestamptz(3),
      refunded_at timestamptz(3),
      end_to_end_id text,
      debtor_name text,
      debtor_document text,
      check (fee_amount + net_amount = gross_amount)
    )`);
    // Concurrent requests for one order race on this index: one insert wins, the other reads it.
    this.addSql(
      `create unique index if not exists transactions_order_id_key on payments.transactions (order_id)`,
    );
    this.addSql(`create unique index if not exists transactions_txid_key on payments.transactions (txid)`);
  }
}

export const migrations = [
  { name: 'Migration20261123Init', class: Migration20261123Init },
  { name: 'Migration20261124Transactions', class: Migration20261124Transactions },
];
