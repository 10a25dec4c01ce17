import type Redis from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { HttpError } from '@seller-api/service-kit';

export interface RateLimitResult {
  limit: number;
  remaining: number;
  /** Seconds until the window frees a request. */
  resetSeconds: number;
  allowed: boolean;
}

/**
 * A per-key budget shared by every replica through Redis. When Redis is unreachable the same budget
 * is kept in this replica's memory (the insurance limiter), so the gateway stays up, only less strict.
 */
export class RateLimiter {
  private readonly limiter: RateLimiterRedis;
  private readonly blockedUntil = new Map<string, number>();

  constructor(
    redis: Redis,
    keyPrefix: string,
    readonly limit: number,
  ) {
    this.limiter = new RateLimiterRedis({
      storeClient: redis,
      keyPrefix,
      points: limit,
      duration: 60,
      rejectIfRedisNotReady: true,
      insuranceLimiter: new RateLimiterMemory({
        keyPrefix: `${keyPrefix}:memory`,
        points: limit,
        duration: 60,
      }),
    });
  }

  async consume(key: string): Promise<RateLimitResult> {
    try {
      const res = await this.limiter.consume(key, 1);
      return this.result(res, true);
    } catch (rejection) {
      if (!(rejection instanceof RateLimiterRes)) throw rejection;
      if (this.blockedUntil.size > 10_000) this.blockedUntil.clear(); // bounded memory under a flood
      this.blockedUntil.set(key, Date.now() + rejection.msBeforeNext);
      return this.result(rejection, false);
    }
  }

  /**
   * Whether this replica has seen the key go over its budget, without asking Redis: the hot path of
   * every authenticated request stays at one Redis call. A replica learns of a block from its own
   * `consume` answers, which reflect the budget shared in Redis.
   */
  isBlocked(key: string): RateLimitResult | null {
    const until = this.blockedUntil.get(key);
    if (until === undefined) return null;
    const ms = until - Date.now();
    if (ms <= 0) {
      this.blockedUntil.delete(key);
      return null;
    }
    return { limit: this.limit, remaining: 0, resetSeconds: Math.ceil(ms / 1000), allowed: false };
  }

  private result(res: RateLimiterRes, allowed: boolean): RateLimitResult {
    return {
      limit: this.limit,
      remaining: Math.max(0, res.remainingPoints),
      resetSeconds: Math.max(1, Math.ceil(res.msBeforeNext / 1000)),
      allowed,
    };
  }
}

export function rateLimitHeaders(result: RateLimitResult): Record<string, string> {
  return {
    'X-RateLimit-Limit': String(result.limit),
    'X-RateLimit-Remaining': String(result.remaining),
    'X-RateLimit-Reset': String(result.resetSeconds),
  };
}

export function tooManyRequests(result: RateLimitResult): HttpError {
  return new HttpError(
    429,
    'rate_limited',
    `Rate limit of ${result.limit} requests per minute exceeded. Retry after ${result.resetSeconds} s.`,
    undefined,
    {
      ...rateLimitHeaders(result),
      'Retry-After': String(result.resetSeconds),
    },
  );
}
