import type { Sql } from '@seller-api/service-kit';
import { claimDeliveries, type ClaimedDelivery, claimWindowSize } from '../../db/delivery-claims';
import type { ClaimPlan } from '../../domain/claim-plan';

// How far before the last full window's first candidate later claims read from (clocks of the
// replicas that stamp new deliveries may differ by this much), and for how long, at most, before a
// claim reads the whole due index again (DueClaims.claim).
const CURSOR_MARGIN_MS = 1000;

/**
 * The sender's claims (jobs/sender.ts, which plans them: domain/claim-plan.ts), and where the last
 * full window started, which later claims read from while its destinations stay full.
 */
export class DueClaims {
  /**
   * Where the last full window's first candidate was: every due delivery older than it was skipped (its
   * destination full, its webhook paused, or leased). Later claims read from there (less a margin)
   * while those destinations stay full, until `until`.
   */
  private cursor: { since: number; full: Set<string>; until: number } | null = null;

  constructor(
    private readonly sql: Sql,
    private readonly pollIntervalMs: number,
  ) {}

  /** Forgets where the last full window started: the next claim reads the whole due index. */
  readAll(): void {
    this.cursor = null;
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
  async claim(
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
    } = await claimDeliveries(this.sql, {
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
        until: now + this.pollIntervalMs,
      };
    }
    return { claimed, windowFull: scanned >= scanLimit, scanned, full };
  }
}
