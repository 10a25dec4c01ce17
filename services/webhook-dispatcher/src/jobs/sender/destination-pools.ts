import type { Environment } from '@seller-api/contracts';
import { guardedLookup, type Resolver } from '@seller-api/service-kit';
import { Pool } from 'undici';

export interface DestinationPoolsOptions {
  /** A destination's attempts in flight at most (its slots): its pool's connections. */
  connections: number;
  connectTimeoutMs: number;
  allowPrivateTargets: boolean;
  /** A locally run system: `test` deliveries may reach loopback (localTargets in service-kit). */
  allowLoopbackTargets?: boolean;
  resolve?: Resolver;
  /** Pools kept at once; past this many, the least recently used is closed (its requests in flight finish). */
  maxPools?: number;
}

const MAX_POOLS = 10_000;
const KEEP_ALIVE_MS = 10_000;

/**
 * One undici connection pool per destination (a scheme, host and port: domain/destination.ts) and
 * environment, with as many connections as the destination has slots. Without a cap (an undici
 * Agent), a slot freed in the callback of an answer went to a new connection while the one that
 * carried the answer was still busy, and each destination held twice as many sockets as slots (more
 * work for both sides of each). The slots are the host's, so its URLs share its sockets: a slow URL
 * slows the other URLs of its host, by design (docs/webhooks.md, "Concurrency per host").
 */
/** A destination's pool, and when it was last used (DestinationPools.uses at the time). */
interface PoolEntry {
  pool: Pool;
  lastUse: number;
}

export class DestinationPools {
  /** Per environment, per destination. */
  private readonly pools: Record<Environment, Map<string, PoolEntry>> = {
    test: new Map(),
    live: new Map(),
  };
  private uses = 0;
  /** Pools being closed: their requests in flight finishing. */
  private readonly closed = new Set<Promise<void>>();

  constructor(private readonly options: DestinationPoolsOptions) {}

  /**
   * The pool of `destination` (whose origin is `origin`) in `environment`. Called once per attempt, so a use
   * only stamps a counter on the entry (a Map kept in order of use cost a delete and an insert each
   * time); the least recently used are looked for when the pools are at their limit.
   */
  for(environment: Environment, destination: string, origin: string): Pool {
    const pools = this.pools[environment];
    this.uses += 1;
    const entry = pools.get(destination);
    if (entry) {
      entry.lastUse = this.uses;
      return entry.pool;
    }
    const maxPools = this.options.maxPools ?? MAX_POOLS;
    if (this.pools.test.size + this.pools.live.size >= maxPools) {
      // An eighth at once: with destinations coming and going, a scan of every pool per new one
      // would cost more than the attempt.
      this.closeLeastRecentlyUsed(Math.max(1, Math.floor(maxPools / 8)));
    }
    const pool = new Pool(origin, {
      connections: this.options.connections,
      connect: {
        timeout: this.options.connectTimeoutMs,
        // The address checked is the address connected to: no window for DNS rebinding.
        lookup: guardedLookup({
          environment,
          allowPrivate: this.options.allowPrivateTargets,
          allowLoopback: this.options.allowLoopbackTargets,
          resolve: this.options.resolve,
        }),
      },
      keepAliveTimeout: KEEP_ALIVE_MS,
      // HTTP/1.1 as with undici 7: undici 8 speaks HTTP/2 where a TLS receiver offers it, and then
      // `connections` would no longer bound what one destination is sent at once.
      allowH2: false,
    });
    pools.set(destination, { pool, lastUse: this.uses });
    return pool;
  }

  /** Closes the `count` pools, of either environment, used least recently. */
  private closeLeastRecentlyUsed(count: number): void {
    const all: Array<{ pools: Map<string, PoolEntry>; url: string; lastUse: number }> = [];
    for (const pools of Object.values(this.pools)) {
      for (const [url, { lastUse }] of pools) all.push({ pools, url, lastUse });
    }
    all.sort((a, b) => a.lastUse - b.lastUse);
    for (const { pools, url } of all.slice(0, count)) {
      const entry = pools.get(url);
      pools.delete(url);
      if (entry) this.closing(entry.pool);
    }
  }

  /** Closes every pool once its requests in flight are done. */
  async close(): Promise<void> {
    for (const pools of Object.values(this.pools)) {
      for (const { pool } of pools.values()) this.closing(pool);
      pools.clear();
    }
    await Promise.all([...this.closed]);
  }

  private closing(pool: Pool): void {
    const closed = pool.close().catch(() => undefined);
    this.closed.add(closed);
    void closed.finally(() => this.closed.delete(closed));
  }
}
