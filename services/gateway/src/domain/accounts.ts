import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import type { Role } from '@seller-api/contracts';
import type { Seller, User } from '../db/entities';

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

/** The e-mail, role and seller name ensureUser works with; an operator with a seller name is refused. */
export function newUserInput(input: EnsureUserInput): {
  email: string;
  role: Role;
  sellerName: string | undefined;
} {
  const email = input.email.trim().toLowerCase();
  const role = input.role ?? 'seller';
  const sellerName = input.sellerName?.trim();
  if (sellerName !== undefined && role !== 'seller') {
    throw new UserConflictError('a seller name is for seller users only; an operator has no seller');
  }
  return { email, role, sellerName };
}

/** A role asked for an existing user that is not its own: refused, never changed (ensureUser). */
export function existingRoleConflict(
  email: string,
  existing: User,
  role: Role | undefined,
): UserConflictError | null {
  if (!role || role === existing.role) return null;
  return new UserConflictError(
    `${email} already exists with the role ${existing.role}, which is not changed here (nothing was changed)`,
  );
}

/** A seller name asked for an existing user that is not its seller's: refused, never changed (ensureUser). */
export function existingSellerNameConflict(
  email: string,
  existing: User,
  seller: Seller | null,
  sellerName: string,
): UserConflictError | null {
  if (!seller) {
    return new UserConflictError(
      `${email} already exists with the role ${existing.role}, without a seller to name (nothing was changed)`,
    );
  }
  if (seller.name === sellerName) return null;
  return new UserConflictError(
    `${email} already exists with the seller name "${seller.name}", which is not changed here (nothing was changed); ` +
      'leave --seller-name out to keep it, or rename it with `users update --email ... --seller-name ...`',
  );
}

/** The user is not a seller user (an operator, or no such e-mail): nothing was renamed. */
export class NoSellerError extends UserConflictError {}
