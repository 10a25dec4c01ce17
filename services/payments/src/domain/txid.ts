import { randomBytes } from 'node:crypto';

/** The BR Code static txid limit (field 62/05): up to 25 letters and digits. */
export const TXID_LENGTH = 25;
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
// Largest multiple of 62 below 256: bytes at or above it are dropped so every character is equally likely.
const LIMIT = 256 - (256 % ALPHABET.length);

/** A txid of `length` characters (25 by default) from [A-Za-z0-9], from the CSPRNG without modulo bias. */
export function newTxid(length = TXID_LENGTH): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(32)) {
      if (byte >= LIMIT) continue;
      out += ALPHABET[byte % ALPHABET.length];
      if (out.length === length) break;
    }
  }
  return out;
}
