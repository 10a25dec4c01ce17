import { Counter } from 'prom-client';
import type { Environment } from '@seller-api/contracts';
import type { Metrics } from '@seller-api/service-kit';

export type OrderMetrics = ReturnType<typeof createOrderMetrics>;

/** The orders dashboard's "created" panels: counted once the order's transaction has committed. */
export function createOrderMetrics(metrics: Metrics) {
  const created = new Counter({
    name: 'orders_created_total',
    help: 'Orders created, by environment (test or live)',
    labelNames: ['environment'] as const,
    registers: [metrics.registry],
  });
  const createdAmount = new Counter({
    name: 'orders_created_amount_cents_total',
    help: 'Gross amount of the orders created, in cents (BRL), by environment',
    labelNames: ['environment'] as const,
    registers: [metrics.registry],
  });
  return {
    orderCreated(environment: Environment, grossAmountCents: number): void {
      created.inc({ environment });
      createdAmount.inc({ environment }, grossAmountCents);
    },
  };
}
