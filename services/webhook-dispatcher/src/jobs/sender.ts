import type { Logger, Sql } from '@seller-api/service-kit';
import { DeadlineWindow, type Resolver, WriteBatch } from '@seller-api/service-kit';
import { performance } from 'node:perf_hooks';
import {
  type AttemptOutcome,
  type ClaimedDelivery,
  handBackDeliveries,
  recordOutcomes,
} from '../db/delivery-claims';
import { planClaim, type ClaimPlan } from '../domain/claim-plan';
import type { SecretBox } from '../domain/secret-box';
import { WaitingSweep } from './waiting-sweep';
import { DueClaims } from './sender/due-claims';
import { WebhookChanges } from './sender/webhook-changes';
import { DeliveryAttempts } from './sender/delivery-attempt';
import { DeliverySlots } from './sender/delivery-slots';
import { DeliveryTargets } from './sender/delivery-targets';
import { DestinationPools } from './sender/destination-pools';
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

/** A claimed delivery and its destination (domain/destination.ts): what its slot is counted against. */
type Claimed = ClaimedDelivery & { destination: string };

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
// Claimed deliveries waiting for a slot (jobs/sender/delivery-slots.ts), for a destination that answers
// within FAST_MS: what its slots get through in half of MAX_WAIT_MS, up to WAITING_SHARE times its
// slots, and WAITING_SHARE times WEBHOOK_CONCURRENCY in all; handed back after MAX_WAIT_MS unstarted.
// The deeper the queue, the longer a claim's round trip can take before a slot goes idle: with a
// shallower one, a drain of fast destinations runs out of claimed deliveries between claims.
const WAITING_SHARE = 4;
const FAST_MS = 100;
const MAX_WAIT_MS = 250;

/**
 * Sends due deliveries. Rows are claimed with FOR UPDATE SKIP LOCKED and leased, so several replicas
 * never send the same attempt; each destination has its own small concurrency budget, so a slow or
 * failing receiver never holds up the others (its deliveries wait in the database, not in a queue; only
 * a destination that answers fast has a few claimed deliveries waiting here, for at most MAX_WAIT_MS).
 */
export class DeliverySender {
  private readonly slots: DeliverySlots<Claimed>;
  private readonly sweeper = new WaitingSweep(MAX_WAIT_MS / 2, () => {
    this.handBack(this.slots.expired(Date.now(), MAX_WAIT_MS));
    return this.slots.waitingTotal > 0;
  });
  /** Attempts started within 10 ms share one deadline (kit deadline.ts), each cut off at most that late. */
  private readonly deadlines: DeadlineWindow;
  private readonly attempts = new Set<Promise<void>>();
  /** The claims in flight, and when each was sent (performance.now()). */
  private readonly claims = new Map<ClaimPlan, { run: Promise<void>; sentAt: number }>();
  /** Changes to webhooks that claimed deliveries may predate (changing). */
  private readonly changes = new WebhookChanges<Claimed>();
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
  /** Each claimed delivery's attempt: its secret, request, POST and outcome (sender/delivery-attempt.ts). */
  private readonly deliveryAttempts: DeliveryAttempts;
  /** The claims, and where the last full window started (sender/due-claims.ts). */
  private readonly dueClaims: DueClaims;

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
    this.dueClaims = new DueClaims(options.sql, options.pollIntervalMs);
    this.deliveryAttempts = new DeliveryAttempts(options, this.targets, this.pools, this.outcomes, (at) =>
      this.wakeAt(at),
    );
  }

  start(): void {
    this.wakeAt(Date.now());
  }

  /**
   * Like wake, for deliveries that may be older than what claims read lately: re-sent ones, or a
   * paused webhook's, now resumed.
   */
  rescan(): void {
    this.dueClaims.readAll();
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
    const entry = this.changes.begin(webhookId);
    entry.held.push(...this.slots.takeWaitingWhere((d) => d.webhook_id === webhookId));
    try {
      return await change();
    } finally {
      this.handBack(this.changes.end(entry));
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
          if (this.changes.size > 0) this.forgetSettledChanges();
          this.pump();
          if (this.claims.size === 0) this.wakeAt(Date.now() + this.options.pollIntervalMs);
        });
      this.claims.set(plan, { run, sentAt });
    }
  }

  /** One claim and the attempts it starts; marks the sender dirty when more may be due. */
  private async claimAndLaunch(plan: ClaimPlan, sentAt: number): Promise<void> {
    const { claimed, windowFull, scanned, full } = await this.dueClaims.claim(plan);
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
      const change = this.changes.predating(delivery, sentAt);
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
    // Waiting deliveries not started in time go back to the database (jobs/waiting-sweep.ts).
    if (this.slots.waitingTotal > 0) this.sweeper.start();
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
    const attempt: Promise<void> = this.deliveryAttempts
      .attempt(delivery, this.deadlines.deadline(), free)
      .then(done, (err: unknown) => {
        this.options.logger.error({ err, delivery: delivery.id }, 'delivery attempt failed unexpectedly');
        done();
      });
    this.attempts.add(attempt);
  }

  /** Drops the changes that every claim in flight was sent after. */
  private forgetSettledChanges(): void {
    this.changes.forgetSettled([...this.claims.values()].map((claim) => claim.sentAt));
  }

  /** Clears the leases of claimed deliveries this process will not attempt, so that they are due again now. */
  private handBack(deliveries: ClaimedDelivery[]): void {
    if (deliveries.length === 0) return;
    const releasing = handBackDeliveries(this.options.sql, deliveries).catch((err: unknown) =>
      this.options.logger.warn({ err: (err as Error).message }, 'handing back deliveries failed'),
    );
    this.attempts.add(releasing);
    void releasing.finally(() => this.attempts.delete(releasing));
    // They are due since long ago: the next claim reads the whole due index.
    this.dueClaims.readAll();
    // No wake: a claim now would take the same rows again. They are due for the next claim (a freed
    // slot, a new delivery, the poll) or another replica.
    this.demand.any = true;
  }

  /** Finishes the attempts in flight (their outcome is recorded), then closes the connections. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.sweeper.stop();
    // The claims in flight hand back what they took, and the deliveries waiting for a slot go back too;
    // then the attempts in flight finish.
    await Promise.allSettled([...this.claims.values()].map((claim) => claim.run));
    this.handBack(this.slots.takeAllWaiting());
    for (const held of this.changes.takeAllHeld()) this.handBack(held);
    await Promise.allSettled([...this.attempts]);
    await this.outcomes.settled();
    await this.pools.close();
  }
}
