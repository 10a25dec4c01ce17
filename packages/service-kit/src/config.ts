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

const DEV_INTERNAL_SECRET = 'dev-internal-secret-change-me';
const internalSecret = () => z.string().min(16).default(DEV_INTERNAL_SECRET);

/**
 * A called service's secret is named `<SERVICE>_INTERNAL_SECRET` (PAYMENTS_INTERNAL_SECRET, ...): the
 * one that service verifies with. Unset, it is the caller's own INTERNAL_SECRET, so one secret shared
 * by all still works (docs/deploy.md, "Secrets").
 */
const CALLEE_SECRET = /^[A-Z][A-Z0-9]*_INTERNAL_SECRET$/;

/** The secret of a service this one calls (see CALLEE_SECRET): the same rules as INTERNAL_SECRET. */
export const calleeSecret = internalSecret;

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
  /**
   * The secret this service verifies incoming identities with: it accepts only what was signed with it
   * (by the gateway, or by a service calling it that holds it as `<SERVICE>_INTERNAL_SECRET`).
   */
  INTERNAL_SECRET: internalSecret(),
  /**
   * While INTERNAL_SECRET is being replaced: the one it replaces, still accepted, so that callers signing
   * with it keep working until they have the new one (docs/deploy.md, "Secrets"). Unset otherwise.
   */
  INTERNAL_SECRET_PREVIOUS: z.string().min(16).optional(),
  MIGRATE_ON_START: bool.default(true),
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url().optional(),
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().positive().default(10_000),
};

export const env = { bool, port };

/**
 * Parse `source` with `shape`, collecting every problem. A callee's secret left unset takes the value of
 * INTERNAL_SECRET (a problem with it is then INTERNAL_SECRET's). Production refuses the development
 * default of every internal secret used, since a guessable secret would let anyone forge an identity;
 * `verifiesIdentities: false` (the gateway, which only signs) uses INTERNAL_SECRET only as that default.
 */
export function loadConfig<S extends z.ZodRawShape>(
  shape: S,
  source: NodeJS.ProcessEnv = process.env,
  options: { verifiesIdentities?: boolean } = {},
): z.infer<z.ZodObject<S>> {
  const input: Record<string, string | undefined> = {};
  for (const key of Object.keys(shape)) {
    const value = source[key];
    input[key] = value === '' ? undefined : value;
  }
  const callees = Object.keys(shape).filter((key) => CALLEE_SECRET.test(key));
  const inherited = new Set(callees.filter((key) => input[key] === undefined));
  for (const key of inherited) input[key] = input.INTERNAL_SECRET;

  const result = z.object(shape).safeParse(input);
  const problems = result.success
    ? []
    : result.error.issues
        .filter((issue) => !inherited.has(String(issue.path[0])))
        // Never echo the value: it may be a secret.
        .map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`);
  if (input.NODE_ENV === 'production') {
    const used = [
      ...('INTERNAL_SECRET' in shape && (options.verifiesIdentities !== false || inherited.size > 0)
        ? ['INTERNAL_SECRET']
        : []),
      ...callees.filter((key) => !inherited.has(key)),
    ];
    for (const key of used) {
      const value = input[key];
      const named = problems.some((problem) => problem.startsWith(`${key}:`));
      if (!named && (value === undefined || value === DEV_INTERNAL_SECRET))
        problems.push(`${key}: must be set to a private value in production`);
    }
  }
  if (!result.success || problems.length > 0) throw new ConfigError(problems);
  return result.data;
}
