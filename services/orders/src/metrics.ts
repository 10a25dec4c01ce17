import type { Environment } from '@seller-api/contracts';
import { countWithAmount, type Metrics } from '@seller-api/service-kit';

export type OrderMetrics = ReturnType<typeof createOrderMetrics>;

/** The orders dashboard's "created" panels: counted once the order's transaction has committed. */
export function createOrderMetrics(metrics: Metrics) {
  const created = countWithAmount(metrics, {
    name: 'orders_created',
    help: 'Orders created, by environment (test or live)',
    label: 'environment',
  });
  return {
    orderCreated: (environment: Environment, grossAmountCents: number) =>
      created(environment, grossAmountCents),
  };
}
