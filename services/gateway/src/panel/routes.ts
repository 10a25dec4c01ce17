import fs from 'node:fs';
import path from 'node:path';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import type Redis from 'ioredis';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Pool } from 'pg';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import {
  Charge,
  CreateApiKeyRequest,
  OrderPathParams,
  PanelEnvironmentRequest,
  PanelLoginRequest,
  type ApiKeyListResponse,
  type CreatedApiKeyResponse,
  type CurrentSessionResponse,
  type Identity,
  type PanelSessionResponse,
  type PixCharge,
} from '@seller-api/contracts';
import {
  IDEMPOTENCY_KEY_HEADER,
  assertJson,
  checkIdempotencyKey,
  readBody,
  HttpError,
  forbidden,
  parseOrThrow,
  signIdentity,
  unauthorized,
  type Logger,
} from '@seller-api/service-kit';
import { createApiKey } from '../domain/api-keys';
import { KeyChangeUnavailableError, type KeyVersions } from '../domain/key-holders';
import { authorize } from '../http/auth';
import { UpstreamClient, hopHeaders } from '../http/proxy';
import { RateLimiter, rateLimitHeaders, tooManyRequests } from '../http/rate-limit';
import { matchRoute, routeTemplate, type Upstream } from '../http/routing';
import {
  checkCsrfToken,
  checkOrigin,
  clearedCookie,
  readSessionCookie,
  requireJson,
  sessionCookie,
  setSecurityHeaders,
} from './security';
import type { PasswordChecks } from './password-checks';
import { SessionStore, type Session } from './sessions';
import { activeKeys, findUserByEmail, findUserById, type PanelUser } from './users';

export interface PanelConfig {
  NODE_ENV: string;
  REDIS_KEY_PREFIX: string;
  RATE_LIMIT_PER_MINUTE: number;
  PANEL_DIST_DIR: string;
  PANEL_COOKIE_SECURE?: boolean;
  PANEL_ORIGIN?: string;
  PANEL_SESSION_TTL_SECONDS: number;
  PANEL_LOGIN_ATTEMPTS: number;
  PANEL_LOGIN_ACCOUNT_ATTEMPTS: number;
}

export interface PanelDeps {
  config: PanelConfig;
  redis: Redis;
  /** The gateway's plain pool on its own schema (users, sellers, keys). */
  pool: Pool;
  orm: MikroORM;
  upstreams: UpstreamClient;
  /** The public API's store: a key sent through the panel and one sent with an API key are the same. */
  /** Key changes go through it, so every replica's key cache sees them on the next request. */
  keyVersions: KeyVersions;
  /** The secret each service verifies identities with, to sign what is sent to it. */
  internalSecrets: Record<Upstream, string>;
  logger: Logger;
  /** The cap on concurrent password checks (scrypt), shared by every login. */
  passwordChecks: PasswordChecks;
}

interface Caller {
  session: Session;
  user: PanelUser;
}

const LOGIN_WINDOW_SECONDS = 15 * 60;
/** How long an account's failures from one address count: the longest lockout, for that address only. */
const ADDRESS_ACCOUNT_WINDOW_SECONDS = 60 * 60;
/**
 * How long an account's failures from all addresses together count: the longest anyone can lock a user
 * out from elsewhere (docs/panel.md).
 */
const ACCOUNT_WINDOW_SECONDS = 15 * 60;
const invalidCredentials = () => new HttpError(401, 'unauthorized', 'Invalid e-mail or password.');

/**
 * The seller panel: `/panel/api/` (session login, API keys, and the public API's routes reached with
 * the session's identity) and the built single-page app at `/`. The panel keeps no data of its own:
 * what it shows and changes goes through the same services and contracts as an API key's calls.
 */
export function mountPanel(app: Express, deps: PanelDeps): void {
  const { config } = deps;
  const secure = config.PANEL_COOKIE_SECURE ?? !['development', 'test'].includes(config.NODE_ENV);
  const sessions = new SessionStore(deps.redis, config.REDIS_KEY_PREFIX, config.PANEL_SESSION_TTL_SECONDS);
  const loginLimiter = limiter(
    deps.redis,
    `${config.REDIS_KEY_PREFIX}rl:panel-login`,
    config.PANEL_LOGIN_ATTEMPTS,
    LOGIN_WINDOW_SECONDS,
  );
  // Many e-mails from one address is password spraying: a wider budget per IP alone.
  const ipLimiter = limiter(
    deps.redis,
    `${config.REDIS_KEY_PREFIX}rl:panel-ip`,
    config.PANEL_LOGIN_ATTEMPTS * 10,
    LOGIN_WINDOW_SECONDS,
  );
  // Failures count per e-mail and address for an hour: one address guessing one account is locked out
  // of it for up to an hour, the others are not.
  const addressAccountLimiter = limiter(
    deps.redis,
    `${config.REDIS_KEY_PREFIX}rl:panel-account-address`,
    config.PANEL_LOGIN_ACCOUNT_ATTEMPTS,
    ADDRESS_ACCOUNT_WINDOW_SECONDS,
  );
  // One e-mail from many addresses is a distributed guess: failures per e-mail whatever the IP, over 15
  // minutes only, so that no one elsewhere can lock a user out for longer. Any e-mail has both
  // budgets, known or not, so a 429 does not tell which exist.
  const accountLimiter = limiter(
    deps.redis,
    `${config.REDIS_KEY_PREFIX}rl:panel-account-any`,
    config.PANEL_LOGIN_ACCOUNT_ATTEMPTS,
    ACCOUNT_WINDOW_SECONDS,
  );
  const userLimiter = new RateLimiter(
    deps.redis,
    `${config.REDIS_KEY_PREFIX}rl:panel`,
    config.RATE_LIMIT_PER_MINUTE,
  );
  const spendUserBudget = async (caller: Caller, res: Response): Promise<void> => {
    const budget = await userLimiter.consume(caller.user.id);
    res.set(rateLimitHeaders(budget));
    if (!budget.allowed) throw tooManyRequests(budget);
  };

  const api = express.Router();
  api.use((req, res, next) => {
    setSecurityHeaders(res);
    res.set('Cache-Control', 'no-store');
    next();
  });

  api.post('/login', async (req, res) => {
    checkOrigin(req, config.PANEL_ORIGIN);
    requireJson(req);
    const input = parseOrThrow(PanelLoginRequest, await readJson(req), 'Invalid login.');
    const ip = req.ip ?? 'unknown';
    const email = input.email.trim().toLowerCase();
    const attemptKey = `${ip}|${email}`;
    const budgets: Budget[] = [
      { limiter: loginLimiter, key: attemptKey },
      { limiter: addressAccountLimiter, key: attemptKey },
      { limiter: accountLimiter, key: email },
      { limiter: ipLimiter, key: ip },
    ];
    // Read before spending: an attempt refused by one budget uses up none of the others.
    await refuseIfSpent(budgets);
    const user = await findUserByEmail(deps.pool, email);
    // Spent once a password check is free: a login refused with 503 spends nothing.
    const ok = await deps.passwordChecks.verify(input.password, user?.password_hash ?? null, () =>
      spendAll(budgets),
    );
    // The account's budgets count failures only: the right password gives its points back.
    if (ok) {
      await Promise.all([
        accountLimiter.reward(email, 1).catch(() => undefined),
        addressAccountLimiter.reward(attemptKey, 1).catch(() => undefined),
      ]);
    }
    if (!user || !ok) {
      deps.logger.info({ ip }, 'panel login refused');
      throw invalidCredentials();
    }
    if (user.seller_status === 'SUSPENDED') throw forbidden('This seller account is suspended.');
    await loginLimiter.delete(attemptKey).catch(() => undefined);
    // A login replaces any session this browser had: the old token is deleted, not left to expire.
    const previous = readSessionCookie(req, secure);
    if (previous) await sessions.destroy(previous);
    const session = await sessions.create(user.id, user.role, 'test');
    deps.logger.info({ user_id: user.id }, 'panel login');
    res.set(
      'Set-Cookie',
      sessionCookie(session.token, { secure, ttlSeconds: config.PANEL_SESSION_TTL_SECONDS }),
    );
    res.json(presentSession('Logged in.', session, user));
  });

  /** The live session of this request and its user, or null (a stale session is deleted). */
  const current = async (req: Request): Promise<Caller | null> => {
    const token = readSessionCookie(req, secure);
    const session = token ? await sessions.find(token) : null;
    if (!session) return null;
    const user = await findUserById(deps.pool, session.user_id);
    if (!user || user.role !== session.role) {
      await sessions.destroy(session.token);
      return null;
    }
    return { session, user };
  };

  api.get('/session', async (req, res) => {
    const caller = await current(req);
    const body: CurrentSessionResponse = caller
      ? presentSession('Session retrieved.', caller.session, caller.user)
      : { message: 'Not logged in.', data: null };
    res.json(body);
  });

  /** Every route below needs a live session; every change needs the session's CSRF token too. */
  api.use(async (req, res, next) => {
    const caller = await current(req);
    if (!caller) throw unauthorized('Log in to use the panel.');
    if (!['GET', 'HEAD'].includes(req.method)) {
      checkOrigin(req, config.PANEL_ORIGIN);
      checkCsrfToken(req, caller.session.csrf_token);
    }
    res.locals.caller = caller;
    next();
  });

  api.post('/logout', async (_req, res) => {
    await sessions.destroy(callerOf(res).session.token);
    res.set('Set-Cookie', clearedCookie(secure)).status(204).end();
  });

  api.post('/session/environment', async (req, res) => {
    requireJson(req);
    const { environment } = parseOrThrow(
      PanelEnvironmentRequest,
      await readJson(req),
      'Invalid environment.',
    );
    const caller = callerOf(res);
    const { session, user } = caller;
    await spendUserBudget(caller, res);
    res.json(
      presentSession('Environment changed.', await sessions.setEnvironment(session, environment), user),
    );
  });

  api.get('/keys', async (_req, res) => {
    const body: ApiKeyListResponse = {
      message: 'API keys retrieved.',
      data: { results: await activeKeys(deps.pool, callerOf(res).user.id) },
    };
    res.json(body);
  });

  api.post('/keys', async (req, res) => {
    requireJson(req);
    const input = parseOrThrow(CreateApiKeyRequest, await readJson(req), 'Invalid API key request.');
    const caller = callerOf(res);
    const { user } = caller;
    await spendUserBudget(caller, res);
    if (user.seller_status === 'SUSPENDED') throw forbidden('This seller account is suspended.');
    const { key, record } = await createApiKey(
      deps.orm.em.fork(),
      deps.keyVersions,
      user.id,
      input.environment,
      input.label || null,
    ).catch((err: unknown) => {
      if (!(err instanceof KeyChangeUnavailableError)) throw err;
      throw new HttpError(
        503,
        'service_unavailable',
        'Keys cannot be changed right now. Retry later.',
        undefined,
        {
          'Retry-After': '5',
        },
      );
    });
    deps.logger.info({ user_id: user.id, environment: record.environment }, 'panel API key created');
    const body: CreatedApiKeyResponse = {
      message: `API key created. Store it now: it is not shown again. The previous ${record.environment} key is revoked.`,
      data: {
        key,
        environment: record.environment,
        label: record.label,
        prefix: record.prefix,
        last4: record.last4,
        created_at: record.createdAt.toISOString(),
      },
    };
    res.status(201).json(body);
  });

  // The order detail carries no charge data; payments has the PIX code of a PENDING order.
  api.get('/orders/:uuid/pix', async (req, res) => {
    const { uuid } = parseOrThrow(OrderPathParams, req.params, 'Invalid order id.');
    const caller = callerOf(res);
    const identity = identityOf(caller);
    // The rules and budget of the order routes it stands beside (GET /sellers/orders/{uuid}/).
    const rule = matchRoute(`/sellers/orders/${uuid}/`);
    if (!rule) throw new HttpError(404, 'not_found', 'Order routes are not configured.');
    authorize({ ...identity, suspended: caller.user.seller_status === 'SUSPENDED' }, rule);
    await spendUserBudget(caller, res);
    const upstreamPath = `/internal/charges/${uuid}/`;
    const answer = await deps.upstreams.send(
      'payments',
      'GET',
      upstreamPath,
      upstreamHeaders(deps, req, 'payments', identity, 'GET', upstreamPath, null),
      null,
    );
    if (answer.status !== 200) {
      res.writeHead(answer.status, answer.headers).end(answer.body);
      return;
    }
    const charge = chargeOf(answer.body);
    const pix: PixCharge = {
      qr_code_id: charge.txid,
      copy_and_paste: charge.copy_and_paste,
      qr_code_image_base64: charge.qr_code_image_base64,
      transaction_uuid: charge.transaction_uuid,
    };
    res.json({ message: 'PIX charge retrieved.', data: pix });
  });

  /** The public API's own routes, with the session's identity instead of an API key's. */
  api.use('/v1', async (req, res) => {
    const apiPath = req.path;
    const template = routeTemplate(req.method, apiPath);
    if (template) res.locals.routeTemplate = `/panel/api/v1${template}`;
    const rule = matchRoute(apiPath);
    if (!rule || rule.role === null || !['GET', 'POST', 'PATCH', 'DELETE'].includes(req.method)) {
      throw new HttpError(404, 'not_found', `Route ${req.method} ${apiPath} not found.`);
    }
    const caller = callerOf(res);
    const identity = identityOf(caller);
    authorize({ ...identity, suspended: caller.user.seller_status === 'SUSPENDED' }, rule);
    await spendUserBudget(caller, res);
    const body = await readBody(req);
    assertJson(body);
    const query = req.originalUrl.includes('?') ? req.originalUrl.slice(req.originalUrl.indexOf('?')) : '';
    const forward = () =>
      deps.upstreams.send(
        rule.upstream,
        req.method,
        apiPath + query,
        upstreamHeaders(deps, req, rule.upstream, identity, req.method, apiPath + query, body),
        body,
      );
    // A retried POST (the page sends a key per action) is answered once, as on the public API: the
    // service that makes the change keeps the key (docs/idempotency.md).
    const idempotencyKey = req.headers[IDEMPOTENCY_KEY_HEADER];
    if (req.method === 'POST' && typeof idempotencyKey === 'string') checkIdempotencyKey(idempotencyKey);
    const answer = await forward();
    res.writeHead(answer.status, { ...answer.headers, ...headersOf(res) });
    res.end(answer.body);
  });

  app.use('/panel/api', api);
  mountStatic(app, config.PANEL_DIST_DIR);
}

function limiter(redis: Redis, keyPrefix: string, points: number, duration: number): RateLimiterRedis {
  return new RateLimiterRedis({
    storeClient: redis,
    keyPrefix,
    points,
    duration,
    rejectIfRedisNotReady: true,
    insuranceLimiter: new RateLimiterMemory({ keyPrefix: `${keyPrefix}:memory`, points, duration }),
  });
}

/** One login budget: a limiter and the key this attempt counts under. */
interface Budget {
  limiter: RateLimiterRedis;
  key: string;
}

/** 429 when any budget has nothing left, without spending from any of them. */
async function refuseIfSpent(budgets: Budget[]): Promise<void> {
  const states = await Promise.all(budgets.map(({ limiter, key }) => limiter.get(key)));
  const waits = states.flatMap((state, i) =>
    state && state.consumedPoints >= (budgets[i]?.limiter.points ?? 0) ? [state.msBeforeNext] : [],
  );
  if (waits.length > 0) throw tooManyAttempts(Math.max(...waits));
}

/** Spends one attempt from every budget; 429 when one went over meanwhile (a concurrent attempt). */
async function spendAll(budgets: Budget[]): Promise<void> {
  const results = await Promise.allSettled(budgets.map(({ limiter, key }) => limiter.consume(key)));
  const waits: number[] = [];
  for (const result of results) {
    if (result.status === 'fulfilled') continue;
    if (!(result.reason instanceof RateLimiterRes)) throw result.reason;
    waits.push(result.reason.msBeforeNext);
  }
  if (waits.length > 0) throw tooManyAttempts(Math.max(...waits));
}

function tooManyAttempts(msBeforeNext: number): HttpError {
  const seconds = Math.max(1, Math.ceil(msBeforeNext / 1000));
  return new HttpError(429, 'rate_limited', `Too many login attempts. Retry after ${seconds} s.`, undefined, {
    'Retry-After': String(seconds),
  });
}

async function readJson(req: Request): Promise<unknown> {
  const body = await readBody(req);
  assertJson(body);
  return body.length === 0 ? {} : (JSON.parse(body.toString('utf8')) as unknown);
}

function callerOf(res: Response): Caller {
  const caller = res.locals.caller as Caller | undefined;
  if (!caller) throw unauthorized('Log in to use the panel.');
  return caller;
}

function identityOf({ session, user }: Caller): Identity {
  return {
    user_id: user.id,
    seller_id: user.seller_id,
    environment: session.environment,
    role: user.role,
    seller_name: user.seller_name,
  };
}

function presentSession(message: string, session: Session, user: PanelUser): PanelSessionResponse {
  return {
    message,
    data: {
      email: user.email,
      role: user.role,
      seller_name: user.seller_name,
      environment: session.environment,
      csrf_token: session.csrf_token,
      expires_at: new Date(session.expires_at).toISOString(),
    },
  };
}

/** Only what the service needs: the browser's cookies and headers stay at the gateway. */
function upstreamHeaders(
  deps: PanelDeps,
  req: Request,
  upstream: Upstream,
  identity: Identity,
  method: string,
  /** The path with its query, as sent. */
  upstreamPath: string,
  /** The exact bytes sent, which the signature covers. */
  body: Buffer | null,
): Record<string, string> {
  const hasBody = body !== null && body.length > 0;
  const key = req.headers[IDEMPOTENCY_KEY_HEADER];
  return {
    accept: 'application/json',
    ...hopHeaders(req, hasBody),
    // The service that makes the change keeps the key (docs/idempotency.md).
    ...(typeof key === 'string' ? { [IDEMPOTENCY_KEY_HEADER]: key } : {}),
    ...signIdentity(deps.internalSecrets[upstream], identity, method, upstreamPath, hasBody ? body : null),
  };
}

/** The charge in payments' answer; an answer outside the contract is payments' fault (502). */
function chargeOf(body: Buffer): Charge {
  let data: unknown;
  try {
    data = (JSON.parse(body.toString('utf8')) as { data?: unknown } | null)?.data;
  } catch {
    data = undefined;
  }
  const parsed = Charge.safeParse(data);
  if (!parsed.success) {
    throw new HttpError(502, 'bad_gateway', 'The payments service gave an invalid answer. Retry later.');
  }
  return parsed.data;
}

function headersOf(res: Response): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(res.getHeaders())) {
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : String(value);
  }
  return out;
}

/** The built app: hashed assets cached for good, index.html always revalidated. */
function mountStatic(app: Express, distDir: string): void {
  const serve = express.static(distDir, {
    index: 'index.html',
    redirect: false,
    setHeaders: (res, filePath) => {
      setSecurityHeaders(res);
      res.setHeader(
        'Cache-Control',
        filePath.includes(`${path.sep}assets${path.sep}`)
          ? 'public, max-age=31536000, immutable'
          : 'no-cache',
      );
    },
  });
  app.use((req: Request, res: Response, next: NextFunction) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    if (req.path !== '/' && req.path !== '/index.html' && !req.path.startsWith('/assets/')) return next();
    res.locals.routeTemplate = req.path.startsWith('/assets/') ? '/assets/:file' : '/';
    if (req.path === '/' && !fs.existsSync(path.join(distDir, 'index.html'))) {
      setSecurityHeaders(res);
      res.status(503).type('text/plain').send('The panel is not built: run `npm run build`.');
      return;
    }
    serve(req, res, next);
  });
}
