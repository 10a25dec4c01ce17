import { z } from 'zod';

/** Raised at start when the environment is wrong; its message names every bad variable at once. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no'])
  .transform((v) => v === 'true' || v === '1' || v === 'yes');

const port = z.coerce.number().int().min(0).max(65535);

/** Variables every service reads. Defaults point at the local servers on their standard ports. */
export const commonEnv = {
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  DATABASE_URL: z.url().default('postgres://postgres@127.0.0.1:5432/seller_api'),
  AMQP_URL: z.url().default('amqp://guest:guest@127.0.0.1:5672'),
  /** Prefix of every exchange and queue name, so parallel test workers never share topology. */
  AMQP_NAMESPACE: z
    .string()
    .regex(/^[a-z0-9_.-]*$/)
    .default(''),
  /** Shared with the gateway: services accept only identities it signed with this secret. */
  INTERNAL_SECRET: z.string().min(16).default('dev-internal-secret-change-me'),
  MIGRATE_ON_START: bool.default(true),
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url().optional(),
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().positive().default(10_000),
};

export const env = { bool, port };

/**
 * Parse `source` with `shape`, collecting every problem. Production refuses the development default of
 * INTERNAL_SECRET, since a guessable secret would let anyone forge the gateway's identity.
 */
export function loadConfig<S extends z.ZodRawShape>(
  shape: S,
  source: NodeJS.ProcessEnv = process.env,
): z.infer<z.ZodObject<S>> {
  const input: Record<string, string | undefined> = {};
  for (const key of Object.keys(shape)) {
    const value = source[key];
    input[key] = value === '' ? undefined : value;
  }
  const result = z.object(shape).safeParse(input);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => {
      const name = issue.path.join('.') || '(root)';
      // Never echo the value: it may be a secret.
      return `${name}: ${issue.message}`;
    });
    throw new ConfigError(problems);
  }
  const config = result.data as Record<string, unknown>;
  if (
    config.NODE_ENV === 'production' &&
    config.INTERNAL_SECRET === commonEnv.INTERNAL_SECRET.parse(undefined)
  ) {
    throw new ConfigError(['INTERNAL_SECRET: must be set to a private value in production']);
  }
  return result.data;
}
