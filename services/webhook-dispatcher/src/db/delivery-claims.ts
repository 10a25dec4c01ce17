import type { Environment } from '@seller-api/contracts';
import type { Sql } from '@seller-api/service-kit';

/**
 * The sender's statements (jobs/sender.ts): the claim that leases due deliveries, the hand-back that
 * clears leases, and the batch that records attempts' outcomes. They run through the kit's `Sql`, the
 * claim and the outcomes planned at every run (CLAIM_SQL).
 */

/** A statement and its parameters, as `pg` takes them (the tests and bench:webhooks:pg send these). */
export interface SenderStatement {
  text: string;
  values: unknown[];
}

// Longer than any attempt can last: a delivery claimed by a replica that died is retried after it.
const LEASE_SECONDS = 60;
// How many of the oldest due deliveries a claim looks at, per delivery it may take (at least
// MIN_SCAN). Each costs PostgreSQL a little, and a window full of a few destinations' rows is claimed
// again without them; a quarter more than the limit leaves room for the destinations whose budget
// runs out within it (docs/architecture.md, "The figures behind the sender's settings"). When a few
// destinations near their budget fill the window, a claim comes back short and another follows sooner.
const CLAIM_SCAN_FACTOR = 1.25;
const MIN_SCAN = 50;

/** A delivery as a claim returns it: leased to this process until its outcome is recorded. */
export interface ClaimedDelivery {
  id: string;
  /** Null for an order's postback. */
  webhook_id: string | null;
  event_id: string;
  event: string;
  /** The webhook's current URL (a postback's own). */
  url: string;
  signed: boolean;
  /**
   * The webhook's secret as stored: clear for a row not sealed yet (jobs/seal-secrets.ts, which takes
   * the clear one for the truth too), else sealed (domain/secret-box.ts). The sender opens it.
   */
  secret: string | null;
  environment: Environment;
  /** The event's data as JSON text, spliced into the envelope as it is (no parse and stringify). */
  payload: string;
  /** Milliseconds since the epoch (a number is cheaper to read than a timestamp's text). */
  occurred_at_ms: number;
  attempts: number;
  max_attempts: number;
  trace_context: Record<string, string> | null;
  /**
   * The lease's end as the claim wrote it (text: to the microsecond): handing the delivery back clears
   * this lease only, never a later claim's.
   */
  lease: string;
  /**
   * When the delivery was made (text: to the microsecond), its partition's key: its outcome and its
   * hand-back find it in its own month's partition only (docs/webhooks.md, "History and retention").
   */
  created_at: string;
}

/** What one attempt did, as `webhooks.delivery_attempts` and `webhooks.deliveries` record it. */
export interface AttemptOutcome {
  id: string;
  /** The delivery's created_at, as the claim gave it (ClaimedDelivery). */
  created_at: string;
  attempt: number;
  started_at: string;
  duration_ms: number;
  response_status: number | null;
  response_body: string | null;
  error: string | null;
  status: 'delivered' | 'pending' | 'dead';
  next_attempt_at: string | null;
  delivered: boolean;
}

/**
 * The claim: the window of the oldest due deliveries (db/migrations.ts, due_window_by_destination:
 * read in the due index's order, up to its size); the rows picked from it are then locked one by one by
 * primary key, at most each destination's budget ($4, or $3 for a destination the plan does not list),
 * and leased. A destination is a scheme, host and port (webhooks.destination_of; domain/destination.ts),
 * so the URLs of one host share its budget. $1: the destinations left out, $2: the window's size, $5:
 * the limit, $6: where the window starts.
 *
 * This statement and OUTCOME_SQL are sent unnamed, so PostgreSQL plans them at every run. A prepared
 * statement keeps the plan it settles on after its first five runs for the connection's life: made
 * while webhooks.deliveries is small (a new deployment), that plan joins the claimed rows by reading
 * the whole table, at every claim, as the table grows. Turning off sequential scans on the connection
 * only trades that for a read of the whole primary key (test/webhooks/sender-plans.test.ts).
 *
 * Each candidate is locked by its primary key alone, and checked once locked: with the checks inside
 * the locking subquery, statistics from an analysis that saw no pending delivery (autovacuum on a quiet
 * table, then a burst) lead the planner to read the due index from its start for each candidate and
 * filter on the id, a whole backlog per row claimed. `offset 0` keeps the checks from being pushed back
 * into it. The figures are in docs/architecture.md ("The figures behind the sender's settings").
 */
const CLAIM_SQL = `with due as (select * from webhooks.due_window_by_destination($1::text[], $2, $6::timestamptz)),
     ranked as (
       select due.*, row_number() over (partition by destination order by next_attempt_at) as rank from due),
     picked as (
       select locked.id, locked.created_at, r.target from (
           select * from ranked
            where rank <= coalesce(($4::jsonb ->> destination)::int, $3)
            order by next_attempt_at limit $5) r
         cross join lateral (
           select d.id, d.created_at, d.status, d.lease_until, d.next_attempt_at, d.attempts, d.webhook_id
             from webhooks.deliveries d where d.id = r.id offset 0 for update skip locked) locked
        where locked.status = 'pending' and (locked.lease_until is null or locked.lease_until < now())
          and locked.next_attempt_at <= now() and locked.attempts = r.attempts
          and locked.webhook_id is not distinct from r.webhook_id)
     update webhooks.deliveries d set lease_until = now() + interval '${LEASE_SECONDS} seconds'
       from picked
      where d.id = picked.id and d.created_at = picked.created_at
     returning d.id, d.webhook_id, d.event_id, d.event, picked.target as url, d.signed,
               (select coalesce(w.secret, w.secret_sealed) from webhooks.webhooks w where w.id = d.webhook_id) as secret,
               d.environment, d.payload::text as payload,
               (extract(epoch from d.occurred_at) * 1000)::float8 as occurred_at_ms, d.attempts, d.max_attempts,
               d.trace_context, d.lease_until::text as lease, d.created_at::text as created_at,
               (select count(*) from due)::int as scanned,
               (select extract(epoch from min(next_attempt_at)) * 1000 from due)::float8 as window_start_ms`;

/**
 * One batch of outcomes: the deliveries' new state, $1 as JSON, and the rows of the attempts that moved
 * their delivery. A late outcome (its lease ran out and another replica attempted again) finds its
 * delivery past the attempt before it and records nothing; two outcomes of the same attempt are
 * serialized by the row's lock, so the second finds it moved. The attempts' key needs no `on conflict`
 * check, which would be a noticeable part of the statement.
 */
const OUTCOME_SQL = `with v as (
       select * from json_to_recordset($1::json) as v(id uuid, created_at timestamptz, attempt int,
         started_at timestamptz, duration_ms int, response_status int, response_body text, error text,
         status text, next_attempt_at timestamptz, delivered boolean)),
     moved as (
       update webhooks.deliveries d
          set attempts = v.attempt, status = v.status, next_attempt_at = v.next_attempt_at, lease_until = null,
              delivered_at = case when v.delivered then now() else d.delivered_at end
         from v
        where d.id = v.id and d.created_at = v.created_at and d.attempts = v.attempt - 1
       returning d.id)
     insert into webhooks.delivery_attempts (delivery_id, attempt, started_at, duration_ms, response_status, response_body, error)
     select v.id, v.attempt, v.started_at, v.duration_ms, v.response_status, v.response_body, v.error
       from v join moved on moved.id = v.id`;

/**
 * Clears leases, so that the deliveries are due again now: each only while it holds the lease its claim
 * wrote. A hand-back late enough for that lease to have run out (a stalled process) must not clear the
 * lease of another replica's claim since, which would let a third send the same attempt at once.
 */
const HAND_BACK_SQL = `update webhooks.deliveries d set lease_until = null
  from unnest($1::uuid[], $2::text[], $3::text[]) as h(id, lease, created_at)
 where d.id = h.id and d.created_at = h.created_at::timestamptz and d.lease_until = h.lease::timestamptz`;

/** What a claim asks for (domain/claim-plan.ts, ClaimPlan, and where its window starts). */
export interface ClaimRequest {
  /** Destinations left out of the window: no place for them. */
  saturated: string[];
  windowSize: number;
  /** What it may take of a destination `budgets` does not list. */
  unlisted: number;
  budgets: ReadonlyMap<string, number>;
  limit: number;
  /** Where the window starts: an ISO time, or `-infinity`. */
  since: string;
}

/** The deliveries a claim leased, and what it saw of the window (none claimed: nothing known). */
export interface ClaimResult {
  claimed: ClaimedDelivery[];
  /** Rows in the window. */
  scanned: number;
  /** The window's first candidate, ms since the epoch. */
  windowStartMs: number | undefined;
}

/** How many due deliveries a claim of at most `limit` looks at (CLAIM_SCAN_FACTOR). */
export function claimWindowSize(limit: number): number {
  return Math.max(Math.ceil(limit * CLAIM_SCAN_FACTOR), MIN_SCAN);
}

/** A claim as the sender sends it: unnamed (CLAIM_SQL). */
export function claimQuery(claim: ClaimRequest): SenderStatement {
  const budgets = JSON.stringify(Object.fromEntries(claim.budgets));
  return {
    text: CLAIM_SQL,
    values: [claim.saturated, claim.windowSize, claim.unlisted, budgets, claim.limit, claim.since],
  };
}

/** A batch of outcomes as the sender sends it: unnamed (see CLAIM_SQL), the batch as JSON. */
export function outcomeQuery(outcomes: AttemptOutcome[]): SenderStatement {
  return { text: OUTCOME_SQL, values: [JSON.stringify(outcomes)] };
}

/** Leases the due deliveries `claim` allows (CLAIM_SQL). */
export async function claimDeliveries(sql: Sql, claim: ClaimRequest): Promise<ClaimResult> {
  const { text, values } = claimQuery(claim);
  const rows = await sql.query<ClaimedDelivery & { scanned: number; window_start_ms: number }>(text, values, {
    planEachRun: true,
  });
  // The window's size and start come with the rows claimed.
  return { claimed: rows, scanned: rows[0]?.scanned ?? 0, windowStartMs: rows[0]?.window_start_ms };
}

/** Records a batch of outcomes in one statement (OUTCOME_SQL). */
export async function recordOutcomes(sql: Sql, outcomes: AttemptOutcome[]): Promise<void> {
  const { text, values } = outcomeQuery(outcomes);
  await sql.query(text, values, { planEachRun: true });
}

/** Clears the leases of `ids`: due again now, for any replica. */
export async function handBackDeliveries(
  sql: Sql,
  deliveries: ReadonlyArray<Pick<ClaimedDelivery, 'id' | 'lease' | 'created_at'>>,
): Promise<void> {
  await sql.query(HAND_BACK_SQL, [
    deliveries.map((d) => d.id),
    deliveries.map((d) => d.lease),
    deliveries.map((d) => d.created_at),
  ]);
}
