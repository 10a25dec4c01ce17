import type { Pool } from 'pg';
import type { ApiKeySummary, Environment, Role } from '@seller-api/contracts';

/** A panel user with what the signed identity and the authorization checks need. */
export interface PanelUser {
  id: string;
  email: string;
  role: Role;
  seller_id: string | null;
  seller_name: string | null;
  seller_status: 'ACTIVE' | 'SUSPENDED' | null;
}

const SELECT_USER = `select u.id, u.email, u.role, u.seller_id, s.name as seller_name, s.status as seller_status,
         u.password_hash
    from gateway.users u
    left join gateway.sellers s on s.id = u.seller_id`;

export async function findUserByEmail(
  pool: Pool,
  email: string,
): Promise<(PanelUser & { password_hash: string | null }) | null> {
  const { rows } = await pool.query<PanelUser & { password_hash: string | null }>(
    `${SELECT_USER} where lower(u.email) = lower($1)`,
    [email.trim()],
  );
  return rows[0] ?? null;
}

export async function findUserById(pool: Pool, id: string): Promise<PanelUser | null> {
  const { rows } = await pool.query<PanelUser & { password_hash: string | null }>(
    `${SELECT_USER} where u.id = $1`,
    [id],
  );
  const row = rows[0];
  if (!row) return null;
  const { password_hash: _hash, ...user } = row;
  return user;
}

interface KeyRow {
  environment: Environment;
  label: string | null;
  prefix: string;
  last4: string;
  created_at: Date;
}

/** The user's active keys, at most one per environment (the database guarantees it). */
export async function activeKeys(pool: Pool, userId: string): Promise<ApiKeySummary[]> {
  const { rows } = await pool.query<KeyRow>(
    `select environment, label, prefix, last4, created_at from gateway.api_keys
      where user_id = $1 and revoked_at is null order by environment`,
    [userId],
  );
  return rows.map((r) => ({
    environment: r.environment,
    label: r.label,
    prefix: r.prefix,
    last4: r.last4,
    created_at: r.created_at.toISOString(),
  }));
}
