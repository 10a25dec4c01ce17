import type { Response } from 'express';
import type Redis from 'ioredis';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { CallKey, Logger, Sql } from '@seller-api/service-kit';
import type { KeyVersions } from '../db/key-holders';
import type { UpstreamClient } from '../http/proxy';
import { RateLimiter, rateLimitHeaders, tooManyRequests } from '../http/rate-limit';
import type { Upstream } from '../http/routing';
import type { Caller } from './caller';
import type { PasswordChecks } from './password-checks';
import { SessionStore } from './sessions';

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
  /** Plain statements on the gateway's own schema (users, sellers, keys). */
  sql: Sql;
  orm: MikroORM;
  upstreams: UpstreamClient;
  /** The public API's store: a key sent through the panel and one sent with an API key are the same. */
  /** Key changes go through it, so every replica's key cache sees them on the next request. */
  keyVersions: KeyVersions;
  /** The gateway's key for each service, to sign what is sent to it. */
  callKeys: Record<Upstream, CallKey>;
  logger: Logger;
  /** The cap on concurrent password checks (scrypt), shared by every login. */
  passwordChecks: PasswordChecks;
}

/** What every panel route module shares: the deps and the state built from them once per mount. */
export interface PanelContext {
  deps: PanelDeps;
  /** Whether the session cookie is marked Secure. */
  secure: boolean;
  sessions: SessionStore;
  /** Spends one request from the caller's per-minute budget; 429 when it is spent. */
  spendUserBudget: (caller: Caller, res: Response) => Promise<void>;
}

export function createPanelContext(deps: PanelDeps): PanelContext {
  const { config } = deps;
  const secure = config.PANEL_COOKIE_SECURE ?? !['development', 'test'].includes(config.NODE_ENV);
  const sessions = new SessionStore(deps.redis, config.REDIS_KEY_PREFIX, config.PANEL_SESSION_TTL_SECONDS);
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
  return { deps, secure, sessions, spendUserBudget };
}
