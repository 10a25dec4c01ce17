import { randomBytes, randomUUID, scrypt, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Role } from '@seller-api/contracts';
import { SellerSchema, UserSchema, type User } from '../db/entities';
import type { KeyVersions } from './key-holders';

const scryptAsync = promisify(scrypt) as (
  password: string,
  salt: Buffer,
  keylen: number,
  options: object,
) => Promise<Buffer>;
// scrypt is memory-hard: N=2^15, r=8 needs 32 MiB per hash.
const SCRYPT = { N: 32768, r: 8, p: 1, maxmem: 64 * 1024 * 1024 };

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scryptAsync(password, salt, 32, SCRYPT);
  return `scrypt$${SCRYPT.N}$${SCRYPT.r}$${SCRYPT.p}$${salt.toString('base64')}$${hash.toString('base64')}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64');
  const actual = await scryptAsync(password, Buffer.from(salt, 'base64'), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: SCRYPT.maxmem,
  });
  return timingSafeEqual(actual, expected);
}

export interface EnsureUserInput {
  email: string;
  /** A new user's role (seller when not given); given for an existing user, it must be theirs. */
  role?: Role;
  /** A new seller's name (the e-mail when not given); given for an existing user, it must be theirs. */
  sellerName?: string;
  password?: string;
}

/** An existing user is not what the command asked for; nothing was changed. */
export class UserConflictError extends Error {
  override name = 'UserConflictError';
}

/**
 * Finds the user by e-mail or creates it; a new seller user gets its own seller account, named after
 * the e-mail unless a name is given. A password given here replaces an existing user's. An existing
 * user's role and seller name are never changed here: asking for others is a UserConflictError, before
 * anything is written (a role change would need another seller account; a typo must not grant /ops/).
 */
export async function ensureUser(
  em: EntityManager,
  input: EnsureUserInput,
): Promise<{ user: User; created: boolean }> {
  const email = input.email.trim().toLowerCase();
  const role = input.role ?? 'seller';
  const sellerName = input.sellerName?.trim();
  if (sellerName !== undefined && role !== 'seller') {
    throw new UserConflictError('a seller name is for seller users only; an operator has no seller');
  }
  const passwordHash = input.password ? await hashPassword(input.password) : undefined;
  return em.transactional(async (tx) => {
    // Serialise concurrent creations of the same e-mail.
    await tx.execute('select pg_advisory_xact_lock(hashtext(?))', [`user:${email}`]);
    const existing = await tx.findOne(UserSchema, { email });
    if (existing) {
      if (input.role && input.role !== existing.role) {
        throw new UserConflictError(
          `${email} already exists with the role ${existing.role}, which is not changed here (nothing was changed)`,
        );
      }
      if (sellerName !== undefined) {
        const seller = existing.sellerId ? await tx.findOne(SellerSchema, { id: existing.sellerId }) : null;
        if (!seller) {
          throw new UserConflictError(
            `${email} already exists with the role ${existing.role}, without a seller to name (nothing was changed)`,
          );
        }
        if (seller.name !== sellerName) {
          throw new UserConflictError(
            `${email} already exists with the seller name "${seller.name}", which is not changed here (nothing was changed); ` +
              'leave --seller-name out to keep it, or rename it with `users update --email ... --seller-name ...`',
          );
        }
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

/** A key change (KeyVersions): the replicas' cached key holders carry the seller's status. */
export async function setSellerStatus(
  em: EntityManager,
  versions: KeyVersions,
  sellerId: string,
  status: 'ACTIVE' | 'SUSPENDED',
): Promise<void> {
  await versions.change(() =>
    em.execute('update gateway.sellers set status = ? where id = ?', [status, sellerId]),
  );
}

/** The user is not a seller user (an operator, or no such e-mail): nothing was renamed. */
export class NoSellerError extends UserConflictError {}

/**
 * Renames the seller of a seller user. Orders, charges and withdrawals keep the seller's name as it was
 * when they were made (a receipt does not change), so the new name shows in those made from now on and
 * in their webhooks (docs/orders.md, "The seller's name"). A key change (KeyVersions): every gateway
 * replica's cached key holder carries the name it forwards to the services.
 */
export async function renameSeller(
  em: EntityManager,
  versions: KeyVersions,
  rawEmail: string,
  name: string,
): Promise<{ user: User; previous: string }> {
  const email = rawEmail.trim().toLowerCase();
  const user = await em.findOne(UserSchema, { email });
  if (!user) throw new NoSellerError(`no user has the e-mail ${email} (nothing was changed)`);
  const seller = user.sellerId ? await em.findOne(SellerSchema, { id: user.sellerId }) : null;
  if (!seller)
    throw new NoSellerError(
      `${email} is a ${user.role} user, without a seller to name (nothing was changed)`,
    );
  const previous = seller.name;
  await versions.change(() =>
    em.execute('update gateway.sellers set name = ? where id = ?', [name.trim(), seller.id]),
  );
  return { user, previous };
}
