import { z } from 'zod';
import { deriveCallKey } from './identity';
import { isKnownSecret } from './known-secrets';

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

/**
 * Internal keys (docs/deploy.md, "Internal keys"): each service that calls another signs with its own
 * INTERNAL_KEY; each service called is given, per caller, the key derived from that caller's key for
 * it (INTERNAL_CALLER_KEYS, `caller:key` pairs; a caller listed twice while its key is replaced).
 * Outside production both default to development values derived from each service's name.
 */
export const SERVICE_NAMES = ['gateway', 'orders', 'payments', 'withdrawals', 'webhook-dispatcher'] as const;
export type ServiceName = (typeof SERVICE_NAMES)[number];
const MIN_KEY_BYTES = 32;
// Keys as deriveCallKey writes them (base64url), or hex: a stray separator is an error, not part of a key.
const CALLER_KEY_ENTRY = /^([a-z][a-z0-9-]{0,39}):([A-Za-z0-9_-]+)$/;

/** The development INTERNAL_KEY of a service: public, refused in production. */
export const devInternalKey = (service: string) => `dev-internal-key-${service}-change-me-0000000000`;

/** INTERNAL_CALLER_KEYS parsed: per caller, its keys in the order given. */
export function parseCallerKeys(text: string): Map<string, string[]> {
  const keys = new Map<string, string[]>();
  for (const entry of text
    .split(',')
    .map((e) => e.trim())
    .filter(Boolean)) {
    const match = CALLER_KEY_ENTRY.exec(entry);
    if (!match) throw new Error('each entry is caller:key');
    const [, caller, key] = match as unknown as [string, string, string];
    keys.set(caller, [...(keys.get(caller) ?? []), key]);
  }
  return keys;
}

/** The development INTERNAL_CALLER_KEYS of a service: every service's development key, derived for it. */
export function devCallerKeys(callee: string): string {
  return SERVICE_NAMES.map((caller) => `${caller}:${deriveCallKey(devInternalKey(caller), callee)}`).join(
    ',',
  );
}

const callerKeysText = z
  .string()
  .refine(
    (text) => {
      try {
        const parsed = parseCallerKeys(text);
        const keys = [...parsed.values()].flat();
        // Only the services are callers (never `legacy`, which would get every row), and one key is
        // one caller's: a key listed for two would let either sign as the other.
        return (
          parsed.size > 0 &&
          [...parsed.keys()].every((caller) => (SERVICE_NAMES as readonly string[]).includes(caller)) &&
          new Set(keys).size === keys.length &&
          keys.every((k) => Buffer.byteLength(k) >= MIN_KEY_BYTES)
        );
      } catch {
        return false;
      }
    },
    {
      error: `Expected caller:key pairs separated by commas, callers among ${SERVICE_NAMES.join(', ')}, each key at least ${MIN_KEY_BYTES} bytes and listed once`,
    },
  )
  .optional();

/** The previous release's shared secrets, accepted and sent only while a deployment is upgraded. */
const legacySecret = () => z.string().min(16).optional();

/**
 * A called service's secret of the previous release, `<SERVICE>_INTERNAL_SECRET` (PAYMENTS_INTERNAL_SECRET,
 * ...): while a deployment is being upgraded, calls to a service of that release are signed with it
 * too. Unset, the caller's INTERNAL_SECRET, if any.
 */
const CALLEE_SECRET = /^[A-Z][A-Z0-9]*_INTERNAL_SECRET$/;

/** The previous release's secret of a service this one calls (see CALLEE_SECRET). */
export const calleeSecret = legacySecret;

function amqpAddressesValid(value: string): boolean {
  const list = value.split(',').map((one) => one.trim());
  return list.every((one) => URL.canParse(one) && /^amqps?:$/.test(new URL(one).protocol));
}

/** Variables every service reads. Defaults point at the local servers on their standard ports. */
export const commonEnv = {
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  DATABASE_URL: z.url().default('postgres://postgres@127.0.0.1:5432/seller_api'),
  /**
   * A direct PostgreSQL address (same database and role) for the session-level advisory locks:
   * migrations' lock and the one-replica-at-a-time jobs' (replica-lock.ts). Set when DATABASE_URL goes
   * through a pooler in transaction mode, where a session lock would stay on a server connection the
   * next client gets (docs/deploy.md, "PgBouncer"). Unset: DATABASE_URL.
   */
  DATABASE_LOCK_URL: z.url({ protocol: /^postgres(ql)?$/, error: 'Must be a postgres:// URL' }).optional(),
  /**
   * false: every statement is sent unnamed, planned at every run, for a pooler in transaction mode
   * that does not carry prepared statements between server connections (PgBouncer before 1.21).
   */
  DATABASE_PREPARED_STATEMENTS: bool.default(true),
  /**
   * The broker, or a cluster's nodes as URLs separated by commas: a service connects to one and moves
   * to the next when it fails (docs/messaging.md, "A cluster").
   */
  AMQP_URL: z
    .string()
    .default('amqp://guest:guest@127.0.0.1:5672')
    .refine((value) => amqpAddressesValid(value), {
      error: 'Must be one amqp:// or amqps:// URL, or several separated by commas',
    }),
  /** Prefix of every exchange and queue name, so parallel test workers never share topology. */
  AMQP_NAMESPACE: z
    .string()
    .regex(/^[a-z0-9_.-]*$/)
    .default(''),
  /** The key this service signs its calls to other services with (at least 32 bytes). */
  INTERNAL_KEY: z
    .string()
    .min(MIN_KEY_BYTES)
    // A trailing newline from a secret file would sign nothing any service accepts.
    .regex(/^\S+$/, { error: 'Must not contain spaces or line breaks' })
    .optional(),
  /** Per caller, the key derived from its INTERNAL_KEY for this service: `caller:key,caller:key`. */
  INTERNAL_CALLER_KEYS: callerKeysText,
  /**
   * The previous release's shared secret (and the one it replaced), only while a deployment is being
   * upgraded: calls signed with it are accepted as the caller `legacy` (docs/deploy.md, "Upgrading
   * from shared secrets"). Unset once every service runs this release.
   */
  INTERNAL_SECRET: legacySecret(),
  INTERNAL_SECRET_PREVIOUS: legacySecret(),
  MIGRATE_ON_START: bool.default(true),
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url().optional(),
  SHUTDOWN_TIMEOUT_MS: z.coerce.number().int().positive().default(10_000),
};

export const env = { bool, port };

/** The database variables alone, for a command that needs nothing else (migrations, a CLI). */
export const databaseEnv = {
  DATABASE_URL: commonEnv.DATABASE_URL,
  DATABASE_LOCK_URL: commonEnv.DATABASE_LOCK_URL,
  DATABASE_PREPARED_STATEMENTS: commonEnv.DATABASE_PREPARED_STATEMENTS,
};

/** What `loadConfig` checks of a service's keys. */
export interface KeyOptions {
  /** The service's name: its development keys are derived from it. */
  service?: ServiceName;
  /** Whether the service verifies signed calls (all but the gateway). */
  verifiesIdentities?: boolean;
  /** Whether the service signs calls to others (the gateway, orders, withdrawals). */
  signs?: boolean;
}

/**
 * Parse `source` with `shape`, collecting every problem. Outside production INTERNAL_KEY and
 * INTERNAL_CALLER_KEYS default to the development values of `options.service`. Production refuses a
 * key or secret that is missing where it is used, shorter than 32 bytes, or one of the public values
 * (known-secrets.ts), since a known key lets anyone sign as a service.
 */
export function loadConfig<S extends z.ZodRawShape>(
  shape: S,
  source: NodeJS.ProcessEnv = process.env,
  options: KeyOptions = {},
): z.infer<z.ZodObject<S>> {
  const input: Record<string, string | undefined> = {};
  for (const key of Object.keys(shape)) {
    const value = source[key];
    input[key] = value === '' ? undefined : value;
  }
  const production = input.NODE_ENV === 'production';
  if (!production && options.service) {
    if ('INTERNAL_KEY' in shape) input.INTERNAL_KEY ??= devInternalKey(options.service);
    if ('INTERNAL_CALLER_KEYS' in shape) input.INTERNAL_CALLER_KEYS ??= devCallerKeys(options.service);
  }
  const result = z.object(shape).safeParse(input);
  const problems = result.success
    ? []
    : // Never echo the value: it may be a secret.
      result.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`);
  if (production) problems.push(...productionKeyProblems(shape, input, options, problems));
  // Loopback and private webhook targets are for a developer's machine: a production deployment that
  // opened them would let any test key reach its internal network (docs/webhooks.md, "Target rules").
  for (const name of ['WEBHOOK_ALLOW_PRIVATE_TARGETS', 'WEBHOOK_ALLOW_LOOPBACK_TARGETS']) {
    if (production && result.success && (result.data as Record<string, unknown>)[name] === true)
      problems.push(`${name}: Must not be true in production`);
  }
  if (!result.success || problems.length > 0) throw new ConfigError(problems);
  return result.data;
}

function productionKeyProblems(
  shape: z.ZodRawShape,
  input: Record<string, string | undefined>,
  options: KeyOptions,
  named: string[],
): string[] {
  const problems: string[] = [];
  const alreadyNamed = (key: string) => named.some((problem) => problem.startsWith(`${key}:`));
  const check = (key: string, values: string[]) => {
    if (alreadyNamed(key)) return;
    // A published value first: a longer one would be just as public.
    if (values.some(isKnownSecret))
      problems.push(`${key}: is a published development value; set a private one in production`);
    else if (values.some((v) => Buffer.byteLength(v) < MIN_KEY_BYTES))
      problems.push(`${key}: must be at least ${MIN_KEY_BYTES} bytes in production`);
  };
  const required = (key: string, needed: boolean) => {
    if (!(key in shape)) return;
    const value = input[key];
    if (value === undefined) {
      if (needed && !alreadyNamed(key)) problems.push(`${key}: must be set in production`);
      return;
    }
    if (key === 'INTERNAL_CALLER_KEYS') {
      try {
        check(key, [...parseCallerKeys(value).values()].flat());
      } catch {
        // Named by the schema already.
      }
    } else check(key, [value]);
  };
  required('INTERNAL_KEY', options.signs === true);
  required('INTERNAL_CALLER_KEYS', options.verifiesIdentities !== false);
  const legacy = Object.keys(shape).filter(
    (k) => k === 'INTERNAL_SECRET' || k === 'INTERNAL_SECRET_PREVIOUS' || CALLEE_SECRET.test(k),
  );
  for (const key of legacy) required(key, false);
  return problems;
}
