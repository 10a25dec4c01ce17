import { Migration } from '@mikro-orm/migrations';

export const SCHEMA = 'orders';

class Migration20261123Init extends Migration {
  override async up(): Promise<void> {
    // The kit's tables (its outbox.ts), written out: a migration never changes once run.
    this.addSql(`create table if not exists "orders".outbox (
      id uuid primary key,
      exchange text not null,
      routing_key text not null,
      payload jsonb not null,
      headers jsonb not null default '{}',
      trace_context jsonb,
      created_at timestamptz(3) not null default now()
    )`);
    this.addSql(`create index if not exists outbox_created_at_idx on "orders".outbox (created_at, id)`);
    this.addSql(`create table if not exists "orders".processed_messages (
      consumer text not null,
      message_id text not null,
      processed_at timestamptz(3) not null default now(),
      primary key (consumer, message_id)
    )`);
  }
}

class Migration20261123Orders extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table orders.products (
      id uuid primary key,
      seller_id uuid not null,
      environment text not null check (environment in ('test', 'live')),
      name text not null,
      price bigint not null check (price >= 0),
      images jsonb not null default '[]',
      type text not null check (type in ('PHYSICAL', 'DIGITAL')),
      commission_unit_amount bigint not null default 0,
      producer_name text,
      created_at timestamptz(3) not null
    )`);
    this.addSql(
      `create index products_seller_idx on orders.products (seller_id, environment, created_at desc, id desc)`,
    );
    this.addSql(`create table orders.affiliates (
      id uuid primary key,
      seller_id uuid not null,
      environment text not null,
      code text not null,
      name text not null,
      created_at timestamptz(3) not null,
      unique (seller_id, environment, code)
    )`);
    this.addSql(`create table orders.customers (
      id uuid primary key,
      seller_id uuid not null,
      environment text not null,
      tax_id text not null,
      tax_id_type text not null,
      name text not null,
      email text not null,
      phone text not null,
      address jsonb,
      created_at timestamptz(3) not null,
      updated_at timestamptz(3) not null,
      unique (seller_id, environment, tax_id)
    )`);
    this.addSql(`create table orders.orders (
      id uuid primary key,
      seller_id uuid not null,
      environment text not null,
      seller_name text,
      customer_id uuid not null references orders.customers (id),
      customer_name text not null,
      customer_email text not null,
      customer_phone text not null,
      customer_tax_id text not null,
      customer_tax_id_type text not null,
      address jsonb,
      address_text text,
      status text not null,
      method text,
      subtotal_amount bigint not null,
      shipping_amount bigint not null,
      discount_amount bigint not null,
      commission_amount bigint not null,
      gross_amount bigint not null,
      fee_amount bigint not null,
      net_amount bigint not null,
      postback_url text,
      affiliate_name text,
      producer_name text,
      debtor_name text,
      debtor_document text,
      transaction_id uuid not null,
      pix_txid text not null,
      pix_copy_and_paste text not null,
      expires_at timestamptz(3) not null,
      created_at timestamptz(3) not null,
      paid_at timestamptz(3),
      tracking_code text,
      shipping_status text,
      estimated_delivery_date date,
      delivered_at timestamptz(3),
      signed_by text
    )`);
    // Keyset pagination, newest first, with and without the filters the list offers.
    this.addSql(
      `create index orders_list_idx on orders.orders (seller_id, environment, created_at desc, id desc)`,
    );
    this.addSql(
      `create index orders_status_idx on orders.orders (seller_id, environment, status, created_at desc, id desc)`,
    );
    this.addSql(
      `create index orders_shipping_idx on orders.orders (seller_id, environment, shipping_status, created_at desc, id desc)`,
    );
    this.addSql(`create table orders.order_items (
      id uuid primary key,
      order_id uuid not null references orders.orders (id) deferrable initially deferred,
      position int not null,
      product_id uuid not null,
      product_type text not null,
      name text not null,
      images jsonb not null,
      price bigint not null,
      quantity int not null check (quantity >= 1),
      line_total_amount bigint not null,
      commission_unit_amount bigint not null,
      commission_total_amount bigint not null,
      tracking_code text,
      shipping_status text,
      shipped_at timestamptz(3),
      delivered_at timestamptz(3),
      unique (order_id, position)
    )`);
  }
}

class Migration20261125ChargeVersion extends Migration {
  override async up(): Promise<void> {
    // The version of the money state last mirrored from payments: older messages are ignored.
    this.addSql(`alter table orders.orders add column charge_version int not null default 0`);
  }
}

class Migration20261202TraceContext extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "orders".outbox add column if not exists trace_context jsonb`);
  }
}

/**
 * Idempotency-Key answers, stored in the transaction of the change they guard (the kit's
 * idempotency.ts, docs/idempotency.md); kept 24 hours.
 */
class Migration20261207IdempotencyKeys extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table orders.idempotency_keys (
      scope text not null,
      key text not null,
      fingerprint text not null,
      status smallint not null,
      body text not null,
      created_at timestamptz(3) not null default now(),
      primary key (scope, key)
    )`);
    this.addSql(`create index idempotency_keys_created_at_idx on orders.idempotency_keys (created_at)`);
  }
}

/**
 * Indexes of the list's searches and of the summary (docs/orders.md). The e-mail is searched
 * case-insensitively, so its index holds it lowercased. The summary reads what it counts from indexes
 * alone: the creation index carries the status and replaces the list's index, which had the same key
 * (a change of status writes new index entries already, orders_status_idx holding it, so carrying it
 * costs a write nothing more); the payment index, of paid orders only, carries the amounts. On a large
 * table, build them beforehand with `create index concurrently` under these names (docs/deploy.md):
 * this migration then leaves them alone, and no order waits for a build.
 */
class Migration20261216SearchAndSummary extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create index if not exists orders_customer_email_idx on orders.orders (seller_id, environment, lower(customer_email), created_at desc, id desc)`,
    );
    this.addSql(
      `create index if not exists orders_customer_tax_id_idx on orders.orders (seller_id, environment, customer_tax_id, created_at desc, id desc)`,
    );
    this.addSql(
      `create index if not exists orders_created_idx on orders.orders (seller_id, environment, created_at desc, id desc) include (status)`,
    );
    this.addSql(`drop index if exists orders.orders_list_idx`);
    this.addSql(
      `create index if not exists orders_paid_idx on orders.orders (seller_id, environment, paid_at) include (gross_amount, fee_amount, net_amount) where paid_at is not null`,
    );
  }
}

/**
 * The latest refund of the order as payments reports it (domain/order-status.ts): PROCESSING at the
 * PSP, REFUNDED or FAILED with the PSP's reason, shown in the order detail (docs/orders.md, "Refund an
 * order"). Nullable: an order never refunded has none, and a running version of the previous release
 * writes orders without these columns. No default and no check, so adding them changes the catalogue
 * only (a check would scan the whole table under its exclusive lock); the status is checked by the
 * contract it comes from.
 */
class Migration20261218RefundState extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table orders.orders
      add column refund_status text,
      add column refund_attempt int,
      add column refund_amount bigint,
      add column refund_requested_at timestamptz(3),
      add column refund_updated_at timestamptz(3),
      add column refund_failure_reason text`);
  }
}

/**
 * The QR image of the order's PIX code, as payments rendered it when the charge was made: the order
 * detail shows it while the charge can be paid (docs/orders.md, "Read an order") without asking
 * payments or rendering a PNG per read. Nullable and without a default, so adding it changes the
 * catalogue only; orders stored before it (or by a running previous release) have none.
 */
class Migration20261228PixQrImage extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table orders.orders add column pix_qr_code_image_base64 text`);
  }
}

/**
 * Due-date charges (docs/pix.md, "Due-date charges"): the terms and the dates they give, when
 * order.overdue was queued (jobs/overdue.ts), and what the payment paid (its amount, day and
 * components, as payments reports it). Nullable, without defaults: adding them changes the catalogue
 * only, and a running previous release writes immediate orders without them. The overdue job's index
 * holds only the due-date orders still waiting for their order.overdue; on a large table, build it
 * beforehand with `create index concurrently` under this name (docs/deploy.md), as for
 * Migration20261216SearchAndSummary.
 */
class Migration20270105DueDate extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table orders.orders
      add column due_date_terms jsonb,
      add column effective_due_date date,
      add column last_payable_date date,
      add column overdue_notified_at timestamptz(3),
      add column amount_paid jsonb`);
    this.addSql(
      `create index if not exists orders_overdue_idx on orders.orders (effective_due_date) where effective_due_date is not null and overdue_notified_at is null and status = 'PENDING'`,
    );
  }
}

/**
 * The consumers' records of handled messages go after PROCESSED_MESSAGES_RETENTION_DAYS (the kit's
 * processed-messages.ts), found by this index: BRIN, since rows arrive in time order, so it is a few
 * pages that the consumers' writes barely touch. Building it reads the table once, holding writes
 * meanwhile: on a large table build it beforehand with `create index concurrently` under this name
 * (docs/deploy.md).
 */
class Migration20270106ProcessedMessagesByTime extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create index if not exists processed_messages_processed_at_idx on "orders".processed_messages using brin (processed_at)`,
    );
  }
}

export const migrations = [
  { name: 'Migration20261123Init', class: Migration20261123Init },
  { name: 'Migration20261123Orders', class: Migration20261123Orders },
  { name: 'Migration20261125ChargeVersion', class: Migration20261125ChargeVersion },
  { name: 'Migration20261202TraceContext', class: Migration20261202TraceContext },
  { name: 'Migration20261207IdempotencyKeys', class: Migration20261207IdempotencyKeys },
  { name: 'Migration20261216SearchAndSummary', class: Migration20261216SearchAndSummary },
  { name: 'Migration20261218RefundState', class: Migration20261218RefundState },
  { name: 'Migration20261228PixQrImage', class: Migration20261228PixQrImage },
  { name: 'Migration20270105DueDate', class: Migration20270105DueDate },
  { name: 'Migration20270106ProcessedMessagesByTime', class: Migration20270106ProcessedMessagesByTime },
];
