import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Role } from '@seller-api/contracts';
import { sqlInTransaction, type Sql } from '@seller-api/service-kit';
import {
  existingRoleConflict,
  existingSellerNameConflict,
  hashPassword,
  newUserInput,
  type EnsureUserInput,
} from '../domain/accounts';
import { SellerSchema, UserSchema, type User } from './entities';

/** A panel user with what the signed identity and the authorization checks need. */
export interface PanelUser {
  id: string;
  email: string;
  role: Role;
  seller_id: string | null;
  seller_name: string | null;
  seller_status: 'ACTIVE' | 'SUSPENDED' | null;
}

// Unnamed, planned at every run, like the key lookup (db/api-keys.ts): a plan kept from a new
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

/**
 * Finds the user by e-mail or creates it; a new seller user gets its own seller account, named after
 * the e-mail unless a name is given. A password given here replaces an existing user's. An existing
 * user's role and seller name are never changed here: asking for others is a UserConflictError, before
 * anything is written (a role change would need another seller account; a typo must not grant /ops/).
 */
export async function ensureUser(
  sql: Sql,
  em: EntityManager,
  input: EnsureUserInput,
): Promise<{ user: User; created: boolean }> {
  const { email, role, sellerName } = newUserInput(input);
  const passwordHash = input.password ? await hashPassword(input.password) : undefined;
  return em.transactional(async (tx) => {
    // Serialise concurrent creations of the same e-mail.
    await sqlInTransaction(sql, tx).query('select pg_advisory_xact_lock(hashtext($1))', [`user:${email}`]);
    const existing = await tx.findOne(UserSchema, { email });
    if (existing) {
      const roleConflict = existingRoleConflict(email, existing, input.role);
      if (roleConflict) throw roleConflict;
      if (sellerName !== undefined) {
        const seller = existing.sellerId ? await tx.findOne(SellerSchema, { id: existing.sellerId }) : null;
        const nameConflict = existingSellerNameConflict(email, existing, seller, sellerName);
        if (nameConflict) throw nameConflict;
      }
      if (passwordHash) existing.passwordHash = passwordHash;
      return { user: existing, created: false };
    }
    let sellerId: string | null = null;
    if (role === 'seller') {
      const seller = tx.create(SellerSchema, {
        id: randomUUID(),
        name: sellerName || email,
        status: 'ACTIVE',
        createdAt: new Date(),
      });
      // Flushed first: the user row references it and the two entities declare no relation.
      await tx.persist(seller).flush();
      sellerId = seller.id;
    }
    const user = tx.create(UserSchema, {
      id: randomUUID(),
      email,
      role,
      sellerId,
      passwordHash: passwordHash ?? null,
      createdAt: new Date(),
    });
    tx.persist(user);
    return { user, created: true };
  });
}
