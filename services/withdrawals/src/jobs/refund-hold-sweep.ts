import {
  sqlOf,
  startPeriodicJob,
  type Logger,
  type MikroORM,
  type PeriodicJob,
  type Sql,
} from '@seller-api/service-kit';
import type { ChargeRefunds } from '../clients/charges';
import { releaseStaleHold, staleRefundHolds, type StaleHold } from '../db/refund-holds';

const BATCH = 100;

/** What the sweep counts (metrics.ts); absent in tests that do not look. */
export interface RefundHoldSweepMetrics {
  /** Holds of a full pass kept because a refund was asked and the charge is still not refunded. */
  passFinished(unresolved: number): void;
  /** A hold the pass could not decide (payments failed or answered something else). */
  holdFailed(): void;
}

export interface RefundHoldSweepOptions {
  /** How often it looks (RECONCILE_INTERVAL_MS; 0: never on a timer). */
  intervalMs: number;
  /**
   * A hold untouched for longer than this has no refund in flight (RECONCILE_GRACE_MS, which is kept
   * above the longest charge transaction, a refund waiting for the PSP included).
   */
  graceMs: number;
  now?: () => Date;
}

/**
 * Releases refund holds that no refund completed (domain/refund-holds.ts): an attempt whose orders
 * crashed, or whose answer was lost, leaves its hold reserved. Once a hold was last reserved longer ago
 * than any refund takes, payments is asked about the charge:
 * - not refunded and no refund ever asked of the PSP: the net is available again (unless an attempt
 *   reserved the hold meanwhile);
 * - not refunded but a refund asked: the PSP may have made it (its answer was lost), so the hold is kept
 *   and reported for an operator (`refund_holds_unresolved`); a retry of the refund completes it
 *   (docs/finance.md "Refunds");
 * - a refund the PSP is making (PROCESSING): kept quietly, payments follows it to its end;
 * - a refund the PSP did not make (FAILED): released, as the failure's message would have (a hold is
 *   released once; the message arriving later finds none, or a newer hold it does not cover);
 * - refunded: the reversal it posted (or that the reconciliation replays) takes the net from the hold.
 * A hold that cannot be decided (payments fails) is logged, counted and skipped; the pass goes on.
 */
export class RefundHoldSweep {
  private job: PeriodicJob | null = null;
  private stopped = false;
  private readonly sql: Sql;

  constructor(
    private readonly orm: MikroORM,
    private readonly payments: ChargeRefunds,
    private readonly options: RefundHoldSweepOptions,
    private readonly logger: Logger,
    private readonly metrics?: RefundHoldSweepMetrics,
  ) {
    this.sql = sqlOf(orm);
  }

  start(): void {
    this.job = startPeriodicJob({
      name: 'refund hold sweep',
      intervalMs: this.options.intervalMs,
      run: () => this.sweep(),
      logger: this.logger,
      failureMessage: 'sweep of refund holds failed; tried again later',
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.job?.stop();
  }

  /** One pass over the stale holds; returns the orders whose hold it released. */
  async sweep(): Promise<string[]> {
    const now = this.options.now?.() ?? new Date();
    const before = new Date(now.getTime() - this.options.graceMs);
    const released: string[] = [];
    let unresolved = 0;
    let after: StaleHold | null = null;
    for (;;) {
      const page = await staleRefundHolds(this.orm.em, before, BATCH, after);
      for (const hold of page) {
        if (this.stopped) return released;
        try {
          const outcome = await this.sweepHold(hold);
          if (outcome === 'released') released.push(hold.orderId);
          if (outcome === 'unresolved') unresolved += 1;
        } catch (err) {
          // One hold payments cannot answer for must not stop the holds behind it.
          this.metrics?.holdFailed();
          this.logger.warn(
            { err: (err as Error).message, order_uuid: hold.orderId },
            'refund hold not swept: payments could not say; tried again next pass',
          );
        }
      }
      if (page.length < BATCH) break;
      after = page[page.length - 1] ?? null;
    }
    this.metrics?.passFinished(unresolved);
    return released;
  }

  private async sweepHold(hold: StaleHold): Promise<'released' | 'kept' | 'unresolved'> {
    const answer = await this.payments.refunded(hold.owner, hold.orderId);
    if (answer === 'unknown') {
      this.logger.warn(
        { order_uuid: hold.orderId },
        'refund hold of an order payments does not know; left held',
      );
      return 'kept';
    }
    if (answer === 'refunded' || answer === 'refund_processing') return 'kept';
    if (answer === 'refund_asked') {
      this.logger.error(
        { order_uuid: hold.orderId, seller_id: hold.owner.sellerId, environment: hold.owner.environment },
        'refund hold kept: a refund was asked of the PSP and its outcome is unknown; check the refund at the PSP and retry it (docs/finance.md "Refunds")',
      );
      return 'unresolved';
    }
    if (await releaseStaleHold(this.orm.em, this.sql, hold.owner, hold.orderId, hold.heldAt)) {
      this.logger.info(
        { order_uuid: hold.orderId },
        answer === 'refund_failed'
          ? 'refund hold released: the PSP did not make the refund'
          : 'refund hold released: no refund was asked',
      );
      return 'released';
    }
    return 'kept';
  }
}
