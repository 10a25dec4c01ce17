import { startPeriodicJob, type Logger, type MikroORM, type PeriodicJob } from '@seller-api/service-kit';
import type { ChargeStoreDeps } from '../db/charges';
import { claimRefundChecks, countUnresolvedRefunds, type DueRefundCheck } from '../db/refund-checks';
import { settleRefund } from '../db/refunds';
import { pspFor } from '../domain/psp';
import { nextCheckDelay, refundIdFor } from '../domain/refund-state';
import type { PaymentMetrics } from '../metrics';

/**
 * Looks up at the PSP the refunds whose end has not arrived (docs/payments.md, "Refunds"): a refund the
 * PSP answered `EM_PROCESSAMENTO`, or one whose answer was lost. API Pix reports the end in a later
 * notification's `devolucoes`; this is for the notification that never comes. Each refund is looked up
 * first `baseMs` after it was asked, then with a doubling delay up to `maxMs`, until the PSP says
 * DEVOLVIDO or NAO_REALIZADO, through the same code as a notification (settleRefund). Every replica
 * runs it; a claimed refund is moved ahead before it is looked up, so replicas never look up the same
 * refund at once, and one that dies mid-way only delays it. Refunds asked more than `alertAfterMs` ago
 * and still open are counted for the alert (payments_refunds_unresolved).
 */
export class RefundChecks {
  private job: PeriodicJob | null = null;
  private stopped = false;

  constructor(
    private readonly orm: MikroORM,
    private readonly deps: ChargeStoreDeps & { refundChecks: { baseMs: number; maxMs: number } },
    private readonly options: { intervalMs: number; alertAfterMs: number; batch?: number },
    private readonly logger: Logger,
    private readonly metrics?: PaymentMetrics,
  ) {}

  start(): void {
    this.job = startPeriodicJob({
      name: 'refund checks',
      intervalMs: this.options.intervalMs,
      run: () => this.run(),
      logger: this.logger,
      failureMessage: 'refund checks failed; will retry',
    });
  }

  /** One pass: every due refund, a batch at a time, then the alert's figure. */
  async run(now: () => Date = () => this.deps.now?.() ?? new Date()): Promise<void> {
    const batch = this.options.batch ?? 20;
    const { baseMs, maxMs } = this.deps.refundChecks;
    for (;;) {
      if (this.stopped) return;
      const due = await claimRefundChecks(this.deps.sql, this.orm.em, now(), batch, (checks) =>
        nextCheckDelay(checks, baseMs, maxMs),
      );
      // A few look-ups at a time: each waits for the PSP, at most its timeout.
      for (let i = 0; i < due.length; i += 4) {
        await Promise.all(due.slice(i, i + 4).map((check) => this.check(check)));
      }
      if (due.length < batch) break;
    }
    const unresolved = await countUnresolvedRefunds(
      this.deps.sql,
      new Date(now().getTime() - this.options.alertAfterMs),
    );
    for (const [environment, count] of Object.entries(unresolved)) {
      this.metrics?.refundsUnresolved(environment, count);
    }
  }

  private async check(check: DueRefundCheck): Promise<void> {
    const psp = pspFor(this.deps.psps, check.environment);
    const refundId = refundIdFor(check.transactionId, check.attempt);
    try {
      const found = await psp.lookupRefund({
        endToEndId: check.endToEndId,
        refundId,
        amountCents: check.amountCents,
      });
      this.metrics?.refundChecked(found ? found.status.toLowerCase() : 'not_found');
      if (!found) {
        // No refund with this id at the PSP (yet): the ask may not have reached it. Looked up again
        // later; the alert tells an operator when it stays so (docs/runbooks).
        this.logger.warn(
          { order_uuid: check.orderId, checks: check.checks + 1 },
          'refund not found at the PSP; will look again',
        );
        return;
      }
      await settleRefund(
        this.orm.em,
        {
          environment: check.environment,
          endToEndId: check.endToEndId,
          refundId,
          status: found.status,
          reason: found.reason,
        },
        this.deps,
        'check',
      );
    } catch (err) {
      this.metrics?.refundChecked('error');
      this.logger.warn(
        { err: (err as Error).message, order_uuid: check.orderId },
        'refund look-up failed; will look again',
      );
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.job?.stop();
  }
}
