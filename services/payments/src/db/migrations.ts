import { Migration } from '@mikro-orm/migrations';

export const SCHEMA = 'payments';

class Migration20261123Init extends Migration {
  override async up(): Promise<void> {
    // The kit's tables (its outbox.ts), written out: a migration never changes once run.
    this.addSql(`create table if not exists "payments".outbox (
      id uuid primary key,
      exchange text not null,
      routing_key text not null,
      payload jsonb not null,
      headers jsonb not null default '{}',
      trace_context jsonb,
      created_at timestamptz(3) not null default now()
    )`);
    this.addSql(`create index if not exists outbox_created_at_idx on "payments".outbox (created_at, id)`);
    this.addSql(`create table if not exists "payments".processed_messages (
      consumer text not null,
      message_id text not null,
      processed_at timestamptz(3) not null default now(),
      primary key (consumer, message_id)
    )`);
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

class Migration20261125Lifecycle extends Migration {
  override async up(): Promise<void> {
    // The money state of the order, decided here and only here, on the charge row (docs/payments.md).
    this.addSql(`alter table payments.transactions
      add column charge_status text not null default 'PENDING'
        check (charge_status in ('PENDING', 'PAID', 'EXPIRED', 'CANCELLED', 'REFUNDED', 'MED', 'CHARGEBACK')),
      add column version int not null default 0,
      add column status_changed_at timestamptz(3)`);
    this.addSql(
      `create index transactions_due_idx on payments.transactions (expires_at) where charge_status = 'PENDING'`,
    );
    // Every payment the PSP reported, once per end-to-end id: a notification seen twice changes nothing.
    this.addSql(`create table payments.psp_payments (
      end_to_end_id text primary key,
      txid text not null,
      transaction_id uuid references payments.transactions (id),
      amount bigint not null,
      paid_at timestamptz(3) not null,
      received_at timestamptz(3) not null default now(),
      outcome text not null check (outcome in ('applied', 'late', 'refunded', 'amount_mismatch', 'unknown_txid', 'duplicate_charge')),
      detail text
    )`);
    this.addSql(
      `create index psp_payments_review_idx on payments.psp_payments (received_at) where outcome in ('amount_mismatch', 'unknown_txid', 'late')`,
    );
  }
}

class Migration20261202TraceContext extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "payments".outbox add column if not exists trace_context jsonb`);
  }
}

/**
 * The ledger's reconciliation pages through the charges that were ever paid, by their last change
 * (db/paid-charges.ts). On a large table, create the index beforehand with `create index
 * concurrently` under this name: `if not exists` then leaves it alone and no write waits for the build
 * (a concurrent build that failed leaves an INVALID index of this name: drop it before deploying).
 */
class Migration20261206PaidChargeChanges extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create index if not exists transactions_paid_changes_idx
      on payments.transactions (environment, status_changed_at, order_id)
      where charge_status in ('PAID', 'MED', 'REFUNDED', 'CHARGEBACK')`);
  }
}

/**
 * Idempotency-Key answers, stored in the transaction of the change they guard (the kit's
 * idempotency.ts, docs/idempotency.md); kept 24 hours.
 */
class Migration20261207IdempotencyKeys extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table payments.idempotency_keys (
      scope text not null,
      key text not null,
      fingerprint text not null,
      status smallint not null,
      body text not null,
      created_at timestamptz(3) not null default now(),
      primary key (scope, key)
    )`);
    this.addSql(`create index idempotency_keys_created_at_idx on payments.idempotency_keys (created_at)`);
  }
}

/**
 * When a seller's refund was last asked of the PSP, committed before the PSP is called: a charge still
 * PAID with this set may have been refunded at the PSP (its answer was lost), so the ledger's sweep of
 * refund holds keeps the hold (docs/finance.md "Refunds").
 */
class Migration20261208RefundAsked extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table payments.transactions add column if not exists refund_asked_at timestamptz(3)`);
  }
}

/**
 * Where a seller's refund stands at the PSP (docs/payments.md, "Refunds"): a refund the PSP accepted
 * (`EM_PROCESSAMENTO`) keeps the charge PAID until the PSP reports its end; a refund it did not make
 * (`NAO_REALIZADO`) may be asked again, as the next attempt with its own refund id. `refund_check_at`
 * schedules the next look-up of a refund whose end has not arrived (jobs/refund-checks.ts). A payment
 * notified without a txid (paid to the key, not to a charge) is kept for an operator.
 */
class Migration20261210RefundOutcomes extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table payments.transactions
      add column if not exists refund_status text,
      add column if not exists refund_attempt integer not null default 0,
      add column if not exists refund_requested_at timestamptz(3),
      add column if not exists refund_updated_at timestamptz(3),
      add column if not exists refund_reason text,
      add column if not exists refund_hold_seq bigint not null default 0,
      add column if not exists refund_check_at timestamptz(3),
      add column if not exists refund_checks integer not null default 0`);
    this.addSql(`create index if not exists transactions_refund_check_idx
      on payments.transactions (refund_check_at) where refund_check_at is not null`);
    // Refunds an earlier release asked whose answer was lost: looked up from now on.
    this.addSql(`update payments.transactions set refund_check_at = now()
      where charge_status = 'PAID' and refund_asked_at is not null and refund_status is null`);
    this.addSql(`alter table payments.psp_payments alter column txid drop not null`);
  }
}

/**
 * The Idempotency-Key of the request that asked the current refund of the PSP: a retry of that request
 * whose first answer was lost with its transaction (a database restart after the PSP's answer) is the
 * same refund, answered as it stands, never a 409 for a refund already under way (domain/lifecycle.ts).
 */
class Migration20261212RefundAskKey extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table payments.transactions add column if not exists refund_ask_key text`);
  }
}

/**
 * Due-date charges (API Pix `cobv`, docs/pix.md "Due-date charges"): the terms the charge was made
 * with (null for an immediate charge), and, once paid, what the amount paid is made of and the day in
 * São Paulo it was priced for. Nullable and additive: the previous release ignores them.
 */
class Migration20261214DueDateCharges extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table payments.transactions
      add column if not exists due_date_terms jsonb,
      add column if not exists amount_components jsonb,
      add column if not exists paid_on date`);
  }
}

/** A due-date charge's fee settings when made: its fee, on the amount paid, keeps that rate. */
class Migration20261215DueDateFees extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table payments.transactions
      add column if not exists fee_bps integer,
      add column if not exists fee_fixed_amount bigint`);
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
      `create index if not exists processed_messages_processed_at_idx on "payments".processed_messages using brin (processed_at)`,
    );
  }
}

export const migrations = [
  { name: 'Migration20261123Init', class: Migration20261123Init },
  { name: 'Migration20261124Transactions', class: Migration20261124Transactions },
  { name: 'Migration20261125Lifecycle', class: Migration20261125Lifecycle },
  { name: 'Migration20261202TraceContext', class: Migration20261202TraceContext },
  { name: 'Migration20261206PaidChargeChanges', class: Migration20261206PaidChargeChanges },
  { name: 'Migration20261207IdempotencyKeys', class: Migration20261207IdempotencyKeys },
  { name: 'Migration20261208RefundAsked', class: Migration20261208RefundAsked },
  { name: 'Migration20261210RefundOutcomes', class: Migration20261210RefundOutcomes },
  { name: 'Migration20261212RefundAskKey', class: Migration20261212RefundAskKey },
  { name: 'Migration20261214DueDateCharges', class: Migration20261214DueDateCharges },
  { name: 'Migration20261215DueDateFees', class: Migration20261215DueDateFees },
  { name: 'Migration20261221ProcessedMessagesByTime', class: Migration20261221ProcessedMessagesByTime },
];
