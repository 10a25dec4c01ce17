import { WEBHOOK_HEADERS, WEBHOOK_USER_AGENT, type Environment } from '@seller-api/contracts';
import {
  FORBIDDEN_TARGET_CODE,
  ForbiddenTargetError,
  TARGET_NOT_ALLOWED,
  type Logger,
} from '@seller-api/service-kit';
import { performance } from 'node:perf_hooks';
import type { Pool, QueryConfig } from 'pg';
import { signatureFor } from '@seller-api/webhook-verify';
import { planClaim, type ClaimPlan } from '../domain/claim-plan';
import { retryAfterDelay, scheduledDelay } from '../domain/retry';
import {
  DeadlineWindow,
  literalTargetRefusal,
  type SharedDeadline,
  startHttpClientSpan,
  tracingEnabled,
  w3cTraceHeaders,
  type Resolver,
} from '@seller-api/service-kit';
import { postDelivery, type PostTarget } from './delivery-post';
import { DeliverySlots } from './delivery-slots';
import { DestinationPools } from './destination-pools';
import type { DispatcherMetrics } from '../metrics';

export interface SenderOptions {
  /**
   * A plain `pg` pool for the sender's own statements (claim, release, outcomes): it passes their
   * parameters as parameters (the outcome batch's JSON is not spliced into the SQL text) and skips the
   * ORM on the path every delivery takes.
   */
  pool: Pool;
  logger: Logger;
  metrics: DispatcherMetrics;
  schedule: number[];
  attemptTimeoutMs: number;
  /** Attempts in flight in this process, and at most this many to one destination. */
  concurrency: number;
  destinationConcurrency: number;
  pollIntervalMs: number;
  allowPrivateTargets: boolean;
  resolve?: Resolver;
}

/** A destination URL's parts, and why it cannot be posted to, per environment (null: it can). */
interface DeliveryTarget extends PostTarget {
  hostname: string;
  refusal: Record<Environment, string | null>;
}

interface ClaimedDelivery {
  id: string;
  /** Null for an order's postback. */
  webhook_id: string | null;
  event_id: string;
  event: string;
  url: string;
  signed: boolean;
  secret: string | null;
  environment: Environment;
  /** The event's data as JSON text, spliced into the envelope as it is (no parse and stringify). */
  payload: string;
  /** Milliseconds since the epoch (a number is cheaper to read than a timestamp's text). */
  occurred_at_ms: number;
  attempts: number;
  max_attempts: number;
  trace_context: Record<string, string> | null;
}

/** A change to a webhook that claimed deliveries of it may predate (DeliverySender.changing). */
interface WebhookChange {
  /** Changes being written. */
  changes: number;
  /** When the last one was written (performance.now()): claims sent before then predate it. */
  committedAt: number;
  /** Deliveries taken out while a change is being written, leased until it is. */
  held: ClaimedDelivery[];
}

// Destination URLs whose parts are kept (targetOf).
const TARGET_CACHE_SIZE = 10_000;
// Longer than any attempt can last: a delivery claimed by a replica that died is retried after it.
const LEASE_SECONDS = 60;
// How many of the oldest due deliveries a claim looks at, per delivery it may take (at least
// MIN_SCAN): each costs a few microseconds, and a window full of a few destinations' rows is claimed
// again without them. A quarter more than the limit leaves room for the destinations whose budget
// runs out within it; twice the limit cost PostgreSQL 2 µs more per delivery claimed in a drain
// (bench/webhooks/pg-costs.mjs, bench/README.md). The price: when a few destinations
// near their budget fill the window, a claim comes back short and another follows sooner.
const CLAIM_SCAN_FACTOR = 1.25;
const MIN_SCAN = 50;
// Claims in flight at once (domain/claim-plan.ts).
const MAX_CLAIMS = 2;
// A claim is only sent beside another for at least this share of WEBHOOK_CONCURRENCY: smaller ones
// wait for the first to come back, rather than cost a round trip for a delivery or two.
const OVERLAP_SHARE = 1 / 8;
// While at least STOCKED_SHARE of WEBHOOK_CONCURRENCY waits for a slot (a whole round of the slots), a
// claim waits until it may take STOCKED_CLAIM_SHARE of it. A claim costs PostgreSQL a fixed part (its
// planning, the window's function, the commit) besides its rows: in a drain, claiming whatever a few
// answers freed made claims of about 55 rows, and PostgreSQL's CPU per delivery fell by a sixth with
// claims of a few hundred (bench/README.md). The waiting deliveries keep the slots
// busy meanwhile; once fewer wait, any place is worth a claim again, so the sender never stalls.
const STOCKED_SHARE = 1;
const STOCKED_CLAIM_SHARE = 2;
// Claimed deliveries waiting for a slot (events/delivery-slots.ts), for a destination that answers
// within FAST_MS: what its slots get through in half of MAX_WAIT_MS, up to WAITING_SHARE times its
// slots, and WAITING_SHARE times WEBHOOK_CONCURRENCY in all; handed back after MAX_WAIT_MS unstarted.
// The deeper the queue, the longer a claim's round trip can take before a slot goes idle: with one
// share, a drain of fast destinations ran out of claimed deliveries between claims (bench/README.md).
const WAITING_SHARE = 4;
const FAST_MS = 100;
const MAX_WAIT_MS = 250;
// How far before the last full window's first candidate later claims read from (clocks of the
// replicas that stamp new deliveries may differ by this much), and for how long, at most, before a
// claim reads the whole due index again (claim).
const CURSOR_MARGIN_MS = 1000;

/**
 * The claim (DeliverySender.claim): the window of the oldest due deliveries (db/migrations.ts,
 * due_window: read in the due index's order, up to its size); the rows picked from it are then locked
 * one by one by primary key, at most each destination's budget ($4, or $3 for a destination the plan
 * does not list), and leased. $1: the destinations left out, $2: the window's size, $5: the limit, $6:
 * where the window starts.
 *
 * This statement and OUTCOME_SQL are sent unnamed, so PostgreSQL plans them at every run (about 0.3
 * and 0.1 ms). Prepared, each kept the plan settled on after its first five runs for the connection's
 * life: made while webhooks.deliveries was small (a new deployment), that plan joined the claimed rows
 * by reading the whole table, at every claim, as the table grew without end (a third of PostgreSQL's
 * time in a drain of 40,000, bench/README.md). Turning off sequential scans on the connection only
 * traded that for a read of the whole primary key (test/webhooks/sender-plans.test.ts).
 *
 * Each candidate is locked by its primary key alone, and checked once locked: with the checks inside
 * the locking subquery, statistics from an analysis that saw no pending delivery (autovacuum on a
 * quiet table, then a burst) led the planner to read the due index from its start for each candidate
 * and filter on the id, a whole backlog per row claimed (5 s per claim of 128 with 40,000 due).
 * `offset 0` keeps the checks from being pushed back into it.
 */
const CLAIM_SQL = `with due as (select * from webhooks.due_window($1::text[], $2, $6::timestamptz)),
     ranked as (
       select due.*, row_number() over (partition by target order by next_attempt_at) as rank from due),
     picked as (
       select locked.id, r.target from (
           select * from ranked
            where rank <= coalesce(($4::jsonb ->> target)::int, $3)
            order by next_attempt_at limit $5) r
         cross join lateral (
           select d.id, d.status, d.lease_until, d.next_attempt_at, d.attempts, d.webhook_id
             from webhooks.deliveries d where d.id = r.id offset 0 for update skip locked) locked
        where locked.status = 'pending' and (locked.lease_until is null or locked.lease_until < now())
          and locked.next_attempt_at <= now() and locked.attempts = r.attempts
          and locked.webhook_id is not distinct from r.webhook_id)
     update webhooks.deliveries d set lease_until = now() + interval '${LEASE_SECONDS} seconds'
       from picked
      where d.id = picked.id
     returning d.id, d.webhook_id, d.event_id, d.event, picked.target as url, d.signed,
               (select w.secret from webhooks.webhooks w where w.id = d.webhook_id) as secret,
               d.environment, d.payload::text as payload,
               (extract(epoch from d.occurred_at) * 1000)::float8 as occurred_at_ms, d.attempts, d.max_attempts,
               d.trace_context, (select count(*) from due)::int as scanned,
               (select extract(epoch from min(next_attempt_at)) * 1000 from due)::float8 as window_start_ms`;

/**
 * One batch of outcomes (OutcomeRecorder): the deliveries' new state, $1 as JSON, and the rows of the
 * attempts that moved their delivery. A late outcome (its lease ran out and another replica attempted
 * again) finds its delivery past the attempt before it and records nothing; two outcomes of the same
 * attempt are serialized by the row's lock, so the second finds it moved. No `on conflict` check is
 * needed on the attempts' key (it cost a tenth of the statement).
 */
const OUTCOME_SQL = `with v as (
       select * from json_to_recordset($1::json) as v(id uuid, attempt int, started_at timestamptz,
         duration_ms int, response_status int, response_body text, error text, status text,
         next_attempt_at timestamptz, delivered boolean)),
     moved as (
       update webhooks.deliveries d
          set attempts = v.attempt, status = v.status, next_attempt_at = v.next_attempt_at, lease_until = null,
              delivered_at = case when v.delivered then now() else d.delivered_at end
         from v
        where d.id = v.id and d.attempts = v.attempt - 1
       returning d.id)
     insert into webhooks.delivery_attempts (delivery_id, attempt, started_at, duration_ms, response_status, response_body, error)
     select v.id, v.attempt, v.started_at, v.duration_ms, v.response_status, v.response_body, v.error
       from v join moved on moved.id = v.id`;

/** How many due deliveries a claim of at most `limit` looks at (CLAIM_SCAN_FACTOR). */
export function claimWindowSize(limit: number): number {
  return Math.max(Math.ceil(limit * CLAIM_SCAN_FACTOR), MIN_SCAN);
}

/** A claim as the sender sends it: unnamed (CLAIM_SQL). */
export function claimQuery(claim: {
  saturated: string[];
  windowSize: number;
  unlisted: number;
  budgets: ReadonlyMap<string, number>;
  limit: number;
  since: string;
}): QueryConfig {
  const budgets = JSON.stringify(Object.fromEntries(claim.budgets));
  return {
    text: CLAIM_SQL,
    values: [claim.saturated, claim.windowSize, claim.unlisted, budgets, claim.limit, claim.since],
  };
}

/** A batch of outcomes as the sender sends it: unnamed (see CLAIM_SQL), the batch as JSON. */
export function outcomeQuery(outcomes: AttemptOutcome[]): QueryConfig {
  return { text: OUTCOME_SQL, values: [JSON.stringify(outcomes)] };
}

/**
 * Sends due deliveries. Rows are claimed with FOR UPDATE SKIP LOCKED and leased, so several replicas
 * never send the same attempt; each destination has its own small concurrency budget, so a slow or
 * failing receiver never holds up the others (its deliveries wait in the database, not in a queue; only
 * a destination that answers fast has a few claimed deliveries waiting here, for at most MAX_WAIT_MS).
 */
export class DeliverySender {
  private readonly slots: DeliverySlots<ClaimedDelivery>;
  private sweeper: NodeJS.Timeout | null = null;
  /** Attempts started within 10 ms share one deadline (kit deadline.ts), each cut off at most that late. */
  private readonly deadlines: DeadlineWindow;
  private readonly attempts = new Set<Promise<void>>();
  /** The claims in flight, and when each was sent (performance.now()). */
  private readonly claims = new Map<ClaimPlan, { run: Promise<void>; sentAt: number }>();
  /**
   * Webhooks being changed here, or changed while claims sent before were in flight: their deliveries
   * claimed before the change are handed back, not started (changing).
   */
  private readonly changingWebhooks = new Map<string, WebhookChange>();
  /** Something may be due that no claim has looked for yet: a wake, a slot freed, a full claim. */
  private dirty = false;
  /**
   * A wake came that only an open claim answers in full (a claim beside an open one sees only the
   * destinations it lists, and the open one's snapshot may predate the new delivery).
   */
  private openWanted = false;
  /** Whether a freed slot may find due deliveries the last claims left behind (claimAndLaunch). */
  private demand = { any: true, destinations: new Set<string>() };
  private stopped = false;
  private timer: NodeJS.Timeout | null = null;
  private timerAt = Infinity;
  /** What the next turn of the event loop does (wakeSoon). */
  private soon: 'wake' | 'pump' | null = null;
  private readonly pools: DestinationPools;
  private readonly outcomes: OutcomeRecorder;
  private readonly targets = new Map<string, DeliveryTarget>();
  /**
   * Where the last full window's first candidate was: every due delivery older than it was skipped (its
   * destination full, its webhook paused, or leased). Later claims read from there (less a margin)
   * while those destinations stay full, until `until` (claim).
   */
  private cursor: { since: number; full: Set<string>; until: number } | null = null;

  constructor(private readonly options: SenderOptions) {
    this.outcomes = new OutcomeRecorder(options.pool, options.logger);
    this.deadlines = new DeadlineWindow(options.attemptTimeoutMs);
    this.slots = new DeliverySlots({
      concurrency: options.concurrency,
      destinationConcurrency: options.destinationConcurrency,
      waitingPlaces: Math.ceil(options.destinationConcurrency * WAITING_SHARE),
      waitingShare: WAITING_SHARE,
      fastMs: FAST_MS,
      waitMs: MAX_WAIT_MS / 2,
    });
    this.pools = new DestinationPools({
      connections: options.destinationConcurrency,
      connectTimeoutMs: options.attemptTimeoutMs,
      allowPrivateTargets: options.allowPrivateTargets,
      resolve: options.resolve,
    });
  }

  start(): void {
    this.wakeAt(Date.now());
  }

  /**
   * Like wake, for deliveries that may be older than what claims read lately: re-sent ones, or a
   * paused webhook's, now resumed.
   */
  rescan(): void {
    this.cursor = null;
    this.wake();
  }

  /**
   * Runs `change` to a webhook (a pause, a new URL, a deletion) so that nothing this process claimed
   * before it goes out after it: the webhook's deliveries waiting for a slot are taken out now, and so
   * are those that a claim sent before the change committed brings. They stay leased while the change
   * is written (no replica claims them as they were) and are handed back once it is: claimed again,
   * they are as the change left them (not due while paused, posted to the new URL). Attempts in flight
   * finish; another replica's waiting deliveries go out within MAX_WAIT_MS and its sweep.
   */
  async changing<R>(webhookId: string, change: () => Promise<R>): Promise<R> {
    const entry = this.changingWebhooks.get(webhookId) ?? { changes: 0, committedAt: -Infinity, held: [] };
    entry.changes += 1;
    this.changingWebhooks.set(webhookId, entry);
    entry.held.push(...this.slots.takeWaitingWhere((d) => d.webhook_id === webhookId));
    try {
      return await change();
    } finally {
      entry.changes -= 1;
      entry.committedAt = performance.now();
      if (entry.changes === 0) this.handBack(entry.held.splice(0));
      this.forgetSettledChanges();
    }
  }

  /** As `changing`, for a change already committed: a rotation that retired `webhookId`. */
  changed(webhookId: string): void {
    void this.changing(webhookId, () => Promise.resolve());
  }

  /** Claims and sends now, or as soon as a claim in flight leaves room. */
  wake(): void {
    if (this.stopped) return;
    this.dirty = true;
    this.openWanted = true;
    this.pump();
  }

  /**
   * A wake after the answers already in: slots freed in the same turn of the event loop share one
   * claim (under load, many answers arrive together), instead of one claim query each. `wake: false`
   * only looks again at a claim already wanted (pump), without asking for an open one.
   */
  private wakeSoon(wake = true): void {
    if (this.stopped) return;
    const pending = this.soon;
    this.soon = wake || pending === 'wake' ? 'wake' : 'pump';
    if (pending) return;
    setImmediate(() => {
      const soon = this.soon;
      this.soon = null;
      if (soon === 'wake') this.wake();
      else if (!this.stopped) this.pump();
    });
  }

  /** Keeps one timer, at the earliest time something is known to be due (or the poll interval). */
  private wakeAt(at: number): void {
    if (this.stopped || at >= this.timerAt) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(
      () => {
        this.timer = null;
        this.timerAt = Infinity;
        this.wake();
      },
      Math.max(0, at - Date.now()),
    );
    this.timer.unref();
  }

  /** Sends claims while something may be due and there are slots no claim in flight was promised. */
  private pump(): void {
    while (!this.stopped && this.claims.size < MAX_CLAIMS) {
      const openInFlight = [...this.claims.keys()].some((claim) => claim.open);
      if (!this.dirty && !(this.openWanted && !openInFlight)) return;
      const plan = planClaim({
        capacity: this.slots.capacity,
        destinationCapacity: (url) => this.slots.destinationCapacity(url),
        defaultDestinationCapacity: this.options.destinationConcurrency,
        held: this.slots.total,
        heldPerDestination: this.slots.heldPerDestination,
        claims: this.claims.keys(),
        minOverlap: Math.ceil(this.options.concurrency * OVERLAP_SHARE),
        minLimit:
          this.slots.waitingTotal >= this.options.concurrency * STOCKED_SHARE
            ? this.options.concurrency * STOCKED_CLAIM_SHARE
            : 1,
      });
      if (!plan) return;
      this.dirty = false;
      if (plan.open) this.openWanted = false;
      const sentAt = performance.now();
      const run = this.claimAndLaunch(plan, sentAt)
        .catch((err: unknown) => {
          this.options.logger.warn({ err: (err as Error).message }, 'delivery claim failed');
        })
        .finally(() => {
          this.claims.delete(plan);
          if (this.changingWebhooks.size > 0) this.forgetSettledChanges();
          this.pump();
          if (this.claims.size === 0) this.wakeAt(Date.now() + this.options.pollIntervalMs);
        });
      this.claims.set(plan, { run, sentAt });
    }
  }

  /** One claim and the attempts it starts; marks the sender dirty when more may be due. */
  private async claimAndLaunch(plan: ClaimPlan, sentAt: number): Promise<void> {
    const { claimed, windowFull, scanned, full } = await this.claim(plan);
    const kept = this.launch(claimed, sentAt);
    // It took all it could: there may be more. Or its window was full of destinations now saturated:
    // the next claim scans without them (each such claim takes deliveries, so this ends).
    if ((claimed.length === plan.limit && kept === claimed.length) || (windowFull && kept > 0)) {
      this.dirty = true;
    }
    // What a freed slot may be worth a claim for. Due deliveries were left for lack of room (the
    // limit, the window, a destination's budget): any slot. Destinations left out with no budget: a
    // slot of theirs. Otherwise the claim took everything due, and a freed slot is not worth a claim
    // (new deliveries, retries coming due and the poll wake the sender themselves): under a steady
    // flow of events, a claim per answer scanned the due index for nothing.
    const leftBehind =
      claimed.length === plan.limit || windowFull || scanned > claimed.length || kept < claimed.length;
    if (plan.open) {
      this.demand = { any: leftBehind, destinations: new Set(full) };
    } else {
      // A claim beside an open one sees only part of the window: it adds to what is known.
      this.demand.any ||= leftBehind;
      for (const url of full) this.demand.destinations.add(url);
    }
  }

  /**
   * Starts the attempts of claimed deliveries that have a slot; the others wait for one (their claim was
   * promised the places). Stopping, it hands everything back. Returns how many it kept.
   */
  private launch(claimed: ClaimedDelivery[], sentAt: number): number {
    if (claimed.length === 0) return 0;
    if (this.stopped) {
      this.handBack(claimed);
      return 0;
    }
    const now = Date.now();
    const refused: ClaimedDelivery[] = [];
    for (const delivery of claimed) {
      const change = this.changePredating(delivery, sentAt);
      if (change) {
        // Held leased until the change is written, or handed back now that it is.
        if (change.changes > 0) change.held.push(delivery);
        else refused.push(delivery);
        continue;
      }
      const admitted = this.slots.admit(delivery, now);
      if (admitted === 'start') this.startAttempt(delivery);
      else if (admitted === 'refuse') refused.push(delivery);
    }
    // A destination that turned slow while the claim was in flight: not kept waiting. A webhook changed
    // meanwhile: claimed again as the change left it.
    this.handBack(refused);
    if (this.slots.waitingTotal > 0 && !this.sweeper) {
      // Waiting deliveries not started in time go back to the database.
      this.sweeper = setInterval(() => {
        this.handBack(this.slots.expired(Date.now(), MAX_WAIT_MS));
        if (this.slots.waitingTotal === 0 && this.sweeper) {
          clearInterval(this.sweeper);
          this.sweeper = null;
        }
      }, MAX_WAIT_MS / 2);
      this.sweeper.unref();
    }
    return claimed.length - refused.length;
  }

  /** Starts one attempt in the slot taken for it. */
  private startAttempt(delivery: ClaimedDelivery): void {
    // The destination's slot is freed as soon as its answer is in (or the attempt failed), not after
    // the bookkeeping commits: the row stays leased until then, so nobody can claim it meanwhile. The
    // slot goes at once to a delivery waiting for it.
    let freed = false;
    const free = (durationMs: number | null) => {
      if (freed) return;
      freed = true;
      // Stopping, the waiting deliveries are handed back (stop), not started.
      const next = this.slots.free(delivery.url, durationMs, !this.stopped);
      if (next) this.startAttempt(next);
      if (this.demand.any || this.demand.destinations.has(delivery.url)) this.wakeSoon();
      // A claim is wanted that found too few places (STOCKED_SHARE): a freed one may make enough.
      else if (this.dirty) this.wakeSoon(false);
    };
    const done = () => {
      free(null);
      this.attempts.delete(attempt);
    };
    const attempt: Promise<void> = this.attempt(delivery, this.deadlines.deadline(), free).then(
      done,
      (err: unknown) => {
        this.options.logger.error({ err, delivery: delivery.id }, 'delivery attempt failed unexpectedly');
        done();
      },
    );
    this.attempts.add(attempt);
  }

  /** The change to its webhook that `delivery`, claimed by a claim sent at `sentAt`, predates, if any. */
  private changePredating(delivery: ClaimedDelivery, sentAt: number): WebhookChange | null {
    if (delivery.webhook_id === null || this.changingWebhooks.size === 0) return null;
    const entry = this.changingWebhooks.get(delivery.webhook_id);
    return entry !== undefined && (entry.changes > 0 || sentAt <= entry.committedAt) ? entry : null;
  }

  /** Drops the changes that every claim in flight was sent after. */
  private forgetSettledChanges(): void {
    let oldestClaim = Infinity;
    for (const { sentAt } of this.claims.values()) oldestClaim = Math.min(oldestClaim, sentAt);
    for (const [id, entry] of this.changingWebhooks) {
      if (entry.changes === 0 && entry.committedAt < oldestClaim) this.changingWebhooks.delete(id);
    }
  }

  /** Clears the leases of claimed deliveries this process will not attempt, so that they are due again now. */
  private handBack(deliveries: ClaimedDelivery[]): void {
    if (deliveries.length === 0) return;
    const releasing = this.options.pool
      .query(`update webhooks.deliveries set lease_until = null where id = any($1::uuid[])`, [
        deliveries.map((d) => d.id),
      ])
      .then(
        () => undefined,
        (err: unknown) =>
          this.options.logger.warn({ err: (err as Error).message }, 'handing back deliveries failed'),
      );
    this.attempts.add(releasing);
    void releasing.finally(() => this.attempts.delete(releasing));
    // They are due since long ago: the next claim reads the whole due index.
    this.cursor = null;
    // No wake: a claim now would take the same rows again. They are due for the next claim (a freed
    // slot, a new delivery, the poll) or another replica.
    this.demand.any = true;
  }

  /**
   * Leases due deliveries as the plan allows: at most `limit`, and for each destination no more than its
   * budget, so a busy destination's backlog stays in the database instead of being claimed and handed
   * back. The window runs over the oldest due rows only (a bounded scan), without the destinations that
   * have no budget. The scan reads the statement's snapshot, so what it saw is checked again on the
   * locked row: still pending, due and unleased (not leased meanwhile by a claim in flight beside this
   * one, or by another replica), not attempted meanwhile (its retry keeps its backoff) and not moved to
   * another webhook by a rotation (it is signed with the new secret, by a later claim).
   */
  private async claim(
    plan: ClaimPlan,
  ): Promise<{ claimed: ClaimedDelivery[]; windowFull: boolean; scanned: number; full: string[] }> {
    // Destinations without a free place: left out of the window.
    const full: string[] = [];
    for (const [url, budget] of plan.budgets) if (budget <= 0) full.push(url);
    const scanLimit = claimWindowSize(plan.limit);
    // What the last full window skipped is skipped again while its destinations are still full: a slow
    // destination's backlog, older than everyone else's, is read once per poll interval, not by every
    // claim. Anything older that becomes claimable otherwise (a hand-back here, a resumed webhook, a
    // lease that ran out elsewhere) is found by the next full read, at most a poll interval later.
    const now = Date.now();
    const cursor = this.cursor;
    const fromCursor =
      cursor !== null && now < cursor.until && [...cursor.full].every((url) => full.includes(url));
    const since = fromCursor ? new Date(cursor.since - CURSOR_MARGIN_MS).toISOString() : '-infinity';
    const { rows } = await this.options.pool.query<
      ClaimedDelivery & { scanned: number; window_start_ms: number }
    >(
      claimQuery({
        saturated: full,
        windowSize: scanLimit,
        unlisted: plan.unlisted,
        budgets: plan.budgets,
        limit: plan.limit,
        since,
      }),
    );
    // The window's size and start come with the rows claimed: none claimed, none known.
    const scanned = rows[0]?.scanned ?? 0;
    const windowStart = rows[0]?.window_start_ms;
    if (!fromCursor && this.cursor === cursor && windowStart !== undefined) {
      this.cursor = {
        since: windowStart,
        full: new Set(full),
        until: now + this.options.pollIntervalMs,
      };
    }
    return { claimed: rows, windowFull: scanned >= scanLimit, scanned, full };
  }

  private async attempt(
    delivery: ClaimedDelivery,
    deadline: SharedDeadline,
    free: (durationMs: number | null) => void,
  ): Promise<void> {
    const number = delivery.attempts + 1;
    // The envelope (docs/webhooks.md, "Envelope"), its data spliced in as stored (JSON text from jsonb).
    const body =
      `{"event":${JSON.stringify(delivery.event)},` +
      `"occurred_at":"${new Date(delivery.occurred_at_ms).toISOString()}",` +
      `"delivery_attempt":${number},"data":${delivery.payload}}`;
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': WEBHOOK_USER_AGENT,
      [WEBHOOK_HEADERS.EVENT]: delivery.event,
      [WEBHOOK_HEADERS.EVENT_ID]: delivery.event_id,
    };
    if (delivery.signed && delivery.secret) {
      const timestamp = Math.floor(Date.now() / 1000);
      headers[WEBHOOK_HEADERS.TIMESTAMP] = String(timestamp);
      headers[WEBHOOK_HEADERS.SIGNATURE] = signatureFor(delivery.secret, delivery.event_id, timestamp, body);
    }
    // Each attempt is a CLIENT span in the trace of the event that caused it, and tells the receiver
    // (W3C traceparent, docs/webhooks.md).
    const traced = tracingEnabled()
      ? startHttpClientSpan('POST', delivery.trace_context, {
          'webhook.event': delivery.event,
          'webhook.event_id': delivery.event_id,
          'webhook.delivery_attempt': number,
        })
      : null;
    if (traced) Object.assign(headers, w3cTraceHeaders(traced.context));
    const startedAt = new Date();
    let status: number | null = null;
    let excerpt: string | null = null;
    let error: string | null = null;
    let retryAfter: string | null = null;
    const target = this.targetOf(delivery.url);
    // Host only: a receiver's path or query can hold its own token.
    if (target.hostname) traced?.span.setAttribute('server.address', target.hostname);
    const refusal = target.refusal[delivery.environment];
    if (refusal) {
      error = refusal;
      this.options.logger.info(
        { delivery: delivery.id, host: target.hostname },
        'delivery refused: a literal address webhooks may not target',
      );
    } else {
      const answer = await postDelivery(
        this.pools.for(delivery.environment, delivery.url, target.origin),
        target,
        headers,
        body,
        this.options.attemptTimeoutMs,
        deadline,
      );
      status = answer.status;
      retryAfter = answer.retryAfter;
      excerpt = answer.excerpt;
      // Stored as text: no NUL characters.
      if (answer.error) {
        error = describeError(answer.error, this.options.attemptTimeoutMs).replaceAll('\u0000', '');
        // The attempt (which the seller reads) says only that the target is not allowed; which
        // address the host resolved to is for operators.
        const forbidden = forbiddenTarget(answer.error);
        if (forbidden)
          this.options.logger.info({ delivery: delivery.id, detail: forbidden.detail }, 'delivery refused');
      }
    }
    const durationMs = Date.now() - startedAt.getTime();
    traced?.end(status, error);
    free(status === null ? null : durationMs);
    const delivered = status !== null && status >= 200 && status < 300;
    if (number === 1)
      this.options.metrics.firstAttemptLag.observe((startedAt.getTime() - delivery.occurred_at_ms) / 1000);
    let nextAttemptAt: Date | null = null;
    if (!delivered && number < delivery.max_attempts) {
      const scheduled = scheduledDelay(number, this.options.schedule);
      if (scheduled !== null) nextAttemptAt = new Date(Date.now() + retryAfterDelay(retryAfter, scheduled));
    }
    const outcome = delivered ? 'delivered' : nextAttemptAt ? 'retry' : 'dead';
    this.options.metrics.deliveries.inc({ outcome });
    this.options.metrics.attemptDuration.observe(durationMs / 1000);
    this.outcomes.record({
      id: delivery.id,
      attempt: number,
      started_at: startedAt.toISOString(),
      duration_ms: durationMs,
      response_status: status,
      response_body: excerpt,
      error,
      status: delivered ? 'delivered' : nextAttemptAt ? 'pending' : 'dead',
      next_attempt_at: nextAttemptAt?.toISOString() ?? null,
      delivered,
    });
    if (nextAttemptAt) this.wakeAt(nextAttemptAt.getTime());
  }

  /**
   * The URL taken apart once per destination, not once per attempt: a few webhooks' URLs serve
   * thousands of deliveries. The cache is dropped whole when it grows past TARGET_CACHE_SIZE.
   */
  private targetOf(url: string): DeliveryTarget {
    let target = this.targets.get(url);
    if (target) return target;
    try {
      const { origin, pathname, search, hostname } = new URL(url);
      // A literal IP never goes through the resolver (guardedLookup), so it is checked here.
      const refusal = (environment: Environment) =>
        literalTargetRefusal(hostname, { environment, allowPrivate: this.options.allowPrivateTargets });
      target = {
        origin,
        path: `${pathname}${search}`,
        hostname,
        refusal: { test: refusal('test'), live: refusal('live') },
      };
    } catch {
      target = { origin: '', path: '', hostname: '', refusal: { test: 'invalid URL', live: 'invalid URL' } };
    }
    if (this.targets.size >= TARGET_CACHE_SIZE) this.targets.clear();
    this.targets.set(url, target);
    return target;
  }

  /** Finishes the attempts in flight (their outcome is recorded), then closes the connections. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.sweeper) clearInterval(this.sweeper);
    // The claims in flight hand back what they took, and the deliveries waiting for a slot go back too;
    // then the attempts in flight finish.
    await Promise.allSettled([...this.claims.values()].map((claim) => claim.run));
    this.handBack(this.slots.takeAllWaiting());
    for (const entry of this.changingWebhooks.values()) this.handBack(entry.held.splice(0));
    await Promise.allSettled([...this.attempts]);
    await this.outcomes.settled();
    await this.pools.close();
  }
}

/** What one attempt did, as `webhooks.delivery_attempts` and `webhooks.deliveries` record it. */
export interface AttemptOutcome {
  id: string;
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
 * Records attempt outcomes in batches: the outcomes that arrive while one batch is being written go in
 * the next, each batch one statement (the attempt rows and the deliveries' new state together). Under
 * load that is one round trip for many attempts instead of a transaction each; alone, an outcome is
 * written at once. The delivery stays leased until its outcome is committed.
 * An outcome only moves a delivery that is still at the attempt before it: a late one (its lease ran out
 * and another replica attempted again) changes nothing.
 */
class OutcomeRecorder {
  private queue: AttemptOutcome[] = [];
  private writing: Promise<void> | null = null;

  constructor(
    private readonly pool: Pool,
    private readonly logger: Logger,
  ) {}

  record(outcome: AttemptOutcome): void {
    this.queue.push(outcome);
    this.writing ??= this.drain().finally(() => (this.writing = null));
  }

  /** Resolves once every outcome recorded so far is written (or failed to be). */
  async settled(): Promise<void> {
    while (this.writing) await this.writing;
  }

  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue;
      this.queue = [];
      try {
        await this.write(batch);
      } catch {
        // One bad outcome, a deadlock with a rotation, a dropped connection: each outcome is written
        // alone, so the others are not lost (a lost outcome is a duplicate POST once its lease runs out).
        for (const outcome of batch) {
          await this.write([outcome]).catch((err: unknown) =>
            this.logger.error({ err, delivery: outcome.id }, 'recording a delivery attempt failed'),
          );
        }
      }
    }
  }

  private async write(outcomes: AttemptOutcome[]): Promise<void> {
    await this.pool.query(outcomeQuery(outcomes));
  }
}

/** The refusal of guardedLookup in an attempt's error (undici may wrap it as the cause). */
function forbiddenTarget(err: unknown): ForbiddenTargetError | null {
  if (err instanceof ForbiddenTargetError) return err;
  const cause = (err as { cause?: unknown } | null)?.cause;
  return cause instanceof ForbiddenTargetError ? cause : null;
}

function describeError(err: unknown, timeoutMs: number): string {
  const e = err as {
    code?: string;
    name?: string;
    message?: string;
    cause?: { code?: string; message?: string };
  };
  const code = e.code ?? e.cause?.code;
  if (e.name === 'TimeoutError' || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT')
    return `timeout after ${timeoutMs} ms`;
  if (code === FORBIDDEN_TARGET_CODE) return TARGET_NOT_ALLOWED;
  return [code, e.message ?? e.cause?.message].filter(Boolean).join(': ') || 'network error';
}
