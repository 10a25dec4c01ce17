import { Counter } from 'prom-client';
import type { Metrics } from '@seller-api/service-kit';

export type PaymentMetrics = ReturnType<typeof createPaymentMetrics>;

/**
 * The payments dashboard: charges entering each status (paid, expired, refunded, ...) and their gross
 * amounts. Recorded by the lifecycle once the move's transaction has committed.
 */
export function createPaymentMetrics(metrics: Metrics) {
  const moves = new Counter({
    name: 'payments_charge_status_changes_total',
    help: 'PIX charges that entered a status (paid, expired, refunded, cancelled, ...)',
    labelNames: ['status'] as const,
    registers: [metrics.registry],
  });
  const amounts = new Counter({
    name: 'payments_charge_status_changes_amount_cents_total',
    help: 'Gross amount of the PIX charges that entered a status, in cents (BRL)',
    labelNames: ['status'] as const,
    registers: [metrics.registry],
  });
  return {
    chargeMoved(status: string, grossAmountCents: number): void {
      const label = status.toLowerCase();
      moves.inc({ status: label });
      amounts.inc({ status: label }, grossAmountCents);
    },
  };
}
