import type { Topology } from '@seller-api/service-kit';

/** This service publishes on its own topic exchange; the routing key is the event name. */
export const EXCHANGE = 'withdrawals.events';

/**
 * The ledger is fed by payments: the public `payment.*` events bring each sale's amounts, the internal
 * `internal.charge.<status>` messages its money state (approval, MED, refund, chargeback).
 */
export const PAYMENTS_EXCHANGE = 'payments.events';
export const LEDGER_QUEUE = 'withdrawals.ledger';

export const topology: Topology = {
  exchanges: [EXCHANGE, PAYMENTS_EXCHANGE],
  queues: [
    {
      name: LEDGER_QUEUE,
      bindings: [
        { exchange: PAYMENTS_EXCHANGE, pattern: 'payment.*' },
        { exchange: PAYMENTS_EXCHANGE, pattern: 'internal.charge.*' },
      ],
      // The consumer writes what arrives while a batch commits as the next batch (events/payments.ts):
      // the prefetch bounds a batch.
      prefetch: 200,
      // Money must not be parked by a short outage of our database: retry every 2 s for about 5 minutes
      // before an operator has to replay it from `withdrawals.ledger.dead`.
      retryDelayMs: 2_000,
      maxAttempts: 150,
    },
  ],
};
