import { createHash, randomBytes } from 'node:crypto';
import { API_KEY_PATTERN, type Environment, type Identity } from '@seller-api/contracts';

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

export interface KeyHolder {
  identity: Identity;
  sellerStatus: 'ACTIVE' | 'SUSPENDED' | null;
}
