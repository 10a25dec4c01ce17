import { Counter, Gauge } from 'prom-client';
import { countWithAmount, type Metrics } from '@seller-api/service-kit';

export type PaymentMetrics = ReturnType<typeof createPaymentMetrics>;

/**
 * The payments dashboard: charges entering each status (paid, expired, refunded, ...) and their gross
 * amounts, refunds entering each state at the PSP (refund_processing, refund_failed, ...), recorded by
 * the lifecycle once the move's transaction has committed; and the refund checks (jobs/refund-checks.ts):
 * look-ups by what the PSP answered, and the refunds still open past the alert's threshold; due-date
 * payments whose PSP priced their day otherwise than we do (docs/pix.md "Due-date charges").
 */
export function createPaymentMetrics(metrics: Metrics) {
  const moved = countWithAmount(metrics, {
    name: 'payments_charge_status_changes',
    help: 'PIX charges that entered a status (paid, expired, refunded, cancelled, ...)',
    label: 'status',
  });
  const checked = new Counter({
    name: 'payments_refund_checks_total',
    help: 'Refunds looked up at the PSP, by what it answered (processing, refunded, failed, not_found, error)',
    labelNames: ['outcome'] as const,
    registers: [metrics.registry],
  });
  const unresolved = new Gauge({
    name: 'payments_refunds_unresolved',
    help: 'Refunds asked of the PSP longer ago than REFUND_ALERT_AFTER_MS whose end has not arrived',
    labelNames: ['environment'] as const,
    registers: [metrics.registry],
  });
  const contradicted = new Counter({
    name: 'payments_refunds_contradicted_total',
    help: 'PSP reports that a refund booked as REFUNDED was not made (booked by an earlier release); check each with the PSP',
    registers: [metrics.registry],
  });
  const dueDateDifferences = new Counter({
    name: 'payments_due_date_amount_differences_total',
    help: "Due-date payments whose PSP amount differs from ours for their day (the PSP's is applied)",
    labelNames: ['environment'] as const,
    registers: [metrics.registry],
  });
  return {
    dueDateAmountDifference: (environment: string) => dueDateDifferences.inc({ environment }),
    refundContradicted: () => contradicted.inc(),
    chargeMoved: (status: string, grossAmountCents: number) => moved(status.toLowerCase(), grossAmountCents),
    refundChecked: (outcome: string) => checked.inc({ outcome }),
    refundsUnresolved: (environment: string, count: number) => unresolved.set({ environment }, count),
  };
}
