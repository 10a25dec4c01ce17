import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * Webhook signing secrets at rest (docs/webhooks.md, "Secrets at rest"): AES-256-GCM under
 * WEBHOOK_SECRETS_KEY, a random 96-bit nonce per sealing, and the row's webhook id as additional data
 * (a sealed secret copied onto another webhook does not open there).
 *
 * A sealed secret is `v1:<key id>:<base64url(nonce || ciphertext || tag)>`: the version names this
 * format, the key id (8 hex digits of a SHA-256 of the key, which says nothing of the key) which key
 * sealed it, so a box holding the current and the previous key (WEBHOOK_SECRETS_KEY_PREVIOUS) opens
 * both and tells which secrets are stale (sealed with the previous key: sealed again by
 * jobs/seal-secrets.ts).
 */

const VERSION = 'v1';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
/** A clear secret (docs/webhooks.md): rows written before secrets were sealed. */
const CLEAR_PREFIX = 'whsec_';

/** The id a sealed secret names its key by. */
export function keyId(key: Buffer): string {
  return createHash('sha256')
    .update('seller-api webhook secrets key id\0')
    .update(key)
    .digest('hex')
    .slice(0, 8);
}

/** A key of 32 bytes written as 64 hex digits or in base64 (standard or url-safe); null otherwise. */
export function parseSecretsKey(text: string): Buffer | null {
  const value = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(value)) return Buffer.from(value, 'hex');
  if (!/^[A-Za-z0-9+/_-]{43}=?$/.test(value)) return null;
  const key = Buffer.from(value, 'base64');
  return key.length === 32 ? key : null;
}

export class SecretOpenError extends Error {
  override readonly name = 'SecretOpenError';
}

export class SecretBox {
  readonly currentKeyId: string;
  private readonly keys = new Map<string, Buffer>();

  /** `current` seals; `previous`, during a key rotation, still opens. */
  constructor(current: Buffer, previous?: Buffer | null) {
    this.currentKeyId = keyId(current);
    if (previous) this.keys.set(keyId(previous), previous);
    this.keys.set(this.currentKeyId, current);
  }

  /** What every secret sealed with the current key starts with. */
  get currentPrefix(): string {
    return `${VERSION}:${this.currentKeyId}:`;
  }

  seal(secret: string, context: string): string {
    const key = this.keys.get(this.currentKeyId) as Buffer;
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', key, nonce);
    cipher.setAAD(Buffer.from(context, 'utf8'));
    const sealed = Buffer.concat([nonce, cipher.update(secret, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `${this.currentPrefix}${sealed.toString('base64url')}`;
  }

  /** Whether `stored` is a sealed secret (not a clear one of before). */
  static isSealed(stored: string): boolean {
    return stored.startsWith(`${VERSION}:`);
  }

  /** Whether `stored` is sealed with the current key. */
  isCurrent(stored: string): boolean {
    return stored.startsWith(this.currentPrefix);
  }

  /**
   * The secret `stored` holds: sealed (with either key) and opened, or a clear one of before as it is.
   * Throws SecretOpenError for a key this box does not hold or a sealed text that fails its tag.
   */
  open(stored: string, context: string): string {
    if (stored.startsWith(CLEAR_PREFIX)) return stored;
    const [version, id, data] = stored.split(':');
    if (version !== VERSION || id === undefined || data === undefined) {
      throw new SecretOpenError('Not a sealed webhook secret');
    }
    const key = this.keys.get(id);
    if (!key)
      throw new SecretOpenError(`Sealed with key ${id}, which is neither the current nor the previous`);
    const raw = Buffer.from(data, 'base64url');
    if (raw.length < NONCE_BYTES + TAG_BYTES) throw new SecretOpenError('Sealed webhook secret too short');
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, NONCE_BYTES));
    decipher.setAAD(Buffer.from(context, 'utf8'));
    decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
    try {
      return Buffer.concat([
        decipher.update(raw.subarray(NONCE_BYTES, raw.length - TAG_BYTES)),
        decipher.final(),
      ]).toString('utf8');
    } catch {
      throw new SecretOpenError(`Sealed webhook secret does not open with key ${id}`);
    }
  }
}
