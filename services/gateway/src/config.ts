import proxyaddr from 'proxy-addr';
import {
  TRUSTED_PROXIES,
  calleeSecret,
  commonEnv,
  env,
  loadConfig,
  pspNotificationMaxBytes,
} from '@seller-api/service-kit';
import { z } from 'zod';
import { panelEnv } from './panel/config';

const HOST_NAME = /^(?=.{1,253}$)[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

export const gatewayEnv = {
  ...commonEnv,
  PORT: env.port.default(8080),
  METRICS_PORT: env.port.default(9080),
  REDIS_URL: z.url().default('redis://127.0.0.1:6379'),
  /** Prefix of every Redis key, so several deployments (or test workers) can share one Redis. */
  REDIS_KEY_PREFIX: z.string().default('sa:'),
  RATE_LIMIT_PER_MINUTE: z.coerce.number().int().positive().default(300),
  UNAUTHENTICATED_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().positive().default(60),
  /**
   * PSP notifications (`/api/v1/psp/...`, no API key) per client address a minute, every one counted:
   * a PSP sends one per payment (or a few in a batch) from a handful of addresses (docs/limits.md).
   */
  PSP_RATE_LIMIT_PER_MINUTE: z.coerce.number().int().positive().default(1200),
  /** The largest PSP notification body accepted, in bytes (docs/limits.md, "Sizes"). */
  PSP_NOTIFICATION_MAX_BYTES: pspNotificationMaxBytes,
  ORDERS_URL: z.url().default('http://127.0.0.1:3001'),
  PAYMENTS_URL: z.url().default('http://127.0.0.1:3002'),
  WITHDRAWALS_URL: z.url().default('http://127.0.0.1:3003'),
  WEBHOOKS_URL: z.url().default('http://127.0.0.1:3004'),
  /**
   * Each service's secret of the previous release, while a deployment is upgraded (docs/deploy.md,
   * "Upgrading from shared secrets"); unset, the gateway's INTERNAL_SECRET, if any.
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
   * The hosts (no port; comma-separated, one per PSP: the live PSP's and the homologation PSP's) the
   * PSPs' notifications arrive on, each behind an Ingress that checks that PSP's client certificate.
   * Set, `/api/v1/psp/...` on any other Host is 404, so the public host cannot bypass mTLS, and only
   * on these hosts is the ingress's verdict on the certificate believed (http/psp-client.ts).
   */
  PSP_NOTIFICATION_HOST: z
    .string()
    .transform((value, ctx) => {
      const hosts = [...new Set(value.split(',').map((host) => host.trim().toLowerCase()))];
      if (hosts.some((host) => !HOST_NAME.test(host))) {
        ctx.addIssue({ code: 'custom', message: 'must be host names without scheme, port or path' });
        return z.NEVER;
      }
      return hosts;
    })
    .optional(),
  /**
   * The peers whose `ssl-client-*` headers (the ingress's verdict on a PSP's certificate) the gateway
   * believes, in proxy-addr's terms (addresses, CIDRs, `loopback`, `linklocal`, `uniquelocal`);
   * comma-separated. By default the proxies it trusts for X-Forwarded-For; the NetworkPolicy lets only
   * the ingress controller reach the gateway's port (docs/deploy.md, "PSP notifications").
   */
  PSP_INGRESS_ADDRESSES: z
    .string()
    .transform((value, ctx) => {
      const list = value
        .split(',')
        .map((entry) => entry.trim())
        .filter((entry) => entry !== '');
      try {
        proxyaddr.compile(list);
      } catch {
        ctx.addIssue({ code: 'custom', message: 'must be IP addresses, CIDRs or proxy-addr names' });
        return z.NEVER;
      }
      return list;
    })
    .default([...TRUSTED_PROXIES]),
  ...panelEnv,
};

export type GatewayConfig = ReturnType<typeof loadGatewayConfig>;

export function loadGatewayConfig(source: NodeJS.ProcessEnv = process.env) {
  // The gateway only signs: no service calls it with an identity.
  return loadConfig(gatewayEnv, source, { service: 'gateway', signs: true, verifiesIdentities: false });
}
