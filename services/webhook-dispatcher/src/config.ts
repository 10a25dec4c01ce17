import { DELIVERIES_RETENTION_DAYS_DEFAULT, EVENTS_RETENTION_DAYS_DEFAULT } from '@seller-api/contracts';
import { ConfigError, commonEnv, env, loadConfig } from '@seller-api/service-kit';
import { z } from 'zod';
import { RetryScheduleEnv } from './domain/retry';
import { parseSecretsKey } from './domain/secret-box';

/**
 * The key development and test run with when WEBHOOK_SECRETS_KEY is unset: public, so production
 * refuses it (loadDispatcherConfig).
 */
export const DEV_WEBHOOK_SECRETS_KEY = 'ZGV2LW9ubHkgd2ViaG9vayBzZWNyZXRzIGtleSAhISE=';

const SecretsKey = z
  .string()
  .refine((value) => parseSecretsKey(value) !== null, {
    // Never the value: it is a key.
    error: 'Must be 32 bytes, as 64 hex digits or in base64 (openssl rand -base64 32)',
  })
  .transform((value) => parseSecretsKey(value) as Buffer);

export const dispatcherEnv = {
  ...commonEnv,
  PORT: env.port.default(3004),
  METRICS_PORT: env.port.default(9004),
  /** Delays before attempts 2 to 8, e.g. `30s,2m,10m,30m,1h,2h,4h` (tests use milliseconds). */
  WEBHOOK_RETRY_SCHEDULE: RetryScheduleEnv,
  /** `true` lets `test` webhooks reach loopback and private addresses only; `live` never may. */
  WEBHOOK_ALLOW_PRIVATE_TARGETS: env.bool.default(false),
  /** `true` lets `test` webhooks reach loopback only; `npm start` sets it (docs/webhooks.md, "Local receivers"). */
  WEBHOOK_ALLOW_LOOPBACK_TARGETS: env.bool.default(false),
  /**
   * The key webhook signing secrets are sealed with at rest (AES-256-GCM, domain/secret-box.ts); a
   * development default outside production.
   */
  WEBHOOK_SECRETS_KEY: SecretsKey.prefault(DEV_WEBHOOK_SECRETS_KEY),
  /** While WEBHOOK_SECRETS_KEY is being replaced: the one it replaces, still opening (docs/deploy.md). */
  WEBHOOK_SECRETS_KEY_PREVIOUS: SecretsKey.optional(),
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
  /** Per destination host: a scheme, host and port, whatever the path (domain/destination.ts). */
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
  /**
   * How long deliveries and their attempts are kept, counted from when they were made; a month of
   * them goes at once, when its last day is this old (docs/webhooks.md, "History and retention").
   */
  DELIVERIES_RETENTION_DAYS: z.coerce
    .number()
    .int()
    .min(7, {
      error: 'Must be at least 7: a retry schedule may run for days, and a re-send needs its delivery',
    })
    .max(3650, { error: 'Must be at most 3650 (ten years)' })
    .default(DELIVERIES_RETENTION_DAYS_DEFAULT),
};

export type DispatcherConfig = ReturnType<typeof loadDispatcherConfig>;

/**
 * The dispatcher's configuration, every bad variable named in one ConfigError: the shape's own checks,
 * and production's refusal of a missing or development WEBHOOK_SECRETS_KEY (anyone could open the
 * stored secrets with a public key).
 */
export function loadDispatcherConfig(source: NodeJS.ProcessEnv = process.env) {
  let config: ReturnType<typeof loadConfig<typeof dispatcherEnv>> | null = null;
  const problems: string[] = [];
  try {
    config = loadConfig(dispatcherEnv, source, { service: 'webhook-dispatcher' });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    problems.push(...err.problems);
  }
  const named = (name: string) => problems.some((problem) => problem.startsWith(`${name}:`));
  const given = (name: string) => (source[name] ?? '').trim() !== '';
  const devKey = parseSecretsKey(DEV_WEBHOOK_SECRETS_KEY) as Buffer;
  if (source.NODE_ENV === 'production' && !named('WEBHOOK_SECRETS_KEY')) {
    if (!given('WEBHOOK_SECRETS_KEY')) {
      problems.push('WEBHOOK_SECRETS_KEY: Must be set in production (openssl rand -base64 32)');
    } else if (config?.WEBHOOK_SECRETS_KEY.equals(devKey)) {
      problems.push('WEBHOOK_SECRETS_KEY: Must not be the development key in production');
    }
  }
  const previous = config?.WEBHOOK_SECRETS_KEY_PREVIOUS;
  if (previous && config?.WEBHOOK_SECRETS_KEY.equals(previous)) {
    problems.push('WEBHOOK_SECRETS_KEY_PREVIOUS: Must differ from WEBHOOK_SECRETS_KEY');
  }
  if (problems.length > 0 || config === null) throw new ConfigError(problems);
  return config;
}
