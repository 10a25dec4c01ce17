import type { Logger, Sql } from '@seller-api/service-kit';
import {
  DeadlineWindow,
  type SharedDeadline,
  startHttpClientSpan,
  tracingEnabled,
  w3cTraceHeaders,
  type Resolver,
  WriteBatch,
} from '@seller-api/service-kit';
import { performance } from 'node:perf_hooks';
import {
  type AttemptOutcome,
  claimDeliveries,
  type ClaimedDelivery,
  claimWindowSize,
  handBackDeliveries,
  recordOutcomes,
} from '../db/delivery-claims';
import { planClaim, type ClaimPlan } from '../domain/claim-plan';
import { classifyOutcome, describeAttemptError, forbiddenTarget } from '../domain/delivery-outcome';
import { buildRequest } from '../domain/delivery-request';
import { SecretOpenError, type SecretBox } from '../domain/secret-box';
import { postDelivery } from './delivery-post';
import { DeliverySlots } from './delivery-slots';
import { DeliveryTargets } from './delivery-targets';
import { DestinationPools } from './destination-pools';
import type { DispatcherMetrics } from '../metrics';

export interface SenderOptions {
  /**
   * The kit's raw statements for the sender's own (db/delivery-claims.ts): parameters passed as
   * parameters (the outcome batch's JSON is not spliced into the SQL text), no ORM on the path every
   * delivery takes.
   */
  sql: Sql;
  logger: Logger;
  metrics: DispatcherMetrics;
  schedule: number[];
  attemptTimeoutMs: number;
  /** Attempts in flight in this process, and at most this many to one destination. */
  concurrency: number;
  destinationConcurrency: number;
  pollIntervalMs: number;
  allowPrivateTargets: boolean;
  /** A locally run system: `test` deliveries may reach loopback (localTargets in service-kit). */
  allowLoopbackTargets?: boolean;
  resolve?: Resolver;
  /** Opens the webhooks' sealed secrets (docs/webhooks.md, "Secrets at rest"). */
  secrets: SecretBox;
}

// Opened secrets kept, at most (dropped whole beyond): opening costs a cipher's set-up per attempt.
const OPENED_SECRETS = 10_000;

/** What an attempt records when its webhook's secret cannot be opened: nothing is sent unsigned. */
const SECRET_UNAVAILABLE = 'Signing secret unavailable';

/** A claimed delivery and its destination (domain/destination.ts): what its slot is counted against. */
type Claimed = ClaimedDelivery & { destination: string };

/** A change to a webhook that claimed deliveries of it may predate (DeliverySender.changing). */
interface WebhookChange {
  /** Changes being written. */
  changes: number;
  /** When the last one was written (performance.now()): claims sent before then predate it. */
  committedAt: number;
  /** Deliveries taken out while a change is being written, leased until it is. */
  held: Claimed[];
}

// Claims in flight at once (domain/claim-plan.ts).
const MAX_CLAIMS = 2;
// A claim is only sent beside another for at least this share of WEBHOOK_CONCURRENCY: smaller ones
// wait for the first to come back, rather than cost a round trip for a delivery or two.
const OVERLAP_SHARE = 1 / 8;
// While at least STOCKED_SHARE of WEBHOOK_CONCURRENCY waits for a slot (a whole round of the slots), a
// claim waits until it may take STOCKED_CLAIM_SHARE of it. A claim costs PostgreSQL a fixed part (its
// planning, the window's function, the commit) besides its rows, so claims of a few hundred cost less
// per delivery than claims of whatever a few answers freed
// (docs/architecture.md, "The figures behind the sender's settings"). The waiting deliveries keep the
// slots busy meanwhile; once fewer wait, any place is worth a claim again, so the sender never stalls.
const STOCKED_SHARE = 1;
const STOCKED_CLAIM_SHARE = 2;
// Claimed deliveries waiting for a slot (events/delivery-slots.ts), for a destination that answers
// within FAST_MS: what its slots get through in half of MAX_WAIT_MS, up to WAITING_SHARE times its
// slots, and WAITING_SHARE times WEBHOOK_CONCURRENCY in all; handed back after MAX_WAIT_MS unstarted.
// The deeper the queue, the longer a claim's round trip can take before a slot goes idle: with a
// shallower one, a drain of fast destinations runs out of claimed deliveries between claims.
const WAITING_SHARE = 4;
const FAST_MS = 100;
const MAX_WAIT_MS = 250;
// How far before the last full window's first candidate later claims read from (clocks of the
// replicas that stamp new deliveries may differ by this much), and for how long, at most, before a
// claim reads the whole due index again (claim).
const CURSOR_MARGIN_MS = 1000;

/**
 * Sends due deliveries. Rows are claimed with FOR UPDATE SKIP LOCKED and leased, so several replicas
 * never send the same attempt; each destination has its own small concurrency budget, so a slow or
 * failing receiver never holds up the others (its deliveries wait in the database, not in a queue; only
 * a destination that answers fast has a few claimed deliveries waiting here, for at most MAX_WAIT_MS).
 */
export class DeliverySender {
  private readonly slots: DeliverySlots<Claimed>;
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
  /**
   * Outcomes are recorded in batches: those that come while one batch is being written go in the next,
   * one statement each (the attempts' rows and the deliveries' new state together), on one connection.
   * Under load that is one round trip for many attempts instead of a transaction each. A delivery stays
   * leased until its outcome is committed. A batch that fails (one bad outcome, a deadlock with a
   * rotation, a dropped connection) is written again one outcome at a time, so the others are not lost:
   * a lost outcome is a duplicate POST once its lease runs out.
   */
  private readonly outcomes: WriteBatch<AttemptOutcome, void>;
  private readonly targets: DeliveryTargets;
  /** Opened secrets, by webhook and stored (sealed) text. */
  private readonly opened = new Map<string, string>();
  /**
   * Where the last full window's first candidate was: every due delivery older than it was skipped (its
   * destination full, its webhook paused, or leased). Later claims read from there (less a margin)
   * while those destinations stay full, until `until` (claim).
   */
  private cursor: { since: number; full: Set<string>; until: number } | null = null;

  constructor(private readonly options: SenderOptions) {
    this.outcomes = new WriteBatch(
      async (outcomes) => {
        await recordOutcomes(options.sql, outcomes);
        return outcomes.map(() => undefined);
      },
      { maxInFlight: 1, maxBatch: Infinity, retryOneAtATime: true },
    );
    this.targets = new DeliveryTargets(options.allowPrivateTargets, options.allowLoopbackTargets);
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
      allowLoopbackTargets: options.allowLoopbackTargets,
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
        destinationCapacity: (destination) => this.slots.destinationCapacity(destination),
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
      for (const destination of full) this.demand.destinations.add(destination);
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
    for (const row of claimed) {
      // Its host's slots, whichever of the host's URLs it goes to (domain/destination.ts).
      const delivery: Claimed = { ...row, destination: this.targets.of(row.url).destination };
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
  private startAttempt(delivery: Claimed): void {
    // The destination's slot is freed as soon as its answer is in (or the attempt failed), not after
    // the bookkeeping commits: the row stays leased until then, so nobody can claim it meanwhile. The
    // slot goes at once to a delivery waiting for it.
    let freed = false;
    const free = (durationMs: number | null) => {
      if (freed) return;
      freed = true;
      // Stopping, the waiting deliveries are handed back (stop), not started.
      const next = this.slots.free(delivery.destination, durationMs, !this.stopped);
      if (next) this.startAttempt(next);
      if (this.demand.any || this.demand.destinations.has(delivery.destination)) this.wakeSoon();
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
    const releasing = handBackDeliveries(
      this.options.sql,
      deliveries.map((d) => d.id),
    ).catch((err: unknown) =>
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
    for (const [destination, budget] of plan.budgets) if (budget <= 0) full.push(destination);
    const scanLimit = claimWindowSize(plan.limit);
    // What the last full window skipped is skipped again while its destinations are still full: a slow
    // destination's backlog, older than everyone else's, is read once per poll interval, not by every
    // claim. Anything older that becomes claimable otherwise (a hand-back here, a resumed webhook, a
    // lease that ran out elsewhere) is found by the next full read, at most a poll interval later.
    const now = Date.now();
    const cursor = this.cursor;
    const fromCursor =
      cursor !== null &&
      now < cursor.until &&
      [...cursor.full].every((destination) => full.includes(destination));
    const since = fromCursor ? new Date(cursor.since - CURSOR_MARGIN_MS).toISOString() : '-infinity';
    const {
      claimed,
      scanned,
      windowStartMs: windowStart,
    } = await claimDeliveries(this.options.sql, {
      saturated: full,
      windowSize: scanLimit,
      unlisted: plan.unlisted,
      budgets: plan.budgets,
      limit: plan.limit,
      since,
    });
    if (!fromCursor && this.cursor === cursor && windowStart !== undefined) {
      this.cursor = {
        since: windowStart,
        full: new Set(full),
        until: now + this.options.pollIntervalMs,
      };
    }
    return { claimed, windowFull: scanned >= scanLimit, scanned, full };
  }

  private async attempt(
    delivery: ClaimedDelivery,
    deadline: SharedDeadline,
    free: (durationMs: number | null) => void,
  ): Promise<void> {
    const number = delivery.attempts + 1;
    let secret: string | null = null;
    let unopened = false;
    try {
      secret = this.openSecret(delivery);
    } catch (err) {
      if (!(err instanceof SecretOpenError)) throw err;
      unopened = true;
      // The reason only (which key id, or a failed tag): never the stored text.
      this.options.logger.error(
        { delivery: delivery.id, webhook: delivery.webhook_id, err: err.message },
        'webhook secret cannot be opened',
      );
    }
    const { headers, body } = buildRequest({ ...delivery, secret }, Date.now());
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
    const target = this.targets.of(delivery.url);
    // Host only: a receiver's path or query can hold its own token.
    if (target.hostname) traced?.span.setAttribute('server.address', target.hostname);
    const refusal = target.refusal[delivery.environment];
    if (unopened) {
      error = SECRET_UNAVAILABLE;
    } else if (refusal) {
      error = refusal;
      this.options.logger.info(
        { delivery: delivery.id, host: target.hostname },
        'delivery refused: a literal address webhooks may not target',
      );
    } else {
      const answer = await postDelivery(
        this.pools.for(delivery.environment, target.destination, target.origin),
        target,
        headers,
        body,
        this.options.attemptTimeoutMs,
        deadline,
      );
      status = answer.status;
      retryAfter = answer.retryAfter;
      excerpt = answer.excerpt;
      if (answer.error) {
        error = describeAttemptError(answer.error, this.options.attemptTimeoutMs);
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
    if (number === 1)
      this.options.metrics.firstAttemptLag.observe((startedAt.getTime() - delivery.occurred_at_ms) / 1000);
    const now = Date.now();
    const outcome = classifyOutcome({ status, retryAfter }, number, delivery.max_attempts, {
      schedule: this.options.schedule,
      now,
    });
    const nextAttemptAt = outcome.kind === 'retry' ? now + outcome.delayMs : null;
    this.options.metrics.deliveries.inc({ outcome: outcome.kind });
    this.options.metrics.attemptDuration.observe(durationMs / 1000);
    this.outcomes
      .submit({
        id: delivery.id,
        attempt: number,
        started_at: startedAt.toISOString(),
        duration_ms: durationMs,
        response_status: status,
        response_body: excerpt,
        error,
        status: outcome.kind === 'retry' ? 'pending' : outcome.kind,
        next_attempt_at: nextAttemptAt === null ? null : new Date(nextAttemptAt).toISOString(),
        delivered: outcome.kind === 'delivered',
      })
      .catch((err: unknown) =>
        this.options.logger.error({ err, delivery: delivery.id }, 'recording a delivery attempt failed'),
      );
    if (nextAttemptAt !== null) this.wakeAt(nextAttemptAt);
  }

  /** The clear secret of a signed delivery's webhook (null for a postback); throws SecretOpenError. */
  private openSecret(delivery: ClaimedDelivery): string | null {
    if (delivery.secret === null || delivery.webhook_id === null) return null;
    const cacheKey = `${delivery.webhook_id}\n${delivery.secret}`;
    let secret = this.opened.get(cacheKey);
    if (secret === undefined) {
      secret = this.options.secrets.open(delivery.secret, delivery.webhook_id);
      if (this.opened.size >= OPENED_SECRETS) this.opened.clear();
      this.opened.set(cacheKey, secret);
    }
    return secret;
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
