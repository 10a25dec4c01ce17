import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { ApiKeySummary, Environment, Role } from '@seller-api/contracts';
import { sqlInTransaction, type Sql } from '@seller-api/service-kit';
import { generateApiKey, hashApiKey, type KeyHolder } from '../domain/api-keys';
import { ApiKeySchema, type ApiKey } from './entities';
import type { KeyVersions } from './key-holders';

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
  sql: Sql,
  em: EntityManager,
  versions: KeyVersions,
  userId: string,
  environment: Environment,
  label: string | null,
): Promise<CreatedKey> {
  return versions.change(() =>
    em.transactional(async (tx) => {
      const q = sqlInTransaction(sql, tx);
      await q.query('select id from gateway.users where id = $1 for update', [userId]);
      await q.query(
        'update gateway.api_keys set revoked_at = now() where user_id = $1 and environment = $2 and revoked_at is null',
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

interface ActiveKeyRow {
  environment: Environment;
  label: string | null;
  prefix: string;
  last4: string;
  /** As PostgreSQL writes a timestamptz: the ORM's connections leave timestamps as text. */
  created_at: string;
}

/** The user's active keys, at most one per environment (the database guarantees it). */
export async function activeKeys(sql: Sql, userId: string): Promise<ApiKeySummary[]> {
  const rows = await sql.query<ActiveKeyRow>(
    `select environment, label, prefix, last4, created_at from gateway.api_keys
      where user_id = $1 and revoked_at is null order by environment`,
    [userId],
    // Unnamed, planned at every run, like the key holder's lookup above.
    { planEachRun: true },
  );
  return rows.map((r) => ({
    environment: r.environment,
    label: r.label,
    prefix: r.prefix,
    last4: r.last4,
    created_at: new Date(r.created_at).toISOString(),
  }));
}
