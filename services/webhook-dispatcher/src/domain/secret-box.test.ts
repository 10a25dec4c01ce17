import { randomBytes } from 'node:crypto';
import { SecretBox, SecretOpenError, keyId, parseSecretsKey } from './secret-box';

const secret = 'whsec_Jc3c5v0n6m8HkqVb1Yl2dQ4oF7tR9wXzA0sE3gK5uP8=';

describe('SecretBox', () => {
  const key = randomBytes(32);
  const box = new SecretBox(key);

  it('seals with AES-256-GCM under a fresh nonce, naming the format and the key, and opens it again', () => {
    const a = box.seal(secret, 'hook-1');
    const b = box.seal(secret, 'hook-1');
    expect(a).toMatch(new RegExp(`^v1:${keyId(key)}:[A-Za-z0-9_-]+$`));
    expect(a).not.toBe(b);
    expect(a).not.toContain(secret.slice(6));
    expect(box.open(a, 'hook-1')).toBe(secret);
    expect(box.open(b, 'hook-1')).toBe(secret);
    expect(box.isCurrent(a)).toBe(true);
    expect(SecretBox.isSealed(a)).toBe(true);
    expect(SecretBox.isSealed(secret)).toBe(false);
  });

  it('refuses to open under another context, or a text changed by one character', () => {
    const sealed = box.seal(secret, 'hook-1');
    expect(() => box.open(sealed, 'hook-2')).toThrow(SecretOpenError);
    const last = sealed.slice(-1) === 'A' ? 'B' : 'A';
    expect(() => box.open(`${sealed.slice(0, -1)}${last}`, 'hook-1')).toThrow(SecretOpenError);
    expect(() => box.open('v1:00000000:AAAA', 'hook-1')).toThrow(SecretOpenError);
    expect(() => box.open('nonsense', 'hook-1')).toThrow(SecretOpenError);
  });

  it('gives a clear secret of before as it is', () => {
    expect(box.open(secret, 'hook-1')).toBe(secret);
  });

  it('opens what the previous key sealed, calls it stale, and seals with the current key only', () => {
    const previous = randomBytes(32);
    const old = new SecretBox(previous).seal(secret, 'hook-1');
    const rotating = new SecretBox(key, previous);
    expect(rotating.open(old, 'hook-1')).toBe(secret);
    expect(rotating.isCurrent(old)).toBe(false);
    expect(rotating.isCurrent(rotating.seal(secret, 'hook-1'))).toBe(true);
    // Without the previous key it no longer opens.
    expect(() => box.open(old, 'hook-1')).toThrow(/neither the current nor the previous/);
  });

  it('never puts a key or a secret in an error message', () => {
    try {
      box.open(new SecretBox(randomBytes(32)).seal(secret, 'x'), 'x');
    } catch (err) {
      expect((err as Error).message).not.toContain(secret);
      expect((err as Error).message).not.toContain(key.toString('base64'));
    }
    expect.assertions(2);
  });
});

describe('parseSecretsKey', () => {
  const key = randomBytes(32);
  it('reads 32 bytes as hex, base64 or base64url', () => {
    expect(parseSecretsKey(key.toString('hex'))?.equals(key)).toBe(true);
    expect(parseSecretsKey(key.toString('base64'))?.equals(key)).toBe(true);
    expect(parseSecretsKey(key.toString('base64url'))?.equals(key)).toBe(true);
    expect(parseSecretsKey(` ${key.toString('hex')}\n`)?.equals(key)).toBe(true);
  });

  it('refuses any other length or alphabet', () => {
    for (const text of [
      '',
      'short',
      randomBytes(16).toString('hex'),
      randomBytes(31).toString('base64'),
      randomBytes(33).toString('base64'),
      `${key.toString('hex').slice(1)}g`,
    ]) {
      expect(parseSecretsKey(text)).toBeNull();
    }
  });
});
