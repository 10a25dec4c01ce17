import { countWithAmount, type Metrics } from '@seller-api/service-kit';

export type PaymentMetrics = ReturnType<typeof createPaymentMetrics>;

/**
 * The payments dashboard: charges entering each status (paid, expired, refunded, ...) and their gross
 * amounts. Recorded by the lifecycle once the move's transaction has committed.
 */
export function createPaymentMetrics(metrics: Metrics) {
  const moved = countWithAmount(metrics, {
    name: 'payments_charge_status_changes',
    help: 'PIX charges that entered a status (paid, expired, refunded, cancelled, ...)',
    label: 'status',
  });
  return {
    chargeMoved: (status: string, grossAmountCents: number) => moved(status.toLowerCase(), grossAmountCents),
  };
}
