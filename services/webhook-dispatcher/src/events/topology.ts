import type { Topology } from '@seller-api/service-kit';

/** This service publishes on its own topic exchange; the routing key is the event name. */
export const EXCHANGE = 'webhooks.events';

export const topology: Topology = {
  exchanges: [EXCHANGE],
  queues: [],
};
