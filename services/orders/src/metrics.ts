import type { Environment } from '@seller-api/contracts';
import { countWithAmount, type Metrics } from '@seller-api/service-kit';
import type { UnstoredChargeOutcome } from './domain/unstored-charges';

export type OrderMetrics = ReturnType<typeof createOrderMetrics>;

/** The orders dashboard's "created" panels: counted once the order's transaction has committed. */
export function createOrderMetrics(metrics: Metrics) {
  const created = countWithAmount(metrics, {
    name: 'orders_created',
    help: 'Orders created, by environment (test or live)',
    label: 'environment',
  });
  // Charges made for orders that were then not stored, by what became of them (unstored-charges.ts).
  const unstored = countWithAmount(metrics, {
    name: 'orders_unstored_charges',
    help: 'Charges made for orders that were not stored, by outcome (cancelled, cancel_failed, left_for_retry)',
    label: 'outcome',
  });
  return {
    orderCreated: (environment: Environment, grossAmountCents: number) =>
      created(environment, grossAmountCents),
    unstoredCharge: (outcome: UnstoredChargeOutcome, grossAmountCents: number) =>
      unstored(outcome, grossAmountCents),
  };
}
