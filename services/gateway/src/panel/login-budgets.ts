import type Redis from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { HttpError } from '@seller-api/service-kit';
import type { PanelConfig } from './deps';

const LOGIN_WINDOW_SECONDS = 15 * 60;
/** How long an account's failures from one address count: the longest lockout, for that address only. */
const ADDRESS_ACCOUNT_WINDOW_SECONDS = 60 * 60;
/**
 * How long an account's failures from all addresses together count: the longest anyone can lock a user
 * out from elsewhere (docs/panel.md).
 */
const ACCOUNT_WINDOW_SECONDS = 15 * 60;

export interface LoginLimiters {
  loginLimiter: RateLimiterRedis;
  ipLimiter: RateLimiterRedis;
  addressAccountLimiter: RateLimiterRedis;
  accountLimiter: RateLimiterRedis;
}

export function createLoginLimiters(redis: Redis, config: PanelConfig): LoginLimiters {
  const loginLimiter = limiter(
    redis,
    `${config.REDIS_KEY_PREFIX}rl:panel-login`,
    config.PANEL_LOGIN_ATTEMPTS,
    LOGIN_WINDOW_SECONDS,
  );
  // Many e-mails from one address is password spraying: a wider budget per IP alone.
  const ipLimiter = limiter(
    redis,
    `${config.REDIS_KEY_PREFIX}rl:panel-ip`,
    config.PANEL_LOGIN_ATTEMPTS * 10,
    LOGIN_WINDOW_SECONDS,
  );
  // Failures count per e-mail and address for an hour: one address guessing one account is locked out
  // of it for up to an hour, the others are not.
  const addressAccountLimiter = limiter(
    redis,
    `${config.REDIS_KEY_PREFIX}rl:panel-account-address`,
    config.PANEL_LOGIN_ACCOUNT_ATTEMPTS,
    ADDRESS_ACCOUNT_WINDOW_SECONDS,
  );
  // One e-mail from many addresses is a distributed guess: failures per e-mail whatever the IP, over 15
  // minutes only, so that no one elsewhere can lock a user out for longer. Any e-mail has both
  // budgets, known or not, so a 429 does not tell which exist.
  const accountLimiter = limiter(
    redis,
    `${config.REDIS_KEY_PREFIX}rl:panel-account-any`,
    config.PANEL_LOGIN_ACCOUNT_ATTEMPTS,
    ACCOUNT_WINDOW_SECONDS,
  );
  return { loginLimiter, ipLimiter, addressAccountLimiter, accountLimiter };
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
export interface Budget {
  limiter: RateLimiterRedis;
  key: string;
}

/** 429 when any budget has nothing left, without spending from any of them. */
export async function refuseIfSpent(budgets: Budget[]): Promise<void> {
  const states = await Promise.all(budgets.map(({ limiter, key }) => limiter.get(key)));
  const waits = states.flatMap((state, i) =>
    state && state.consumedPoints >= (budgets[i]?.limiter.points ?? 0) ? [state.msBeforeNext] : [],
  );
  if (waits.length > 0) throw tooManyAttempts(Math.max(...waits));
}

/** Spends one attempt from every budget; 429 when one went over meanwhile (a concurrent attempt). */
export async function spendAll(budgets: Budget[]): Promise<void> {
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
