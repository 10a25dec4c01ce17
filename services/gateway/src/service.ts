import type http from 'node:http';
import Redis from 'ioredis';
import {
  callKeyOf,
  createHttpApp,
  createRuntime,
  finishHttpApp,
  type CallKey,
  type Runtime,
} from '@seller-api/service-kit';
import type pino from 'pino';
import type { GatewayConfig } from './config';
import { entities } from './db/entities';
import { KeyHolders, KeyVersions } from './db/key-holders';
import { SCHEMA, migrations } from './db/migrations';
import { mountDocs } from './http/docs';
import { withPublicApi } from './http/api';
import { gatewayHandler } from './http/gateway';
import { pspClientCheck } from './http/psp-client';
import { TurnBatch } from './http/turn-batch';
import { UpstreamClient } from './http/proxy';
import type { Upstream } from './http/routing';
import { RateLimiter } from './http/rate-limit';
import { PasswordChecks } from './panel/password-checks';
import { mountPanel } from './panel/routes';

export interface GatewayService {
  runtime: Runtime;
  redis: Redis;
  server: http.Server;
  metricsServer?: http.Server;
  /** The panel's cap on concurrent password checks (tests hold its slots). */
  passwordChecks: PasswordChecks;
  /** What every change of a key holder runs in, so the replicas' key caches see it at once. */
  keyVersions: KeyVersions;
  stop(): Promise<void>;
}

export async function startGateway(
  config: GatewayConfig,
  options: { logDestination?: pino.DestinationStream; metrics?: boolean } = {},
): Promise<GatewayService> {
  const runtime = await createRuntime({
    service: 'gateway',
    config,
    schema: SCHEMA,
    entities,
    migrations,
    topology: { exchanges: [], queues: [] },
    logDestination: options.logDestination,
  });
  // Fail fast while Redis is down (the limiter falls back to memory) instead of queueing commands.
  const redis = new Redis(config.REDIS_URL, {
    // Commands issued in one tick (a key's rate budget and the key version) share one write.
    enableAutoPipelining: true,
    // RESP2 as with ioredis 5 (6 defaults to RESP3 through HELLO, which Redis < 6 and some proxies
    // refuse with no fallback); the replies the gateway reads are the same either way.
    protocol: 2,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2_000,
    retryStrategy: (times) => Math.min(times * 200, 2_000),
  });
  redis.on('error', (err: Error) => runtime.logger.debug({ err: err.message }, 'redis error'));
  // Serve with the shared limiter from the first request when Redis is there; start anyway when not.
  await waitForRedis(redis, 2_000).catch(() =>
    runtime.logger.warn('Redis unreachable at start; rate limits fall back to memory'),
  );

  const keyVersions = new KeyVersions(redis, config.REDIS_KEY_PREFIX);
  const keyHolders = new KeyHolders(runtime.sql, keyVersions, config.KEY_CACHE_TTL_SECONDS * 1000);
  const upstreams = new UpstreamClient(
    {
      orders: config.ORDERS_URL,
      payments: config.PAYMENTS_URL,
      withdrawals: config.WITHDRAWALS_URL,
      webhooks: config.WEBHOOKS_URL,
    },
    config.UPSTREAM_TIMEOUT_MS,
  );
  // The gateway's key, derived for each service (docs/deploy.md, "Internal keys").
  const callKeys: Record<Upstream, CallKey> = {
    orders: callKeyOf(config, 'gateway', 'orders', config.ORDERS_INTERNAL_SECRET),
    payments: callKeyOf(config, 'gateway', 'payments', config.PAYMENTS_INTERNAL_SECRET),
    withdrawals: callKeyOf(config, 'gateway', 'withdrawals', config.WITHDRAWALS_INTERNAL_SECRET),
    webhooks: callKeyOf(config, 'gateway', 'webhook-dispatcher', config.WEBHOOKS_INTERNAL_SECRET),
  };
  const app = createHttpApp({
    logger: runtime.logger,
    metrics: runtime.metrics,
    parseJson: false,
    untrustedCallers: true,
  });
  // The public port: `/readyz` answers from a run of the probes at most READINESS_CACHE_MS old.
  runtime.mountHealth(
    app,
    {
      redis: async () => {
        await redis.ping();
      },
    },
    { cacheMs: config.READINESS_CACHE_MS },
  );
  mountDocs(app);
  const passwordChecks = new PasswordChecks(config.PANEL_LOGIN_CONCURRENCY, config.PANEL_LOGIN_QUEUE);
  // The seller panel: its session API under /panel/api and the built app at /.
  mountPanel(app, {
    config,
    redis,
    sql: runtime.sql,
    orm: runtime.orm,
    upstreams,
    keyVersions,
    callKeys,
    logger: runtime.logger,
    passwordChecks,
  });
  const api = gatewayHandler({
    keyHolders,
    redisTurn: new TurnBatch(),
    keyLimiter: new RateLimiter(redis, `${config.REDIS_KEY_PREFIX}rl:key`, config.RATE_LIMIT_PER_MINUTE),
    ipLimiter: new RateLimiter(
      redis,
      `${config.REDIS_KEY_PREFIX}rl:ip`,
      config.UNAUTHENTICATED_RATE_LIMIT_PER_MINUTE,
    ),
    pspLimiter: new RateLimiter(redis, `${config.REDIS_KEY_PREFIX}rl:psp`, config.PSP_RATE_LIMIT_PER_MINUTE),
    pspMaxBytes: config.PSP_NOTIFICATION_MAX_BYTES,
    upstreams,
    callKeys,
    logger: runtime.logger,
    pspClients: pspClientCheck(config.PSP_NOTIFICATION_HOST, config.PSP_INGRESS_ADDRESSES),
  });
  finishHttpApp(app, runtime.logger);
  const { server, metricsServer } = await runtime.serve(
    withPublicApi(app, api, runtime),
    config.PORT,
    options.metrics === false ? undefined : config.METRICS_PORT,
  );
  runtime.logger.info({ port: config.PORT }, 'gateway listening');
  return {
    runtime,
    redis,
    server,
    metricsServer,
    passwordChecks,
    keyVersions,
    stop: () =>
      runtime.stop(async () => {
        await upstreams.close();
        redis.disconnect();
      }),
  };
}

/** Resolves when Redis is ready; rejects at its first connection error or after `timeoutMs`. */
function waitForRedis(redis: Redis, timeoutMs: number): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const done = (err?: Error) => {
      clearTimeout(timer);
      redis.off('ready', onReady);
      redis.off('error', onError);
      if (err) reject(err);
      else resolve();
    };
    const onReady = () => done();
    const onError = (err: Error) => done(err);
    const timer = setTimeout(() => done(new Error('redis not ready')), timeoutMs);
    redis.once('ready', onReady);
    redis.once('error', onError);
  });
}
