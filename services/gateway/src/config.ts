import { calleeSecret, commonEnv, env, loadConfig } from '@seller-api/service-kit';
import { z } from 'zod';
import { panelEnv } from './panel/config';

export const gatewayEnv = {
  ...commonEnv,
  PORT: env.port.default(8080),
  METRICS_PORT: env.port.default(9080),
  REDIS_URL: z.url().default('redis://127.0.0.1:6379'),
  /** Prefix of every Redis key, so several deployments (or test workers) can share one Redis. */
  REDIS_KEY_PREFIX: z.string().default('sa:'),
  RATE_LIMIT_PER_MINUTE: z.coerce.number().int().positive().default(300),
  UNAUTHENTICATED_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().positive().default(60),
  ORDERS_URL: z.url().default('http://127.0.0.1:3001'),
  PAYMENTS_URL: z.url().default('http://127.0.0.1:3002'),
  WITHDRAWALS_URL: z.url().default('http://127.0.0.1:3003'),
  WEBHOOKS_URL: z.url().default('http://127.0.0.1:3004'),
  /**
   * The secret each service verifies the identities the gateway signs for it with (that service's own
   * INTERNAL_SECRET); unset, the gateway's INTERNAL_SECRET, which it uses for nothing else.
   */
  ORDERS_INTERNAL_SECRET: calleeSecret(),
  PAYMENTS_INTERNAL_SECRET: calleeSecret(),
  WITHDRAWALS_INTERNAL_SECRET: calleeSecret(),
  WEBHOOKS_INTERNAL_SECRET: calleeSecret(),
  /**
   * How long one run of `/readyz`'s probes (PostgreSQL, Redis, RabbitMQ) answers it: the gateway's port
   * is public, so a flood of `/readyz` costs at most one run per this many milliseconds.
   */
  READINESS_CACHE_MS: z.coerce.number().int().min(0).max(60_000).default(1_000),
  /** A service that has not answered by then gets the client a 504, never a hang. */
  UPSTREAM_TIMEOUT_MS: z.coerce.number().int().positive().default(10_000),
  /**
   * How long a replica may keep a key's holder in memory at most (0: read PostgreSQL on every
   * request). Revocations do not wait for it: the key version in Redis is checked on every request.
   */
  KEY_CACHE_TTL_SECONDS: z.coerce.number().int().min(0).default(60),
  /**
   * The host (no port) the PSP's notifications arrive on, behind the ingress's client-certificate
   * check; set, `/api/v1/psp/...` on any other Host is 404, so the public host cannot bypass mTLS.
   */
  PSP_NOTIFICATION_HOST: z
    .string()
    .toLowerCase()
    .regex(/^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/, {
      message: 'must be a host name without scheme, port or path',
    })
    .optional(),
  ...panelEnv,
};

export type GatewayConfig = ReturnType<typeof loadGatewayConfig>;

export function loadGatewayConfig(source: NodeJS.ProcessEnv = process.env) {
  // The gateway only signs: no service calls it with an identity.
  return loadConfig(gatewayEnv, source, { verifiesIdentities: false });
}
