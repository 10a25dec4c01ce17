import { createHash, randomBytes } from 'node:crypto';
import type Redis from 'ioredis';
import { Environment, Role } from '@seller-api/contracts';
import { serviceUnavailable } from '@seller-api/service-kit';
import { z } from 'zod';

/**
 * Panel sessions live in Redis, so every gateway replica sees a login and a logout at once. The
 * cookie holds a random token; Redis is keyed by its SHA-256, so a read of Redis yields no usable
 * cookie. The record holds only who logged in: role, seller and status are read again on every
 * request, so a suspension or a role change applies at once. Each user also has an index of its
 * sessions' hashes (a sorted set scored by expiry), so a password change can end them all.
 */
const StoredSession = z.object({
  user_id: z.string(),
  environment: Environment,
  role: Role,
  csrf_token: z.string(),
  created_at: z.number(),
  expires_at: z.number(),
});
export type StoredSession = z.infer<typeof StoredSession>;

export interface Session extends StoredSession {
  token: string;
}

const randomToken = () => randomBytes(32).toString('base64url');
const tokenHash = (token: string) => createHash('sha256').update(token).digest('hex');
const sessionKey = (keyPrefix: string, hash: string) => `${keyPrefix}panel:session:${hash}`;
const userIndexKey = (keyPrefix: string, userId: string) => `${keyPrefix}panel:user-sessions:${userId}`;

/**
 * Ends every panel session of the user (after a password change): deletes the sessions its index
 * names, then those index entries. A session made meanwhile keeps its entry and stays valid, as a login
 * with the new password should. Returns how many sessions were still live. Redis errors are thrown.
 */
export async function revokeUserSessions(redis: Redis, keyPrefix: string, userId: string): Promise<number> {
  const index = userIndexKey(keyPrefix, userId);
  const hashes = await redis.zrange(index, '0', '-1');
  if (hashes.length === 0) return 0;
  const deleted = await redis.del(...hashes.map((h) => sessionKey(keyPrefix, h)));
  await redis.zrem(index, ...hashes);
  return deleted;
}

/** Without Redis there are no sessions: 503, not a 500 with a driver message. */
async function redisCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch {
    throw serviceUnavailable('Sessions are unavailable. Retry later.');
  }
}

export class SessionStore {
  constructor(
    private readonly redis: Redis,
    private readonly keyPrefix: string,
    private readonly ttlSeconds: number,
  ) {}

  private key(token: string): string {
    return sessionKey(this.keyPrefix, tokenHash(token));
  }

  /** A new session with a new token every login: no session id survives a login (fixation). */
  async create(userId: string, role: Role, environment: Environment): Promise<Session> {
    const now = Date.now();
    const token = randomToken();
    const stored: StoredSession = {
      user_id: userId,
      environment,
      role,
      csrf_token: randomToken(),
      created_at: now,
      expires_at: now + this.ttlSeconds * 1000,
    };
    const hash = tokenHash(token);
    const index = userIndexKey(this.keyPrefix, userId);
    await redisCall(async () => {
      const results = await this.redis
        .multi()
        .set(sessionKey(this.keyPrefix, hash), JSON.stringify(stored), 'EX', this.ttlSeconds)
        // The index outlives its newest session by nothing, and drops the expired ones as it goes.
        .zadd(index, stored.expires_at, hash)
        .zremrangebyscore(index, '-inf', now)
        .expire(index, this.ttlSeconds)
        .exec();
      if (!results || results.some(([err]) => err)) throw new Error('session not stored');
    });
    return { ...stored, token };
  }

  async find(token: string): Promise<Session | null> {
    // A cookie of another shape cannot name a session: no Redis round trip for it.
    if (!/^[A-Za-z0-9_-]{43}$/.test(token)) return null;
    const raw = await redisCall(() => this.redis.get(this.key(token)));
    if (!raw) return null;
    let json: unknown;
    try {
      json = JSON.parse(raw);
    } catch {
      return null;
    }
    const parsed = StoredSession.safeParse(json);
    if (!parsed.success || parsed.data.expires_at <= Date.now()) return null;
    return { ...parsed.data, token };
  }

  /** Changes what the session shows; its lifetime stays what the login gave it. */
  async setEnvironment(session: Session, environment: Environment): Promise<Session> {
    const { token, ...stored } = session;
    const next = { ...stored, environment };
    const ttl = Math.max(1, Math.ceil((stored.expires_at - Date.now()) / 1000));
    await redisCall(() => this.redis.set(this.key(token), JSON.stringify(next), 'EX', ttl));
    return { ...next, token };
  }

  async destroy(token: string): Promise<void> {
    await redisCall(() => this.redis.del(this.key(token)));
  }
}
