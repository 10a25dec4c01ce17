import type { Environment } from '@seller-api/contracts';
import { guardedLookup, type Resolver } from '@seller-api/service-kit';
import { Pool } from 'undici';

export interface DestinationPoolsOptions {
  /** A destination's attempts in flight at most (its slots): its pool's connections. */
  connections: number;
  connectTimeoutMs: number;
  allowPrivateTargets: boolean;
  resolve?: Resolver;
  /** Pools kept at once; past this many, the least recently used is closed (its requests in flight finish). */
  maxPools?: number;
}

const MAX_POOLS = 10_000;
const KEEP_ALIVE_MS = 10_000;

/**
 * One undici connection pool per destination URL and environment, with as many connections as the
 * destination has slots. Per origin (an undici Agent) the budget would not match: without a cap, a
 * slot freed in the callback of an answer went to a new connection while the one that carried the
 * answer was still busy, and each destination held twice as many sockets as slots (more work for
 * both sides of each); with a cap, a slow URL would hold every socket of its host and block the
 * other URLs on it.
 */
export class DestinationPools {
  private readonly pools = new Map<string, Pool>();
  /** Pools being closed: their requests in flight finishing. */
  private readonly closed = new Set<Promise<void>>();

  constructor(private readonly options: DestinationPoolsOptions) {}

  /** The pool of `url` (whose origin is `origin`) in `environment`. */
  for(environment: Environment, url: string, origin: string): Pool {
    const key = `${environment} ${url}`;
    let pool = this.pools.get(key);
    if (pool) {
      // Kept in the order of their last use: the first is the least recently used.
      this.pools.delete(key);
      this.pools.set(key, pool);
      return pool;
    }
    if (this.pools.size >= (this.options.maxPools ?? MAX_POOLS)) {
      const [oldestKey, oldest] = this.pools.entries().next().value as [string, Pool];
      this.pools.delete(oldestKey);
      this.closing(oldest);
    }
    pool = new Pool(origin, {
      connections: this.options.connections,
      connect: {
        timeout: this.options.connectTimeoutMs,
        // The address checked is the address connected to: no window for DNS rebinding.
        lookup: guardedLookup({
          environment,
          allowPrivate: this.options.allowPrivateTargets,
          resolve: this.options.resolve,
        }),
      },
      keepAliveTimeout: KEEP_ALIVE_MS,
    });
    this.pools.set(key, pool);
    return pool;
  }

  /** Closes every pool once its requests in flight are done. */
  async close(): Promise<void> {
    for (const pool of this.pools.values()) this.closing(pool);
    this.pools.clear();
    await Promise.all([...this.closed]);
  }

  private closing(pool: Pool): void {
    const closed = pool.close().catch(() => undefined);
    this.closed.add(closed);
    void closed.finally(() => this.closed.delete(closed));
  }
}
