import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { API_KEY_PATTERN, type Environment, type Identity, type Role } from '@seller-api/contracts';
import type { Sql } from '@seller-api/service-kit';
import { ApiKeySchema, type ApiKey } from '../db/entities';
import type { KeyVersions } from './key-holders';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const TOKEN_LENGTH = 40;

/** A token of 40 characters from [A-Za-z0-9], drawn from the CSPRNG without modulo bias. */
export function generateToken(length = TOKEN_LENGTH): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      // 248 = 4 * 62: bytes above it would favour the first characters.
      if (byte < 248 && out.length < length) out += ALPHABET[byte % 62];
    }
  }
  return out;
}

export function generateApiKey(environment: Environment): string {
  return `mk_${environment}_${generateToken()}`;
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export function environmentOfKey(key: string): Environment | null {
  if (!API_KEY_PATTERN.test(key)) return null;
  return key.startsWith('mk_live_') ? 'live' : 'test';
}

export interface CreatedKey {
  key: string;
  record: ApiKey;
}

/**
 * Issues a key and revokes the user's previous key of that environment in the same transaction. The
 * user row is locked first so two concurrent requests cannot both leave an active key. It runs as a
 * key change, so every gateway replica drops the revoked key from its cache (KeyVersions).
 */
export async function createApiKey(
  em: EntityManager,
  versions: KeyVersions,
  userId: string,
  environment: Environment,
  label: string | null,
): Promise<CreatedKey> {
  return versions.change(() =>
    em.transactional(async (tx) => {
      await tx.execute('select id from gateway.users where id = ? for update', [userId]);
      await tx.execute(
        'update gateway.api_keys set revoked_at = now() where user_id = ? and environment = ? and revoked_at is null',
        [userId, environment],
      );
      const key = generateApiKey(environment);
      const token = key.slice(`mk_${environment}_`.length);
      const record = tx.create(ApiKeySchema, {
        id: randomUUID(),
        userId,
        environment,
        keyHash: hashApiKey(key),
        prefix: `mk_${environment}_${token.slice(0, 4)}`,
        last4: token.slice(-4),
        label,
        createdAt: new Date(),
        revokedAt: null,
      });
      tx.persist(record);
      return { key, record };
    }),
  );
}

export interface KeyHolder {
  identity: Identity;
  sellerStatus: 'ACTIVE' | 'SUSPENDED' | null;
}

interface KeyRow {
  user_id: string;
  seller_id: string | null;
  environment: Environment;
  role: Role;
  seller_status: 'ACTIVE' | 'SUSPENDED' | null;
  seller_name: string | null;
}

/** The one query of the hot path, on a cache miss. */
const FIND_KEY_HOLDER = `select u.id as user_id, u.seller_id, k.environment, u.role, s.status as seller_status, s.name as seller_name
     from gateway.api_keys k
     join gateway.users u on u.id = k.user_id
     left join gateway.sellers s on s.id = u.seller_id
    where k.key_hash = $1 and k.revoked_at is null`;

/**
 * Who holds the key of this hash, from PostgreSQL (KeyHolders decides when a cached answer will do).
 * The lookup compares hashes, never the plain key: the time it takes says nothing about it. It goes
 * through the kit's `Sql` (the ORM adds nothing here but cost), unnamed: planned at every run. A
 * prepared statement kept the plan made in its first runs for the connection's life, and on a new
 * deployment's empty tables that plan read every active key instead of the key hash's unique index.
 */
export async function lookUpKeyHolder(
  sql: Sql,
  keyHash: string,
  environment: Environment,
): Promise<KeyHolder | null> {
  const [row] = await sql.query<KeyRow>(FIND_KEY_HOLDER, [keyHash], { planEachRun: true });
  if (!row || row.environment !== environment) return null;
  return {
    identity: {
      user_id: row.user_id,
      seller_id: row.seller_id,
      environment: row.environment,
      role: row.role,
      seller_name: row.seller_name,
    },
    sellerStatus: row.seller_status,
  };
}
