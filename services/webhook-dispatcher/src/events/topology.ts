import type { Topology } from '@seller-api/service-kit';

/** This service publishes on its own topic exchange; the routing key is the event name. */
export const EXCHANGE = 'webhooks.events';

/** Where the public events come from: one topic exchange per producing service. */
export const SOURCES = {
  orders: 'orders.events',
  payments: 'payments.events',
  withdrawals: 'withdrawals.events',
} as const;

export const INTAKE_QUEUE = 'webhooks.intake';

/**
 * One durable queue bound to every public event; `internal.*` messages never match these patterns, so
 * they are never delivered as webhooks.
 */
export const topology: Topology = {
  exchanges: [EXCHANGE, SOURCES.orders, SOURCES.payments, SOURCES.withdrawals],
  queues: [
    {
      name: INTAKE_QUEUE,
      bindings: [
        { exchange: SOURCES.orders, pattern: 'order.*' },
        { exchange: SOURCES.orders, pattern: 'order_item.*' },
        { exchange: SOURCES.payments, pattern: 'payment.*' },
        { exchange: SOURCES.withdrawals, pattern: 'withdrawal.*' },
      ],
      prefetch: 64,
      retryDelayMs: 1_000,
      maxAttempts: 5,
    },
  ],
};
