import type { Logger, MikroORM } from '@seller-api/service-kit';
import type { ChargeRefunds } from '../clients/charges';
import { releaseStaleHold, staleRefundHolds } from '../domain/refund-holds';

const BATCH = 100;

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
 * than any refund takes, payments is asked about the charge: not refunded, the net is available again
 * (unless an attempt reserved the hold meanwhile); refunded, the reversal it posted (or that the
 * reconciliation replays) takes the net from the hold, and the hold is left alone.
 */
export class RefundHoldSweep {
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private current: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly orm: MikroORM,
    private readonly payments: ChargeRefunds,
    private readonly options: RefundHoldSweepOptions,
    private readonly logger: Logger,
  ) {}

  start(): void {
    if (this.options.intervalMs <= 0) return;
    const tick = () => {
      if (this.stopped) return;
      this.current = this.sweep()
        .catch((err: unknown) =>
          this.logger.warn(
            { err: (err as Error).message },
            'sweep of refund holds failed; tried again later',
          ),
        )
        .finally(() => {
          if (this.stopped) return;
          this.timer = setTimeout(tick, this.options.intervalMs);
          this.timer.unref();
        });
    };
    tick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.current.catch(() => undefined);
  }

  /** One pass over the stale holds; returns the orders whose hold it released. */
  async sweep(): Promise<string[]> {
    const now = this.options.now?.() ?? new Date();
    const before = new Date(now.getTime() - this.options.graceMs);
    const released: string[] = [];
    for (const hold of await staleRefundHolds(this.orm.em, before, BATCH)) {
      if (this.stopped) break;
      const answer = await this.payments.refunded(hold.owner, hold.orderId);
      if (answer === 'unknown') {
        this.logger.warn(
          { order_uuid: hold.orderId },
          'refund hold of an order payments does not know; left held',
        );
        continue;
      }
      if (answer === 'refunded') continue;
      if (await releaseStaleHold(this.orm.em, hold.owner, hold.orderId, hold.heldAt)) {
        released.push(hold.orderId);
        this.logger.info({ order_uuid: hold.orderId }, 'refund hold released: no refund was made');
      }
    }
    return released;
  }
}
