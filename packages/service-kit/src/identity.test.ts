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
});
