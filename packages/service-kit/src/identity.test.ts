import { randomUUID } from 'node:crypto';
import { signIdentity, verifyIdentity } from './identity';

const secret = 'a-shared-internal-secret';
const identity = {
  user_id: randomUUID(),
  seller_id: randomUUID(),
  environment: 'test' as const,
  role: 'seller' as const,
};

describe('gateway identity', () => {
  it('verifies what the gateway signed', () => {
    const headers = signIdentity(secret, identity, 'get', '/sellers/orders/');
    expect(verifyIdentity(secret, headers, 'GET', '/sellers/orders/')).toEqual(identity);
  });

  it('refuses another secret, method, path, a tampered identity and an old timestamp', () => {
    const headers = signIdentity(secret, identity, 'GET', '/sellers/orders/');
    expect(verifyIdentity('another-secret-value', headers, 'GET', '/sellers/orders/')).toBeNull();
    expect(verifyIdentity(secret, headers, 'POST', '/sellers/orders/')).toBeNull();
    expect(verifyIdentity(secret, headers, 'GET', '/finance/balance/')).toBeNull();
    const tampered = {
      ...headers,
      'x-sa-identity': Buffer.from(JSON.stringify({ ...identity, role: 'operator' })).toString('base64url'),
    };
    expect(verifyIdentity(secret, tampered, 'GET', '/sellers/orders/')).toBeNull();
    const old = signIdentity(secret, identity, 'GET', '/x/', Date.now() - 61_000);
    expect(verifyIdentity(secret, old, 'GET', '/x/')).toBeNull();
    expect(verifyIdentity(secret, {}, 'GET', '/x/')).toBeNull();
  });

  it('reuses a signature for a second, then signs anew', () => {
    const now = Date.now();
    const first = signIdentity(secret, identity, 'POST', '/internal/charges/', now);
    expect(signIdentity(secret, identity, 'POST', '/internal/charges/', now + 999)).toEqual(first);
    expect(signIdentity(secret, identity, 'POST', '/internal/charges/', now + 1_000)).not.toEqual(first);
    // Another route or another identity is another signature.
    expect(signIdentity(secret, identity, 'POST', '/internal/other/', now)).not.toEqual(first);
    expect(
      signIdentity(secret, { ...identity, seller_id: randomUUID() }, 'POST', '/internal/charges/', now),
    ).not.toEqual(first);
    expect(signIdentity('another-secret-value', identity, 'POST', '/internal/charges/', now)).not.toEqual(
      first,
    );
  });

  it('answers a check made before the same way, and still refuses the same parts elsewhere or too late', () => {
    const now = Date.now();
    const headers = signIdentity(secret, identity, 'GET', '/sellers/products/', now);
    expect(verifyIdentity(secret, headers, 'GET', '/sellers/products/', now)).toEqual(identity);
    expect(verifyIdentity(secret, headers, 'GET', '/sellers/products/', now + 10)).toEqual(identity);
    expect(verifyIdentity('another-secret-value', headers, 'GET', '/sellers/products/', now)).toBeNull();
    expect(verifyIdentity(secret, headers, 'GET', '/sellers/orders/', now)).toBeNull();
    expect(verifyIdentity(secret, headers, 'GET', '/sellers/products/', now + 60_001)).toBeNull();
    const tampered = { ...headers, 'x-sa-identity-ts': String(now + 1) };
    expect(verifyIdentity(secret, tampered, 'GET', '/sellers/products/', now)).toBeNull();
  });
});
