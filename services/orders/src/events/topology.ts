import type { Topology } from '@seller-api/service-kit';

/** This service publishes on its own topic exchange; the routing key is the event name. */
export const EXCHANGE = 'orders.events';

/** Payments publishes the money state of orders here, as `internal.charge.<status>`. */
export const PAYMENTS_EXCHANGE = 'payments.events';
export const CHARGES_QUEUE = 'orders.charges';

export const topology: Topology = {
  exchanges: [EXCHANGE, PAYMENTS_EXCHANGE],
  queues: [
    {
      name: CHARGES_QUEUE,
      bindings: [{ exchange: PAYMENTS_EXCHANGE, pattern: 'internal.charge.*' }],
      prefetch: 32,
    },
  ],
};
