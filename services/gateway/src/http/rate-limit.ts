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
      if (rejection instanceof RateLimiterRes) return this.result(rejection, false);
      throw rejection;
    }
  }

  /** Whether the key is over its budget, without spending a point. */
  async isBlocked(key: string): Promise<RateLimitResult | null> {
    const res = await this.limiter.get(key).catch(() => null);
    if (!res || res.consumedPoints <= this.limit) return null;
    return this.result(res, false);
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
