import { Migration } from '@mikro-orm/migrations';

export const SCHEMA = 'withdrawals';

class Migration20261123Init extends Migration {
  override async up(): Promise<void> {
    // The kit's tables (its outbox.ts), written out: a migration never changes once run.
    this.addSql(`create table if not exists "withdrawals".outbox (
      id uuid primary key,
      exchange text not null,
      routing_key text not null,
      payload jsonb not null,
      headers jsonb not null default '{}',
      trace_context jsonb,
      created_at timestamptz(3) not null default now()
    )`);
    this.addSql(`create index if not exists outbox_created_at_idx on "withdrawals".outbox (created_at, id)`);
    this.addSql(`create table if not exists "withdrawals".processed_messages (
      consumer text not null,
      message_id text not null,
      processed_at timestamptz(3) not null default now(),
      primary key (consumer, message_id)
    )`);
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

class Migration20261201Ledger extends Migration {
  override async up(): Promise<void> {
    // The header of each entry: why it was posted and what it belongs to (an order or a withdrawal).
    this.addSql(`create table withdrawals.ledger_entries (
      id uuid primary key,
      seller_id uuid not null,
      environment text not null check (environment in ('test', 'live')),
      kind text not null,
      order_id uuid,
      withdrawal_id uuid,
      cause text,
      created_at timestamptz(3) not null default now(),
      check ((order_id is null) <> (withdrawal_id is null))
    )`);
    this.addSql(`create index ledger_entries_order_idx on withdrawals.ledger_entries (order_id, created_at)`);
    // A withdrawal is held, released or paid out at most once each, whatever a retry does.
    this.addSql(
      `create unique index ledger_entries_withdrawal_kind_idx on withdrawals.ledger_entries (withdrawal_id, kind) where withdrawal_id is not null`,
    );
    this.addSql(`alter table withdrawals.ledger_lines
      add constraint ledger_lines_entry_fk foreign key (entry_id) references withdrawals.ledger_entries (id)
        deferrable initially deferred,
      add constraint ledger_lines_account_check check (account in ('psp_settlement', 'platform_fees', 'seller_available', 'seller_held_med', 'seller_withdrawals_pending', 'seller_paid_out')),
      add constraint ledger_lines_amount_check check (amount <> 0)`);
    this.addSql(`create index ledger_lines_entry_idx on withdrawals.ledger_lines (entry_id)`);
    // The database refuses, at commit, an entry whose lines do not sum to zero: the journal balances even
    // if a bug slipped past domain/ledger.ts.
    this.addSql(`create function withdrawals.ledger_entry_balances() returns trigger language plpgsql as $fn$
      declare total bigint;
      begin
        select coalesce(sum(amount), 0) into total from withdrawals.ledger_lines where entry_id = new.entry_id;
        if total <> 0 then
          raise exception 'ledger entry % does not balance (lines sum to %)', new.entry_id, total
            using errcode = 'check_violation';
        end if;
        return null;
      end $fn$`);
    this.addSql(`create constraint trigger ledger_lines_balance after insert on withdrawals.ledger_lines
      deferrable initially deferred for each row execute function withdrawals.ledger_entry_balances()`);
    // Append-only: a mistake is corrected by a new entry, never by editing history.
    this.addSql(`create function withdrawals.ledger_append_only() returns trigger language plpgsql as $fn$
      begin
        raise exception 'the ledger is append-only: % on % refused', tg_op, tg_table_name;
      end $fn$`);
    for (const table of ['ledger_entries', 'ledger_lines']) {
      this.addSql(`create trigger ${table}_append_only before update or delete on withdrawals.${table}
        for each row execute function withdrawals.ledger_append_only()`);
    }

    this.addSql(`create table withdrawals.order_funds (
      order_id uuid primary key,
      seller_id uuid not null,
      environment text not null check (environment in ('test', 'live')),
      gross_amount bigint check (gross_amount >= 0),
      fee_amount bigint check (fee_amount >= 0),
      net_amount bigint check (net_amount >= 0),
      charge_status text,
      charge_version int,
      position text not null check (position in ('NONE', 'AVAILABLE', 'HELD', 'REVERSED')),
      updated_at timestamptz(3) not null
    )`);

    this.addSql(`create table withdrawals.withdrawals (
      id uuid primary key,
      seller_id uuid not null,
      environment text not null check (environment in ('test', 'live')),
      seller_name text not null,
      amount bigint not null check (amount > 0),
      pix_key text not null,
      pix_key_type text not null check (pix_key_type in ('email', 'cpf', 'phone', 'random')),
      status text not null
        check (status in ('PENDING', 'APPROVED', 'DENIED', 'PROCESSING', 'PAID', 'FAILED')),
      created_at timestamptz(3) not null,
      decided_at timestamptz(3),
      decided_by text,
      deny_reason text,
      processing_at timestamptz(3),
      payout_attempts int not null default 0,
      payout_reference text,
      paid_at timestamptz(3),
      failed_at timestamptz(3),
      failure_reason text
    )`);
    // The seller's list, newest first (keyset on created_at, id), with and without the status filter.
    this.addSql(
      `create index withdrawals_seller_idx on withdrawals.withdrawals (seller_id, environment, created_at desc, id desc)`,
    );
    this.addSql(
      `create index withdrawals_seller_status_idx on withdrawals.withdrawals (seller_id, environment, status, created_at desc, id desc)`,
    );
    // The operators' queue and the payout worker look withdrawals up by status across sellers.
    this.addSql(
      `create index withdrawals_status_idx on withdrawals.withdrawals (status, created_at desc, id desc)`,
    );
  }
}

class Migration20261202TraceContext extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "withdrawals".outbox add column if not exists trace_context jsonb`);
  }
}

class Migration20261203SellerDebt extends Migration {
  override async up(): Promise<void> {
    // seller_debt: what a reversal took beyond the available balance (ledger.settleAvailable).
    this.addSql(`alter table withdrawals.ledger_lines drop constraint ledger_lines_account_check,
      add constraint ledger_lines_account_check check (account in ('psp_settlement', 'platform_fees', 'seller_available', 'seller_held_med', 'seller_withdrawals_pending', 'seller_paid_out', 'seller_debt')) not valid`);
    this.addSql(`alter table withdrawals.ledger_lines validate constraint ledger_lines_account_check`);
  }
}

/**
 * An early build of 20261203 took its list from the code before seller_debt was in it: a database it
 * ran on refuses every debt. Setting the check again is harmless where 20261203 was right.
 */
class Migration20261204SellerDebtCheck extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table withdrawals.ledger_lines drop constraint ledger_lines_account_check,
      add constraint ledger_lines_account_check check (account in ('psp_settlement', 'platform_fees', 'seller_available', 'seller_held_med', 'seller_withdrawals_pending', 'seller_paid_out', 'seller_debt')) not valid`);
    this.addSql(`alter table withdrawals.ledger_lines validate constraint ledger_lines_account_check`);
  }
}

/**
 * A balance row per seller, environment and account, kept by the database in the transaction of every
 * line (docs/finance.md, "The balance"): reading a balance is one indexed lookup instead of a sum over
 * the seller's whole journal. A trigger keeps the rows, not the app, so a replica of an older build that
 * inserts lines without knowing about them (a rolling deploy) cannot make them drift.
 */
class Migration20261205LedgerBalances extends Migration {
  override async up(): Promise<void> {
    // No line may be inserted between the backfill's snapshot and the trigger: it would be in neither.
    // SHARE ROW EXCLUSIVE waits for the transactions that already inserted lines, then holds off
    // every insert until this migration commits (reads go on).
    this.addSql(`lock table withdrawals.ledger_lines in share row exclusive mode`);
    // Every posting updates its seller's rows: free room on their page keeps those updates HOT (no new
    // index entry, dead versions pruned by the page's next reader even without a vacuum).
    this.addSql(`create table withdrawals.ledger_balances (
      seller_id uuid,
      environment text,
      account text,
      amount bigint not null,
      updated_at timestamptz(3) not null default now(),
      primary key (seller_id, environment, account)
    ) with (fillfactor = 50)`);
    this.addSql(`insert into withdrawals.ledger_balances (seller_id, environment, account, amount)
      select seller_id, environment, account, sum(amount) from withdrawals.ledger_lines
       group by seller_id, environment, account`);
    // Once per inserting statement, whatever build runs it: one upsert of the statement's sums per
    // (seller, environment, account), in key order so two statements never lock rows in opposite orders.
    this.addSql(`create function withdrawals.ledger_balances_add() returns trigger language plpgsql as $fn$
      begin
        insert into withdrawals.ledger_balances as b (seller_id, environment, account, amount)
          select seller_id, environment, account, sum(amount) from inserted_lines
           group by seller_id, environment, account
           order by seller_id, environment, account
        on conflict (seller_id, environment, account)
          do update set amount = b.amount + excluded.amount, updated_at = now();
        return null;
      end $fn$`);
    this.addSql(`create trigger ledger_lines_balances after insert on withdrawals.ledger_lines
      referencing new table as inserted_lines
      for each statement execute function withdrawals.ledger_balances_add()`);
  }
}

/**
 * The ledger's reconciliation with payments (docs/finance.md, "Reconciliation"): how far each
 * environment's changes have been checked, and the mismatches still open (one per order, or per balance
 * row), so a mismatch stays reported until it is gone.
 */
class Migration20261206LedgerReconciliation extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table withdrawals.reconciliation_checkpoints (
      environment text primary key check (environment in ('test', 'live')),
      checked_before timestamptz(3) not null,
      finished_at timestamptz(3)
    )`);
    this.addSql(`create table withdrawals.reconciliation_findings (
      subject text primary key,
      kind text not null check (kind in
        ('other_owner', 'amounts_differ', 'ledger_ahead', 'contradicts', 'not_moved', 'balance_drift')),
      seller_id uuid not null,
      environment text not null check (environment in ('test', 'live')),
      order_id uuid,
      account text,
      detail text not null,
      charge jsonb,
      first_seen_at timestamptz(3) not null,
      last_seen_at timestamptz(3) not null
    )`);
  }
}

/**
 * Idempotency-Key answers, stored in the transaction of the change they guard (the kit's
 * idempotency.ts, docs/idempotency.md); kept 24 hours.
 */
class Migration20261207IdempotencyKeys extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table withdrawals.idempotency_keys (
      scope text not null,
      key text not null,
      fingerprint text not null,
      status smallint not null,
      body text not null,
      created_at timestamptz(3) not null default now(),
      primary key (scope, key)
    )`);
    this.addSql(`create index idempotency_keys_created_at_idx on withdrawals.idempotency_keys (created_at)`);
  }
}

/**
 * When the reconciliation last compared the balance rows with their lines (one row): that check reads
 * the whole journal and has its own interval, kept across replicas (docs/finance.md, "Reconciliation").
 */
class Migration20261208ReconciliationBalanceCheck extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table withdrawals.reconciliation_balance_check (
      singleton boolean primary key default true check (singleton),
      checked_at timestamptz(3) not null
    )`);
  }
}

/**
 * Refund holds (docs/finance.md, "Refunds"): a seller's refund first reserves the sale's net from the
 * available balance, under the seller's lock. The order's record says so (position REFUND_HELD), with
 * the refund attempts not yet known to have failed and when the hold was last reserved, so a hold no
 * refund completes is released.
 */
class Migration20261209RefundHolds extends Migration {
  override async up(): Promise<void> {
    // seller_held_refund: the net of a sale whose refund by the seller is in flight
    // (domain/refund-holds.ts).
    this.addSql(`alter table withdrawals.ledger_lines drop constraint ledger_lines_account_check,
      add constraint ledger_lines_account_check check (account in ('psp_settlement', 'platform_fees', 'seller_available', 'seller_held_med', 'seller_withdrawals_pending', 'seller_paid_out', 'seller_debt', 'seller_held_refund')) not valid`);
    this.addSql(`alter table withdrawals.ledger_lines validate constraint ledger_lines_account_check`);
    this.addSql(`alter table withdrawals.order_funds drop constraint order_funds_position_check,
      add constraint order_funds_position_check
        check (position in ('NONE', 'AVAILABLE', 'HELD', 'REFUND_HELD', 'REVERSED')),
      add column refund_attempts int not null default 0 check (refund_attempts >= 0),
      add column refund_held_at timestamptz(3)`);
    // The sweep of holds no refund completed reads them alone.
    this.addSql(`create index order_funds_refund_held_idx on withdrawals.order_funds (refund_held_at)
      where position = 'REFUND_HELD'`);
  }
}

/**
 * Each refund hold's number (domain/refund-holds.ts): a refund the PSP did not make gives the hold back
 * only when no hold newer than the ones its failure covered was reserved since.
 */
class Migration20261210RefundFailures extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table withdrawals.order_funds
      add column if not exists refund_hold_seq bigint not null default 0,
      add column if not exists refund_hold_first_seq bigint not null default 0`);
  }
}

/**
 * Payout controls (docs/finance.md, "Payout controls"): each withdrawal says whether its request cleared
 * it for the automatic approval (the rolling 24 h caps count those) and, if not, why it waits for an
 * operator; CANCELED is an operator's cancel of an APPROVED withdrawal before it was sent; a seller's
 * withdrawals may be suspended per environment, with the history of suspensions kept.
 */
class Migration20261211PayoutControls extends Migration {
  override async up(): Promise<void> {
    // Rows from before stay false: an older replica's request (a rolling deploy) waits for an operator.
    this.addSql(`alter table withdrawals.withdrawals
      drop constraint withdrawals_status_check,
      add constraint withdrawals_status_check
        check (status in ('PENDING', 'APPROVED', 'DENIED', 'PROCESSING', 'PAID', 'FAILED', 'CANCELED')),
      add column auto_approvable boolean not null default false,
      add column review_reasons text[] not null default '{}',
      add column canceled_at timestamptz(3),
      add column canceled_by text,
      add column cancel_reason text`);
    // The caps read the seller's cleared withdrawals of the last 24 hours, under the seller's lock.
    this.addSql(`create index withdrawals_auto_window_idx on withdrawals.withdrawals
      (seller_id, environment, created_at) where auto_approvable`);
    // "A PIX key never paid to by this seller": one lookup per request.
    this.addSql(`create index withdrawals_paid_keys_idx on withdrawals.withdrawals
      (seller_id, environment, pix_key_type, pix_key) where status = 'PAID'`);
    this.addSql(`create table withdrawals.seller_suspensions (
      id uuid primary key,
      seller_id uuid not null,
      environment text not null check (environment in ('test', 'live')),
      reason text not null check (length(reason) between 1 and 500),
      suspended_at timestamptz(3) not null,
      suspended_by text not null,
      lifted_at timestamptz(3),
      lifted_by text,
      lift_reason text check (lift_reason is null or length(lift_reason) between 1 and 500),
      check ((lifted_at is null) = (lifted_by is null) and (lifted_at is null) = (lift_reason is null))
    )`);
    // At most one suspension in force per seller and environment, whatever two operators do at once.
    this.addSql(`create unique index seller_suspensions_active_idx on withdrawals.seller_suspensions
      (seller_id, environment) where lifted_at is null`);
    this.addSql(`create index seller_suspensions_list_idx on withdrawals.seller_suspensions
      (environment, suspended_at desc, id desc)`);
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
      `create index if not exists processed_messages_processed_at_idx on "withdrawals".processed_messages using brin (processed_at)`,
    );
  }
}

export const migrations = [
  { name: 'Migration20261123Init', class: Migration20261123Init },
  { name: 'Migration20261201Ledger', class: Migration20261201Ledger },
  { name: 'Migration20261202TraceContext', class: Migration20261202TraceContext },
  { name: 'Migration20261203SellerDebt', class: Migration20261203SellerDebt },
  { name: 'Migration20261204SellerDebtCheck', class: Migration20261204SellerDebtCheck },
  { name: 'Migration20261205LedgerBalances', class: Migration20261205LedgerBalances },
  { name: 'Migration20261206LedgerReconciliation', class: Migration20261206LedgerReconciliation },
  { name: 'Migration20261207IdempotencyKeys', class: Migration20261207IdempotencyKeys },
  { name: 'Migration20261208ReconciliationBalanceCheck', class: Migration20261208ReconciliationBalanceCheck },
  { name: 'Migration20261209RefundHolds', class: Migration20261209RefundHolds },
  { name: 'Migration20261210RefundFailures', class: Migration20261210RefundFailures },
  { name: 'Migration20261211PayoutControls', class: Migration20261211PayoutControls },
  { name: 'Migration20261221ProcessedMessagesByTime', class: Migration20261221ProcessedMessagesByTime },
];
