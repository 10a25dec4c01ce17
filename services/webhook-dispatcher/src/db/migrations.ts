import { Migration } from '@mikro-orm/migrations';

export const SCHEMA = 'webhooks';

class Migration20261123Init extends Migration {
  override async up(): Promise<void> {
    // The kit's tables (its outbox.ts), written out: a migration never changes once run.
    this.addSql(`create table if not exists "webhooks".outbox (
      id uuid primary key,
      exchange text not null,
      routing_key text not null,
      payload jsonb not null,
      headers jsonb not null default '{}',
      trace_context jsonb,
      created_at timestamptz(3) not null default now()
    )`);
    this.addSql(`create index if not exists outbox_created_at_idx on "webhooks".outbox (created_at, id)`);
    this.addSql(`create table if not exists "webhooks".processed_messages (
      consumer text not null,
      message_id text not null,
      processed_at timestamptz(3) not null default now(),
      primary key (consumer, message_id)
    )`);
  }
}

class Migration20261123Webhooks extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table webhooks.webhooks (
      id uuid primary key,
      seller_id uuid not null,
      environment text not null check (environment in ('test', 'live')),
      url text not null,
      event text not null,
      description text,
      status text not null check (status in ('ACTIVE', 'DISABLED', 'RETIRED', 'DELETED')),
      secret text not null,
      created_at timestamptz(3) not null,
      updated_at timestamptz(3) not null
    )`);
    // Who gets an event: the active webhooks of one seller, environment and event.
    this.addSql(
      `create index webhooks_subscribers_idx on webhooks.webhooks (seller_id, environment, event) where status = 'ACTIVE'`,
    );
    this.addSql(
      `create index webhooks_list_idx on webhooks.webhooks (seller_id, environment, created_at desc, id desc)`,
    );
    // One live registration per (url, event): registering it again retires the old one.
    this
      .addSql(`create unique index webhooks_url_event_key on webhooks.webhooks (seller_id, environment, url, event)
      where status in ('ACTIVE', 'DISABLED')`);
    this.addSql(`create table webhooks.deliveries (
      id uuid primary key,
      event_id text not null unique,
      webhook_id uuid references webhooks.webhooks (id),
      order_id uuid,
      seller_id uuid not null,
      environment text not null,
      event text not null,
      url text not null,
      signed boolean not null,
      payload jsonb not null,
      occurred_at timestamptz(3) not null,
      status text not null check (status in ('pending', 'delivered', 'dead')),
      attempts int not null default 0,
      max_attempts int not null default 8,
      next_attempt_at timestamptz(3),
      lease_until timestamptz(3),
      created_at timestamptz(3) not null,
      delivered_at timestamptz(3),
      check ((webhook_id is null) <> signed)
    )`);
    this.addSql(
      `create index deliveries_due_idx on webhooks.deliveries (next_attempt_at) where status = 'pending'`,
    );
    this.addSql(
      `create index deliveries_list_idx on webhooks.deliveries (webhook_id, created_at desc, id desc)`,
    );
    this.addSql(`create table webhooks.delivery_attempts (
      delivery_id uuid not null references webhooks.deliveries (id),
      attempt int not null,
      started_at timestamptz(3) not null,
      duration_ms int not null,
      response_status int,
      response_body text,
      error text,
      primary key (delivery_id, attempt)
    )`);
  }
}

class Migration20261202TraceContext extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table "webhooks".outbox add column if not exists trace_context jsonb`);
    // The trace of the event each delivery comes from: attempts run later, maybe in another replica.
    this.addSql(`alter table webhooks.deliveries add column if not exists trace_context jsonb`);
  }
}

/**
 * The window of due deliveries a claim looks at (jobs/sender/due-claims.ts), as a function so that it can keep
 * its plan: the due index read in order, stopping at the window's size. Left to itself, the planner
 * reads the whole backlog into a bitmap and sorts it whenever its statistics lag behind a backlog that
 * grew fast (the moment a claim matters most); `set enable_bitmapscan = off` applies to this function
 * only. Each row's target is its webhook's current URL, looked up row by row; a paused or deleted
 * webhook's deliveries have none and are skipped, as are the destinations in `saturated`.
 */
class Migration20261205DueWindow extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create or replace function webhooks.due_window(saturated text[], size int)
  returns table (id uuid, next_attempt_at timestamptz, webhook_id uuid, attempts int, target text)
  language sql stable
  set enable_bitmapscan = off
  as $$
    select * from (
      select d.id, d.next_attempt_at, d.webhook_id, d.attempts,
             case when d.webhook_id is null then d.url
                  else (select w.url from webhooks.webhooks w
                         where w.id = d.webhook_id and w.status = 'ACTIVE') end as target
        from webhooks.deliveries d
       where d.status = 'pending' and d.next_attempt_at <= now()
         and (d.lease_until is null or d.lease_until < now())
       order by d.next_attempt_at) candidates
     -- "<> all" of an empty array is true even for null: the null test is what skips paused webhooks.
     where target is not null and target <> all(saturated)
     limit size
  $$`);
  }
}

/** The first due_window let a paused webhook's deliveries through when no destination was saturated. */
class Migration20261206DueWindowPaused extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create or replace function webhooks.due_window(saturated text[], size int)
  returns table (id uuid, next_attempt_at timestamptz, webhook_id uuid, attempts int, target text)
  language sql stable
  set enable_bitmapscan = off
  as $$
    select * from (
      select d.id, d.next_attempt_at, d.webhook_id, d.attempts,
             case when d.webhook_id is null then d.url
                  else (select w.url from webhooks.webhooks w
                         where w.id = d.webhook_id and w.status = 'ACTIVE') end as target
        from webhooks.deliveries d
       where d.status = 'pending' and d.next_attempt_at <= now()
         and (d.lease_until is null or d.lease_until < now())
       order by d.next_attempt_at) candidates
     -- "<> all" of an empty array is true even for null: the null test is what skips paused webhooks.
     where target is not null and target <> all(saturated)
     limit size
  $$`);
  }
}

/**
 * Room on each page for a delivery's next version: its lease is set and cleared on every attempt, and an
 * update that finds room on its own page and changes no indexed column (a lease) writes no index entry
 * (a HOT update). Full pages made every lease an entry in each of the table's four indexes. The price is
 * about 30 % more space for rows that change twice and then never again; pages written before this
 * keep their old fill until the table is rewritten.
 */
class Migration20261207DeliveriesFillfactor extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table webhooks.deliveries set (fillfactor = 70)`);
  }
}

/**
 * due_window skips a full destination's deliveries by their stored URL before it looks their webhook up.
 * A destination that is slow or down piles up a backlog older than everyone else's, which every claim
 * reads past: looked up row by row, 2,000 of them cost 3.6 ms a claim, and 0.8 ms skipped this way. The
 * stored URL is the one a pending delivery will be posted to: a change of the webhook's URL changes its
 * pending deliveries' too (db/webhooks.ts, updateWebhook). The current URL is still checked
 * after the lookup, as before.
 */
class Migration20261208DueWindowUrlFirst extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create or replace function webhooks.due_window(saturated text[], size int)
  returns table (id uuid, next_attempt_at timestamptz, webhook_id uuid, attempts int, target text)
  language sql stable
  set enable_bitmapscan = off
  as $$
    select * from (
      select d.id, d.next_attempt_at, d.webhook_id, d.attempts,
             case when d.webhook_id is null then d.url
                  else (select w.url from webhooks.webhooks w
                         where w.id = d.webhook_id and w.status = 'ACTIVE') end as target
        from webhooks.deliveries d
       where d.status = 'pending' and d.next_attempt_at <= now()
         and (d.lease_until is null or d.lease_until < now())
         and d.url <> all(saturated)
       order by d.next_attempt_at) candidates
     -- "<> all" of an empty array is true even for null: the null test is what skips paused webhooks.
     where target is not null and target <> all(saturated)
     limit size
  $$`);
  }
}

/**
 * An attempt's row is written only by the statement that records its outcome, in the same statement as
 * its delivery's new state and keyed by that delivery's id (db/delivery-claims.ts, OUTCOME_SQL), and
 * deliveries are never deleted: the foreign key could not catch anything. Its check, a locking read of
 * the delivery per attempt, was a tenth of PostgreSQL's work per delivery while the dispatcher drained
 * a backlog. Whatever comes to delete deliveries must delete their attempts first (a delete is refused
 * until then: Migration20261210DeliveriesNeverDeleted).
 */
class Migration20261209AttemptsWithoutForeignKey extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `alter table webhooks.delivery_attempts drop constraint if exists delivery_attempts_delivery_id_fkey`,
    );
  }
}

/**
 * Deliveries are never deleted, and `delivery_attempts` relies on it since it has no foreign key
 * (Migration20261209AttemptsWithoutForeignKey): a delete is refused here, so that whoever needs one (a
 * retention job, an erasure) meets this first and deletes the attempts with their deliveries.
 */
class Migration20261210DeliveriesNeverDeleted extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create or replace function webhooks.refuse_delivery_delete() returns trigger
      language plpgsql as $$
      begin
        raise exception 'webhooks.deliveries rows are never deleted: delivery_attempts has no foreign key to them (see Migration20261209AttemptsWithoutForeignKey)';
      end
      $$`);
    this.addSql(`create trigger deliveries_never_deleted before delete or truncate on webhooks.deliveries
      for each statement execute function webhooks.refuse_delivery_delete()`);
  }
}

/**
 * due_window from a point in time on (`since`): the sender remembers where the last full window's
 * first candidate was, everything older than it having been skipped (full destinations, paused
 * webhooks, leased rows), and reads only from there for a while (jobs/sender/due-claims.ts, claim). A slow
 * destination's backlog of thousands is then read once per poll interval instead of by every claim.
 * The two-argument function stays for replicas of the previous build during a rolling deploy.
 */
class Migration20261211DueWindowSince extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create or replace function webhooks.due_window(saturated text[], size int, since timestamptz)
  returns table (id uuid, next_attempt_at timestamptz, webhook_id uuid, attempts int, target text)
  language sql stable
  set enable_bitmapscan = off
  as $$
    select * from (
      select d.id, d.next_attempt_at, d.webhook_id, d.attempts,
             case when d.webhook_id is null then d.url
                  else (select w.url from webhooks.webhooks w
                         where w.id = d.webhook_id and w.status = 'ACTIVE') end as target
        from webhooks.deliveries d
       where d.status = 'pending' and d.next_attempt_at <= now() and d.next_attempt_at >= since
         and (d.lease_until is null or d.lease_until < now())
         and d.url <> all(saturated)
       order by d.next_attempt_at) candidates
     -- "<> all" of an empty array is true even for null: the null test is what skips paused webhooks.
     where target is not null and target <> all(saturated)
     limit size
  $$`);
  }
}

/**
 * due_window in PL/pgSQL, whose statements keep their plan for the connection: a SQL function that cannot
 * be inlined (its `set` clause) is planned again at every call, about 1 ms of a claim's 3 to 4 (64
 * deliveries out of a backlog of 32,000, measured). The plan is the same, the due index read in order.
 */
class Migration20261212DueWindowCachedPlan extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create or replace function webhooks.due_window(saturated text[], size int, since timestamptz)
  returns table (id uuid, next_attempt_at timestamptz, webhook_id uuid, attempts int, target text)
      language plpgsql stable
      set enable_bitmapscan = off
      as $$
      #variable_conflict use_column
      begin
        return query select * from (
      select d.id, d.next_attempt_at, d.webhook_id, d.attempts,
             case when d.webhook_id is null then d.url
                  else (select w.url from webhooks.webhooks w
                         where w.id = d.webhook_id and w.status = 'ACTIVE') end as target
        from webhooks.deliveries d
       where d.status = 'pending' and d.next_attempt_at <= now() and d.next_attempt_at >= since
         and (d.lease_until is null or d.lease_until < now())
         and d.url <> all(saturated)
       order by d.next_attempt_at) candidates
     -- "<> all" of an empty array is true even for null: the null test is what skips paused webhooks.
     where target is not null and target <> all(saturated)
     limit size;
      end
      $$`);
  }
}

/**
 * due_window looks each candidate's webhook up once. Written as a scalar subquery in the target column,
 * the lookup was repeated by each test of the target (paused, saturated) and again for the output:
 * three index lookups for each delivery claimed; now it is computed once. Same signature and
 * columns: replicas of the previous build call it unchanged during a rolling deploy.
 */
class Migration20261213DueWindowOneLookup extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create or replace function webhooks.due_window(saturated text[], size int, since timestamptz)
  returns table (id uuid, next_attempt_at timestamptz, webhook_id uuid, attempts int, target text)
      language plpgsql stable
      set enable_bitmapscan = off
      as $$
      #variable_conflict use_column
      begin
        return query 
          select d.id, d.next_attempt_at, d.webhook_id, d.attempts, t.target
            from webhooks.deliveries d
            -- A subquery kept apart (offset 0), so that its target is computed once per row; a plain
            -- join to webhooks could be planned as a scan of every active webhook per delivery.
            cross join lateral (
              select case when d.webhook_id is null then d.url
                          else (select w.url from webhooks.webhooks w
                                 where w.id = d.webhook_id and w.status = 'ACTIVE') end as target
              offset 0) t
           where d.status = 'pending' and d.next_attempt_at <= now() and d.next_attempt_at >= since
             and (d.lease_until is null or d.lease_until < now())
             and d.url <> all(saturated)
             -- A paused or deleted webhook's deliveries have no target; "<> all" of an empty array is
             -- true even for null, so the null test is what skips them.
             and t.target is not null and t.target <> all(saturated)
           order by d.next_attempt_at
           limit size;
      end
      $$`);
  }
}

/**
 * Cheaper writes per attempt (bench/README.md, bench/webhooks). A delivery's row (about 900 bytes,
 * most of it the payload) gets a new version for its lease and another for its outcome: at fillfactor
 * 70 only half the leases found room on their page, and the others wrote an entry in every index. At
 * 50 every lease does (the price: pages a third emptier for rows that are never deleted; pages
 * written before keep their fill). The unique index on `event_id` goes: nothing looks a delivery up
 * by it, each id is 24 random letters and digits (143 bits, domain/deliveries.ts `newEventId`), and
 * every outcome, an update of an indexed column, paid for a uniqueness check in it.
 */
class Migration20261214DeliveriesCheaperVersions extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table webhooks.deliveries set (fillfactor = 50)`);
    this.addSql(`alter table webhooks.deliveries drop constraint if exists deliveries_event_id_key`);
  }
}

/**
 * Idempotency-Key answers, stored in the transaction of the change they guard (the kit's
 * idempotency.ts, docs/idempotency.md); kept 24 hours.
 */
class Migration20261215IdempotencyKeys extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table webhooks.idempotency_keys (
      scope text not null,
      key text not null,
      fingerprint text not null,
      status smallint not null,
      body text not null,
      created_at timestamptz(3) not null default now(),
      primary key (scope, key)
    )`);
    this.addSql(`create index idempotency_keys_created_at_idx on webhooks.idempotency_keys (created_at)`);
  }
}

/**
 * An order's postback deliveries, newest first (db/deliveries.ts, listPostbackDeliveries): only the
 * rows without a webhook, which the list by webhook (deliveries_list_idx) cannot find by order. On a
 * large table, create the index beforehand with `create index concurrently` under this name: `if not
 * exists` then leaves it alone and no write waits for the build (a concurrent build that failed leaves
 * an INVALID index of this name: drop it before deploying).
 */
class Migration20261216PostbackDeliveriesByOrder extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create index if not exists deliveries_postback_list_idx
      on webhooks.deliveries (order_id, created_at desc, id desc) where webhook_id is null`);
  }
}

/**
 * The postbacks of a seller (deliveries to an order's postback_url, without a webhook), by creation
 * time, for the health counts (db/deliveries.ts, webhooksHealth). Only postbacks are in it, and none of the columns
 * it reads changes after the insert, so a lease's update stays HOT
 * (Migration20261214DeliveriesCheaperVersions).
 */
class Migration20261216PostbacksIndex extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create index if not exists deliveries_postbacks_idx on webhooks.deliveries (seller_id, environment, created_at) where webhook_id is null`,
    );
  }
}

/**
 * The Events API's record (db/events.ts, docs/events-api.md): one row per public event the intake
 * receives, written by the statement that stores its deliveries (db/delivery-writes.ts), even when
 * nobody subscribes. `delivery_ids` lists the deliveries made of it, in the order they were made: they
 * are looked up by primary key when an event is read, so the deliveries table gets no new index to
 * write. Ids compare byte by byte (collation "C"), the keyset order of the list. Each list reads one
 * index range in order, whatever the table's size: all of a seller's events in an environment, those
 * of one name (one range per name asked for), or those of one order (a handful, sorted). Rows older
 * than the retention go in batches by `occurred_at` (db/events.ts, deleteExpiredEvents).
 *
 * Events are recorded from this release on: rebuilding earlier ones from the deliveries would read
 * the whole deliveries table inside the deploy's migration transaction, holding up the fan-out.
 */
class Migration20261216Events extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create table webhooks.events (
      id text collate "C" primary key,
      seller_id uuid not null,
      environment text not null check (environment in ('test', 'live')),
      event text not null,
      order_id uuid,
      occurred_at timestamptz(3) not null,
      data jsonb not null,
      delivery_ids uuid[] not null default '{}',
      recorded_at timestamptz(3) not null default now()
    )`);
    this.addSql(
      `create index events_list_idx on webhooks.events (seller_id, environment, occurred_at desc, id desc)`,
    );
    this.addSql(
      `create index events_type_idx on webhooks.events (seller_id, environment, event, occurred_at desc, id desc)`,
    );
    this.addSql(`create index events_order_idx on webhooks.events (order_id) where order_id is not null`);
    this.addSql(`create index events_occurred_at_idx on webhooks.events (occurred_at)`);
  }
}

/**
 * The webhooks retired by rotations, by when: the periodic move of deliveries a fan-out stored on a
 * webhook just retired (db/webhooks.ts, moveStrandedDeliveries) reads the recent ones only.
 */
class Migration20261217RetiredWebhooks extends Migration {
  override async up(): Promise<void> {
    this.addSql(
      `create index if not exists webhooks_retired_idx on webhooks.webhooks (updated_at) where status = 'RETIRED'`,
    );
  }
}

/**
 * Signing secrets sealed at rest (docs/webhooks.md, "Secrets at rest"): `secret_sealed` holds the
 * secret under WEBHOOK_SECRETS_KEY, and `secret`, the clear one, may now be null. A migration does not
 * hold the key, so it moves no secret: the dispatcher seals the clear ones at start and on a timer
 * (jobs/seal-secrets.ts), clearing `secret` in the same update, and writes new ones sealed only. The
 * check keeps every row with one of the two. Adding a nullable column and dropping a not-null rewrite
 * nothing, so the migration is instant whatever the table holds.
 */
class Migration20261218SealedSecrets extends Migration {
  override async up(): Promise<void> {
    this.addSql(`alter table webhooks.webhooks add column if not exists secret_sealed text`);
    this.addSql(`alter table webhooks.webhooks alter column secret drop not null`);
    this.addSql(`alter table webhooks.webhooks drop constraint if exists webhooks_secret_kept`);
    this.addSql(
      `alter table webhooks.webhooks add constraint webhooks_secret_kept check (secret is not null or secret_sealed is not null)`,
    );
  }
}

/**
 * Concurrency per destination host, not per URL (docs/webhooks.md, "Concurrency per host"):
 * `destination_of` gives a URL's scheme, host and port, lower-cased, the default port written out
 * (as domain/destination.ts does for URLs written plainly), and `due_window_by_destination` is
 * due_window with each candidate's destination, leaving out the saturated destinations by it. The
 * destination is computed only when some are saturated. due_window stays as it was for replicas of
 * the previous build during a rolling deploy.
 */
class Migration20261219DestinationPerHost extends Migration {
  override async up(): Promise<void> {
    this.addSql(`create or replace function webhooks.destination_of(url text) returns text
      language sql immutable parallel safe
      as $$
        select coalesce(
          (select lower(m[1]) || '//' || regexp_replace(lower(m[2]), '\\.$', '') || ':' ||
                  coalesce(nullif(m[3], ''), case when lower(m[1]) = 'https:' then '443' else '80' end)
             from regexp_match(url, '^([A-Za-z][A-Za-z0-9+.-]*:)//(?:[^/?#]*@)?(\\[[^]/?#]*\\]|[^:/?#]*)(?::([0-9]*))?') m),
          url)
      $$`);
    this
      .addSql(`create or replace function webhooks.due_window_by_destination(saturated text[], size int, since timestamptz)
  returns table (id uuid, next_attempt_at timestamptz, webhook_id uuid, attempts int, target text, destination text)
      language plpgsql stable
      set enable_bitmapscan = off
      as $$
      #variable_conflict use_column
      begin
        return query
          select d.id, d.next_attempt_at, d.webhook_id, d.attempts, t.target, webhooks.destination_of(t.target)
            from webhooks.deliveries d
            -- A subquery kept apart (offset 0), so that its target is computed once per row; a plain
            -- join to webhooks could be planned as a scan of every active webhook per delivery.
            cross join lateral (
              select case when d.webhook_id is null then d.url
                          else (select w.url from webhooks.webhooks w
                                 where w.id = d.webhook_id and w.status = 'ACTIVE') end as target
              offset 0) t
           where d.status = 'pending' and d.next_attempt_at <= now() and d.next_attempt_at >= since
             and (d.lease_until is null or d.lease_until < now())
             and (cardinality(saturated) = 0 or webhooks.destination_of(d.url) <> all(saturated))
             -- A paused or deleted webhook's deliveries have no target: the null test skips them.
             and t.target is not null
             and (cardinality(saturated) = 0 or webhooks.destination_of(t.target) <> all(saturated))
           order by d.next_attempt_at
           limit size;
      end
      $$`);
  }
}

/**
 * History partitioned by time (docs/webhooks.md, "History and retention"): `events` by day of
 * `occurred_at`, `deliveries` by month of `created_at`, `delivery_attempts` by month of `started_at`,
 * so that retention drops whole partitions (db/partitions.ts) instead of deleting rows.
 *
 * Each partition has the old table's primary key, (id) or (delivery_id, attempt), as its own; the
 * parents have none, since a partitioned table's unique keys must include its partition column. A key
 * of its own is what tells the planner that a lookup by id finds one row per partition: with (id,
 * created_at) it planned the sender's outcome batch as a read of the whole table. Ids are random
 * UUIDs and event ids are derived from their message, whose occurred_at goes with it to the same
 * partition, so a key per partition holds what the table's did (an event recorded twice is refused).
 *
 * `make_history_partition` adds one period to a table: a table of its own, shaped like the parent,
 * attached afterwards, which holds only a SHARE UPDATE EXCLUSIVE lock on the parent (reads and writes go
 * on) where `create table ... partition of` would hold an exclusive one. Deliveries keep half of each
 * page free (Migration20261214DeliveriesCheaperVersions).
 *
 * `partition_history` turns one of today's tables into a partitioned one whose first partition,
 * `<table>_legacy`, is the old table with everything in it, bounded above by a cutover: no row is
 * copied (an empty old table is dropped instead). The old rows must be known to lie below the bound:
 * when the upgrade's prepare step (db/history-upgrade.ts) checked it beforehand without blocking
 * writes (a check constraint validated while writes go on), the swap is a rename and an attach, a
 * moment's lock. Otherwise it is checked here, under the swap's lock: fine for a new or small table.
 *
 * A deploy that made the tables (a new installation) partitions them at once: nothing older reads
 * them. An existing installation keeps its tables until the upgrade is run (docs/deploy.md,
 * "Partitioned history"), once every replica runs this release: a replica of an earlier build inserts
 * events with `on conflict (id)`, which a partitioned table cannot serve.
 */
class Migration20261220PartitionedHistory extends Migration {
  override async up(): Promise<void> {
    this
      .addSql(`create or replace procedure webhooks.make_history_partition(tbl text, name text, lower timestamptz, upper timestamptz)
      language plpgsql as $$
      begin
        execute format('create table if not exists webhooks.%I (like webhooks.%I including defaults including constraints,
                          primary key (%s))%s',
                       name, tbl,
                       case tbl when 'delivery_attempts' then 'delivery_id, attempt' else 'id' end,
                       case when tbl = 'deliveries' then ' with (fillfactor = 50)' else '' end);
        execute format('alter table webhooks.%I attach partition webhooks.%I for values from (%L) to (%L)',
                       tbl, name, lower, upper);
      end
      $$`);
    this.addSql(`create or replace procedure webhooks.partition_history(tbl text)
      language plpgsql as $$
      declare
        col text;
        unit text;
        legacy text := tbl || '_legacy';
        bound text := tbl || '_before_partitioning';
        cutover timestamptz;
        kept boolean;
        old_index record;
      begin
        if tbl = 'events' then col := 'occurred_at'; unit := 'day';
        elsif tbl = 'deliveries' then col := 'created_at'; unit := 'month';
        elsif tbl = 'delivery_attempts' then col := 'started_at'; unit := 'month';
        else raise exception 'not a history table: %', tbl;
        end if;
        if exists (select from pg_class c where c.oid = format('webhooks.%I', tbl)::regclass and c.relkind = 'p') then
          return;
        end if;
        -- The parent first: "like" would copy the bound below.
        execute format('create table webhooks.%I (like webhooks.%I including defaults including constraints) partition by range (%I)',
                       tbl || '_partitioned', tbl, col);
        execute format('alter table webhooks.%I drop constraint if exists %I', tbl || '_partitioned', bound);
        -- The bound the prepare step validated; else, checked now, the next period's start, or the
        -- current one's when the table is empty (a new installation's partitions hold everything).
        select (regexp_match(pg_get_constraintdef(c.oid), '''([^'']+)'''))[1]::timestamptz into cutover
          from pg_constraint c
         where c.conrelid = format('webhooks.%I', tbl)::regclass and c.conname = bound and c.convalidated;
        if cutover is null then
          execute format('select case when max(%I) is null then date_trunc(%L, now(), ''UTC'')
                                      else date_trunc(%L, greatest(now(), max(%I)), ''UTC'') + %L::interval end
                            from webhooks.%I',
                         col, unit, unit, col, '1 ' || unit, tbl) into cutover;
          execute format('alter table webhooks.%I drop constraint if exists %I', tbl, bound);
          execute format('alter table webhooks.%I add constraint %I check (%I < %L)', tbl, bound, col, cutover);
        end if;
        -- The old table and its indexes step aside; the parent's indexes take their names.
        execute format('alter table webhooks.%I rename to %I', tbl, legacy);
        for old_index in
          select i.relname from pg_index x join pg_class i on i.oid = x.indexrelid
           where x.indrelid = format('webhooks.%I', legacy)::regclass
        loop
          execute format('alter index webhooks.%I rename to %I', old_index.relname, 'legacy_' || old_index.relname);
        end loop;
        execute format('alter table webhooks.%I rename to %I', tbl || '_partitioned', tbl);
        if tbl = 'events' then
          create index events_list_idx on webhooks.events (seller_id, environment, occurred_at desc, id desc);
          create index events_type_idx on webhooks.events (seller_id, environment, event, occurred_at desc, id desc);
          create index events_order_idx on webhooks.events (order_id) where order_id is not null;
        elsif tbl = 'deliveries' then
          create index deliveries_due_idx on webhooks.deliveries (next_attempt_at) where status = 'pending';
          create index deliveries_list_idx on webhooks.deliveries (webhook_id, created_at desc, id desc);
          create index deliveries_postback_list_idx on webhooks.deliveries (order_id, created_at desc, id desc)
            where webhook_id is null;
          create index deliveries_postbacks_idx on webhooks.deliveries (seller_id, environment, created_at)
            where webhook_id is null;
          -- No foreign key to webhooks.webhooks: attaching a partition would lock that table against
          -- writes, and dropping one would lock it against reads (its triggers go). Webhooks are never
          -- deleted (a deleted one is marked DELETED), so the key caught nothing.
          execute format('alter table webhooks.%I drop constraint if exists deliveries_webhook_id_fkey', legacy);
          create trigger deliveries_never_deleted before delete or truncate on webhooks.deliveries
            for each statement execute function webhooks.refuse_delivery_delete();
        end if;
        -- The old table's matching indexes become the partition's: no scan. Empty (a new installation),
        -- it goes, and the partitions start with the current period: the dispatcher makes those of the
        -- past (which late rows need) and of the coming periods before it takes any message.
        execute format('select exists (select from webhooks.%I)', legacy) into kept;
        if kept then
          execute format('alter table webhooks.%I attach partition webhooks.%I for values from (minvalue) to (%L)',
                         tbl, legacy, cutover);
        else
          execute format('drop table webhooks.%I', legacy);
          cutover := date_trunc(unit, now(), 'UTC');
        end if;
        call webhooks.make_history_partition(tbl, tbl || '_p' || to_char(cutover at time zone 'UTC',
                                             case when unit = 'day' then 'YYYYMMDD' else 'YYYYMM' end),
                                             cutover, cutover + ('1 ' || unit)::interval);
      end
      $$`);
    // A new installation: the tables were made by this same deploy (its migrations share one
    // transaction, whose start is now()), so no replica of an earlier build uses them.
    this.addSql(`do $$
      begin
        if exists (select from webhooks.schema_migrations
                    where name = 'Migration20261123Webhooks' and executed_at = now()) then
          call webhooks.partition_history('events');
          call webhooks.partition_history('deliveries');
          call webhooks.partition_history('delivery_attempts');
        end if;
      end
      $$`);
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
      `create index if not exists processed_messages_processed_at_idx on "webhooks".processed_messages using brin (processed_at)`,
    );
  }
}

export const migrations = [
  { name: 'Migration20261123Init', class: Migration20261123Init },
  { name: 'Migration20261123Webhooks', class: Migration20261123Webhooks },
  { name: 'Migration20261202TraceContext', class: Migration20261202TraceContext },
  { name: 'Migration20261205DueWindow', class: Migration20261205DueWindow },
  { name: 'Migration20261206DueWindowPaused', class: Migration20261206DueWindowPaused },
  { name: 'Migration20261207DeliveriesFillfactor', class: Migration20261207DeliveriesFillfactor },
  { name: 'Migration20261208DueWindowUrlFirst', class: Migration20261208DueWindowUrlFirst },
  { name: 'Migration20261209AttemptsWithoutForeignKey', class: Migration20261209AttemptsWithoutForeignKey },
  { name: 'Migration20261210DeliveriesNeverDeleted', class: Migration20261210DeliveriesNeverDeleted },
  { name: 'Migration20261211DueWindowSince', class: Migration20261211DueWindowSince },
  { name: 'Migration20261212DueWindowCachedPlan', class: Migration20261212DueWindowCachedPlan },
  { name: 'Migration20261213DueWindowOneLookup', class: Migration20261213DueWindowOneLookup },
  {
    name: 'Migration20261214DeliveriesCheaperVersions',
    class: Migration20261214DeliveriesCheaperVersions,
  },
  { name: 'Migration20261215IdempotencyKeys', class: Migration20261215IdempotencyKeys },
  {
    name: 'Migration20261216PostbackDeliveriesByOrder',
    class: Migration20261216PostbackDeliveriesByOrder,
  },
  { name: 'Migration20261216PostbacksIndex', class: Migration20261216PostbacksIndex },
  { name: 'Migration20261216Events', class: Migration20261216Events },
  { name: 'Migration20261217RetiredWebhooks', class: Migration20261217RetiredWebhooks },
  { name: 'Migration20261218SealedSecrets', class: Migration20261218SealedSecrets },
  { name: 'Migration20261219DestinationPerHost', class: Migration20261219DestinationPerHost },
  { name: 'Migration20261220PartitionedHistory', class: Migration20261220PartitionedHistory },
  { name: 'Migration20261221ProcessedMessagesByTime', class: Migration20261221ProcessedMessagesByTime },
];
