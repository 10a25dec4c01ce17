import { commonEnv, env, loadConfig } from '@seller-api/service-kit';
import { z } from 'zod';
import { RetryScheduleEnv } from './domain/retry';

export const dispatcherEnv = {
  ...commonEnv,
  PORT: env.port.default(3004),
  METRICS_PORT: env.port.default(9004),
  /** Delays before attempts 2 to 8, e.g. `30s,2m,10m,30m,1h,2h,4h` (tests use milliseconds). */
  WEBHOOK_RETRY_SCHEDULE: RetryScheduleEnv,
  /** `true` lets `test` webhooks reach loopback and private addresses; `live` never may. */
  WEBHOOK_ALLOW_PRIVATE_TARGETS: env.bool.default(false),
  // Below the sender's 60 s lease on a claimed delivery, so no other replica takes it mid-attempt.
  WEBHOOK_ATTEMPT_TIMEOUT_MS: z.coerce
    .number()
    .int()
    .positive()
    .max(50_000, { error: 'Must be at most 50000: an attempt must end well within its 60 s lease' })
    .default(10_000),
  // 32 destinations at their WEBHOOK_DESTINATION_CONCURRENCY before a healthy one waits for a slot: with
  // 128, sixteen endpoints timing out (a cloud region down) held every slot for WEBHOOK_ATTEMPT_TIMEOUT_MS.
  // Bigger claims and outcome batches also cost PostgreSQL less per delivery (bench/README.md).
  WEBHOOK_CONCURRENCY: z.coerce.number().int().positive().default(256),
  WEBHOOK_DESTINATION_CONCURRENCY: z.coerce.number().int().positive().default(8),
  /** Fallback poll for due deliveries (new ones and retries also wake the sender directly). */
  WEBHOOK_POLL_INTERVAL_MS: z.coerce.number().int().positive().default(500),
};

export type DispatcherConfig = ReturnType<typeof loadDispatcherConfig>;

export function loadDispatcherConfig(source: NodeJS.ProcessEnv = process.env) {
  return loadConfig(dispatcherEnv, source);
}
