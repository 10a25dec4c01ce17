import { randomUUID } from 'node:crypto';
import type Redis from 'ioredis';
import type { Environment } from '@seller-api/contracts';
import type { Sql } from '@seller-api/service-kit';
import type { KeyHolder } from '../domain/api-keys';
import { lookUpKeyHolder } from './api-keys';

/**
 * The key version: how every gateway replica learns, on the very next request, that a key holder
 * changed (a key created, which revokes the user's previous one; a seller suspended).
 *
 * Two Redis keys: a counter, and a hash of the changes in progress. `change` bumps the counter and
 * records itself before it runs, and bumps the counter again and removes itself once it has
 * committed. `read` answers the counter, or null while any change is in progress (or when Redis
 * cannot be read): a holder cached under a version is good only while the version is still the
 * same, and nothing is cached or used under null. So a holder read before a change is never used
 * after it, and a holder read during one is never cached.
 *
 * If the revoker loses Redis after its change committed, its entry in the hash stays until the hash
 * expires (CHANGE_WINDOW_MS after the last change began): until then every replica reads PostgreSQL,
 * and the counter, bumped before the change, already invalidates what was cached before it.
 */
export class KeyVersions {
  private readonly counterKey: string;
  private readonly changesKey: string;

  constructor(
    private readonly redis: Redis,
    keyPrefix: string,
  ) {
    this.counterKey = `${keyPrefix}keys:version`;
    this.changesKey = `${keyPrefix}keys:changing`;
    if (!('keyVersion' in redis)) {
      // One atomic read of both keys (a script is one command, so it pipelines with the rate limit).
      redis.defineCommand('keyVersion', {
        numberOfKeys: 2,
        lua: "if redis.call('EXISTS', KEYS[2]) == 1 then return false end return redis.call('GET', KEYS[1]) or '0'",
      });
    }
  }

  /** The current version, or null: do not use or fill the cache. Never rejects. */
  read(): Promise<string | null> {
    const redis = this.redis as Redis & {
      keyVersion(counter: string, changes: string): Promise<string | null>;
    };
    return redis.keyVersion(this.counterKey, this.changesKey).catch(() => null);
  }

  /**
   * Runs a change of key holders (its whole transaction). Refuses to start it when Redis cannot be
   * reached: the replicas could not be told, and a revoked key could go on working from their caches.
   */
  async change<T>(apply: () => Promise<T>): Promise<T> {
    const id = randomUUID();
    try {
      await this.redis
        .multi()
        .incr(this.counterKey)
        .hset(this.changesKey, id, Date.now())
        .pexpire(this.changesKey, CHANGE_WINDOW_MS)
        .exec();
    } catch (err) {
      throw new KeyChangeUnavailableError(err);
    }
    try {
      return await apply();
    } finally {
      await this.redis
        .multi()
        .incr(this.counterKey)
        .hdel(this.changesKey, id)
        .exec()
        .catch(() => undefined); // see the class comment: the entry expires, and caching stays off until then
    }
  }
}

/** How long a change in progress keeps the replicas off their caches if its end is never recorded. */
export const CHANGE_WINDOW_MS = 60_000;

/** Redis could not be reached: nothing was changed. */
export class KeyChangeUnavailableError extends Error {
  override name = 'KeyChangeUnavailableError';
  constructor(cause: unknown) {
    super(
      `Redis is unreachable (${(cause as Error)?.message ?? cause}); nothing was changed, because the gateway replicas could not learn of the change`,
    );
  }
}

interface Cached {
  holder: KeyHolder;
  version: string;
  loadedAt: number;
}

const MAX_ENTRIES = 10_000;

/**
 * Who holds a key: from this replica's cache when the key version allows it, from PostgreSQL
 * otherwise. Only keys that exist are cached; the cache is bounded in size and in age (`maxAgeMs`,
 * 0 turns it off) as a backstop.
 */
export class KeyHolders {
  private readonly cache = new Map<string, Cached>();

  constructor(
    private readonly sql: Sql,
    private readonly versions: KeyVersions,
    private readonly maxAgeMs: number,
  ) {}

  /**
   * The holder of the key of this hash and environment (domain/api-keys.ts `environmentOfKey`), or null for an
   * unknown or revoked key. The version is asked of Redis synchronously at the call, so a rate-limit
   * call made in the same tick shares its round trip (the client pipelines automatically).
   */
  async find(hash: string, environment: Environment): Promise<KeyHolder | null> {
    if (this.maxAgeMs === 0) return lookUpKeyHolder(this.sql, hash, environment);
    // Read before PostgreSQL, never alongside it: a holder read from PostgreSQL is then at least as
    // new as the version it is cached under.
    const version = await this.versions.read();
    const cached = this.cache.get(hash);
    if (version !== null && cached && cached.version === version) {
      if (Date.now() - cached.loadedAt < this.maxAgeMs) return cached.holder;
    }
    const holder = await lookUpKeyHolder(this.sql, hash, environment);
    this.cache.delete(hash);
    if (holder && version !== null) {
      // A Map iterates in insertion order: the first entry is the oldest.
      if (this.cache.size >= MAX_ENTRIES) this.cache.delete(this.cache.keys().next().value as string);
      this.cache.set(hash, { holder, version, loadedAt: Date.now() });
    }
    return holder;
  }
}
