import { Counter, Gauge, Histogram } from 'prom-client';
import type { Metrics, Sql } from '@seller-api/service-kit';

export type DispatcherMetrics = ReturnType<typeof createDispatcherMetrics>;

/** What the webhooks dashboard shows: outcomes, attempt durations, time from event to first attempt. */
export function createDispatcherMetrics(metrics: Metrics) {
  return {
    deliveries: new Counter({
      name: 'webhook_delivery_attempts_total',
      help: 'Webhook delivery attempts by outcome (delivered, retry, dead)',
      labelNames: ['outcome'] as const,
      registers: [metrics.registry],
    }),
    attemptDuration: new Histogram({
      name: 'webhook_attempt_duration_seconds',
      help: 'Duration of one webhook HTTP attempt',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [metrics.registry],
    }),
    firstAttemptLag: new Histogram({
      name: 'webhook_first_attempt_lag_seconds',
      help: 'Time from the event being committed to the start of its first delivery attempt',
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [metrics.registry],
    }),
  };
}

/**
 * The backlog, read at scrape time through the partial index on pending deliveries: `due` waits for a
 * free slot now (grows when the dispatcher falls behind), `scheduled` waits for its retry time.
 */
export function registerBacklogGauge(metrics: Metrics, sql: Sql): void {
  new Gauge({
    name: 'webhook_deliveries_pending',
    help: 'Pending webhook deliveries: due now, or scheduled for a later retry',
    labelNames: ['state'] as const,
    registers: [metrics.registry],
    async collect() {
      const rows = await sql
        .query<{ due: string; scheduled: string }>(
          `select count(*) filter (where next_attempt_at <= now()) as due,
                  count(*) filter (where next_attempt_at > now()) as scheduled
           from webhooks.deliveries where status = 'pending'`,
        )
        .catch(() => [{ due: 'NaN', scheduled: 'NaN' }]);
      this.set({ state: 'due' }, Number(rows[0]?.due ?? 0));
      this.set({ state: 'scheduled' }, Number(rows[0]?.scheduled ?? 0));
    },
  });
}
