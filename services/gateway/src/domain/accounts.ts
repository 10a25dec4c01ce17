import { randomBytes, randomUUID, scrypt, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Role } from '@seller-api/contracts';
import { SellerSchema, UserSchema, type User } from '../db/entities';

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
  role: Role;
  sellerName?: string;
  password?: string;
}

/**
 * Finds the user by e-mail or creates it; a new seller user gets its own seller account, named after
 * the e-mail unless a name is given. An existing user keeps its role; a password given here replaces
 * the old one.
 */
export async function ensureUser(
  em: EntityManager,
  input: EnsureUserInput,
): Promise<{ user: User; created: boolean }> {
  const email = input.email.trim().toLowerCase();
  const passwordHash = input.password ? await hashPassword(input.password) : undefined;
  return em.transactional(async (tx) => {
    // Serialise concurrent creations of the same e-mail.
    await tx.execute('select pg_advisory_xact_lock(hashtext(?))', [`user:${email}`]);
    const existing = await tx.findOne(UserSchema, { email });
    if (existing) {
      if (passwordHash) existing.passwordHash = passwordHash;
      return { user: existing, created: false };
    }
    let sellerId: string | null = null;
    if (input.role === 'seller') {
      const seller = tx.create(SellerSchema, {
        id: randomUUID(),
        name: input.sellerName?.trim() || email,
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
      role: input.role,
      sellerId,
      passwordHash: passwordHash ?? null,
      createdAt: new Date(),
    });
    tx.persist(user);
    return { user, created: true };
  });
}

export async function setSellerStatus(
  em: EntityManager,
  sellerId: string,
  status: 'ACTIVE' | 'SUSPENDED',
): Promise<void> {
  await em.execute('update gateway.sellers set status = ? where id = ?', [status, sellerId]);
}
