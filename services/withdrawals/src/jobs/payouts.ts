import { PspError } from '@seller-api/api-pix';
import { scrub, sqlOf, type Logger, type MikroORM, type Sql } from '@seller-api/service-kit';
import { autoApprove, claimPayouts, completePayout } from '../db/withdrawals';
import { payoutAdapterFor, payoutRequest, type PayoutAdapters, type PayoutRules } from '../domain/payouts';

const BATCH = 20;

/**
 * Makes payouts: approves what may be approved automatically, then claims approved withdrawals (and
 * payouts whose lease ran out) and asks the PSP of each withdrawal's own environment (a test
 * withdrawal never reaches the live PSP). Runs at start (catching up after downtime), every
 * `intervalMs`, and at once when kicked after an approval, so the sandbox pays within milliseconds.
 * Correct with several replicas: claims use SKIP LOCKED and a lease.
 */
export class PayoutWorker {
  private timer: NodeJS.Timeout | null = null;
  private running = false;
  private again = false;
  private stopped = false;
  private current: Promise<void> = Promise.resolve();
  private readonly sql: Sql;

  constructor(
    private readonly orm: MikroORM,
    private readonly psps: PayoutAdapters,
    private readonly rules: PayoutRules,
    private readonly intervalMs: number,
    private readonly logger: Logger,
  ) {
    this.sql = sqlOf(orm);
  }

  start(): void {
    this.schedule();
    this.kick();
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.kick();
      this.schedule();
    }, this.intervalMs);
    this.timer.unref();
  }

  /** Runs now, or right after the run in progress (a kick during a run is never lost). */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = true;
    this.current = this.run().finally(() => {
      this.running = false;
      if (this.again && !this.stopped) {
        this.again = false;
        this.kick();
      }
    });
  }

  private async run(): Promise<void> {
    try {
      while (!this.stopped && (await autoApprove(this.orm.em, this.sql, this.rules, BATCH)) === BATCH) {
        /* next batch */
      }
      for (;;) {
        if (this.stopped) return;
        const claimed = await claimPayouts(this.orm.em, this.sql, this.rules, BATCH);
        await Promise.all(claimed.map((w) => this.pay(w)));
        if (claimed.length < BATCH) return;
      }
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'payout run failed; will retry');
    }
  }

  private async pay(w: Parameters<typeof payoutRequest>[0]): Promise<void> {
    const psp = payoutAdapterFor(this.psps, w);
    try {
      const outcome = await psp.pay(payoutRequest(w));
      const done = await completePayout(this.orm.em, this.sql, w, outcome, this.rules);
      if (done)
        this.logger.info(
          { withdrawal: w.id, environment: w.environment, status: done.status, psp: psp.name },
          'payout finished',
        );
    } catch (err) {
      // The withdrawal stays PROCESSING; its lease runs out and the PSP is asked again (idempotently).
      // The PSP's words (clipped by the adapter) may quote personal data: scrubbed, with its status.
      this.logger.warn(
        {
          err: scrub((err as Error).message),
          psp_status: err instanceof PspError ? err.status : null,
          withdrawal: w.id,
        },
        'payout attempt failed; will retry',
      );
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.current;
  }
}
