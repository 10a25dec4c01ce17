import { Migration } from '@mikro-orm/migrations';

export const SCHEMA = 'gateway';

class Migration20261123Init extends Migration {
  override async up(): Promise<void> {
    // The kit's tables (its outbox.ts), written out: a migration never changes once run.
    this.addSql(`create table if not exists "gateway".outbox (
      id uuid primary key,
      exchange text not null,
      routing_key text not null,
      payload jsonb not null,
      headers jsonb not null default '{}',
      trace_context jsonb,
      created_at timestamptz(3) not null default now()
    )`);
    this.addSql(`create index if not exists outbox_created_at_idx on "gateway".outbox (created_at, id)`);
    this.addSql(`create table if not exists "gateway".processed_messages (
      consumer text not null,
      message_id text not null,
      processed_at timestamptz(3) not null default now(),
      primary key (consumer, message_id)
    )`);
    this.addSql(`create table if not exists gateway.sellers (
      id uuid primary key,
      name text not null,
      status text not null default 'ACTIVE' check (status in ('ACTIVE', 'SUSPENDED')),
      created_at timestamptz(3) not null default now()
    )`);
    this.addSql(`create table if not exists gateway.users (
      id uuid primary key,
      email text not null,
      role text not null check (role in ('seller', 'operator')),
      seller_id uuid references gateway.sellers (id),
      password_hash text,
      created_at timestamptz(3) not null default now(),
      check ((role = 'seller') = (seller_id is not null))
    )`);
    this.addSql(`create unique index if not exists users_email_key on gateway.users (lower(email))`);
    this.addSql(`create table if not exists gateway.api_keys (
      id uuid primary key,
      user_id uuid not null references gateway.users (id),
      environment text not null check (environment in ('test', 'live')),
      key_hash char(64) not null,
      prefix text not null,
      last4 char(4) not null,
      label text,
      created_at timestamptz(3) not null default now(),
      revoked_at timestamptz(3)
    )`);
    this.addSql(`create unique index if not exists api_keys_hash_key on gateway.api_keys (key_hash)`);
    // The database itself guarantees one active key per user and environment.
    this
      .addSql(`create unique index if not exists api_keys_one_active on gateway.api_keys (user_id, environment)
      where revoked_at is null`);
  }
}

class Migration20261202TraceContext extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "gateway".outbox add column if not exists trace_context jsonb`);
  }
}

/**
 * The consumers' records of handled messages go after PROCESSED_MESSAGES_RETENTION_DAYS (the kit's
 * processed-messages.ts), found by this index: BRIN, since rows arrive in time order, so it is a few
 * pages that the consumers' writes barely touch. Building it reads the table once, holding writes
 * meanwhile: on a large table build it beforehand with `create index concurrently` under this name
 * (docs/deploy.md).
 */
class Migration20261221ProcessedMessagesByTime extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create index if not exists processed_messages_processed_at_idx on "gateway".processed_messages using brin (processed_at)`,
    );
  }
}

export const migrations = [
  { name: 'Migration20261123Init', class: Migration20261123Init },
  { name: 'Migration20261202TraceContext', class: Migration20261202TraceContext },
  { name: 'Migration20261221ProcessedMessagesByTime', class: Migration20261221ProcessedMessagesByTime },
];
