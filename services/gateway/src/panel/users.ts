import type { ApiKeySummary, Environment, Role } from '@seller-api/contracts';
import type { Sql } from '@seller-api/service-kit';

/** A panel user with what the signed identity and the authorization checks need. */
export interface PanelUser {
  id: string;
  email: string;
  role: Role;
  seller_id: string | null;
  seller_name: string | null;
  seller_status: 'ACTIVE' | 'SUSPENDED' | null;
}

// Unnamed, planned at every run, like the key lookup (domain/api-keys.ts): a plan kept from a new
// deployment's nearly empty tables would read all of them once they have grown.
const PLANNED_EACH_RUN = { planEachRun: true };

const SELECT_USER = `select u.id, u.email, u.role, u.seller_id, s.name as seller_name, s.status as seller_status,
         u.password_hash
    from gateway.users u
    left join gateway.sellers s on s.id = u.seller_id`;

export async function findUserByEmail(
  sql: Sql,
  email: string,
): Promise<(PanelUser & { password_hash: string | null }) | null> {
  const rows = await sql.query<PanelUser & { password_hash: string | null }>(
    `${SELECT_USER} where lower(u.email) = lower($1)`,
    [email.trim()],
    PLANNED_EACH_RUN,
  );
  return rows[0] ?? null;
}

export async function findUserById(sql: Sql, id: string): Promise<PanelUser | null> {
  const rows = await sql.query<PanelUser & { password_hash: string | null }>(
    `${SELECT_USER} where u.id = $1`,
    [id],
    PLANNED_EACH_RUN,
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
  /** As PostgreSQL writes a timestamptz: the ORM's connections leave timestamps as text. */
  created_at: string;
}

/** The user's active keys, at most one per environment (the database guarantees it). */
export async function activeKeys(sql: Sql, userId: string): Promise<ApiKeySummary[]> {
  const rows = await sql.query<KeyRow>(
    `select environment, label, prefix, last4, created_at from gateway.api_keys
      where user_id = $1 and revoked_at is null order by environment`,
    [userId],
    PLANNED_EACH_RUN,
  );
  return rows.map((r) => ({
    environment: r.environment,
    label: r.label,
    prefix: r.prefix,
    last4: r.last4,
    created_at: new Date(r.created_at).toISOString(),
  }));
}
