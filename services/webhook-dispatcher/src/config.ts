import { EVENTS_RETENTION_DAYS_DEFAULT } from '@seller-api/contracts';
import { commonEnv, env, loadConfig } from '@seller-api/service-kit';
import { z } from 'zod';
import { RetryScheduleEnv } from './domain/retry';

export const dispatcherEnv = {
  ...commonEnv,
  PORT: env.port.default(3004),
  METRICS_PORT: env.port.default(9004),
  /** Delays before attempts 2 to 8, e.g. `30s,2m,10m,30m,1h,2h,4h` (tests use milliseconds). */
  WEBHOOK_RETRY_SCHEDULE: RetryScheduleEnv,
  /** `true` lets `test` webhooks reach loopback and private addresses only; `live` never may. */
  WEBHOOK_ALLOW_PRIVATE_TARGETS: env.bool.default(false),
  // Below the sender's 60 s lease on a claimed delivery, so no other replica takes it mid-attempt.
  WEBHOOK_ATTEMPT_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .positive()
    .max(50_000, { error: 'Must be at most 50000: an attempt must end well within its 60 s lease' })
    .default(10_000),
  // Endpoints that hang (a cloud region down) hold their WEBHOOK_DESTINATION_CONCURRENCY slots for
  // WEBHOOK_ATTEMPT_TIMEOUT_MS each: the global budget is how many of them a replica absorbs before a
  // healthy endpoint waits (docs/deploy.md).
  WEBHOOK_CONCURRENCY: z.coerce.number().int().positive().default(256),
  WEBHOOK_DESTINATION_CONCURRENCY: z.coerce.number().int().positive().default(8),
  /** Fallback poll for due deliveries (new ones and retries also wake the sender directly). */
  WEBHOOK_POLL_INTERVAL_MS: z.coerce.number().int().positive().default(500),
  /** How long the Events API keeps an event, counted from when it occurred (docs/events-api.md). */
  EVENTS_RETENTION_DAYS: z.coerce
    .number()
    .int()
    .min(1)
    .max(3650, { error: 'Must be at most 3650 (ten years)' })
    .default(EVENTS_RETENTION_DAYS_DEFAULT),
};

export type DispatcherConfig = ReturnType<typeof loadDispatcherConfig>;

export function loadDispatcherConfig(source: NodeJS.ProcessEnv = process.env) {
  return loadConfig(dispatcherEnv, source);
}
