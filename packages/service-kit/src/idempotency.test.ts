import type { Identity } from '@seller-api/contracts';
import { HttpError } from './errors';
import { forwardedIdempotency, idempotentRequestOf, keyedId, requestFingerprint } from './idempotency';

const seller: Identity = {
  user_id: '7d5c7069-0000-4000-8000-000000000001',
  seller_id: '7d5c7069-0000-4000-8000-000000000002',
  environment: 'test',
  role: 'seller',
};
const body = Buffer.from('{"amount":100}');
const request = (headers: Record<string, string>, path = '/finance/withdrawals/') =>
  idempotentRequestOf(seller, { method: 'POST', path, headers, body });

describe('idempotentRequestOf', () => {
  it('is null without a key', () => {
    expect(request({})).toBeNull();
  });

  it('scopes the key to the user, the environment and the route, and fingerprints the body', () => {
    expect(request({ 'idempotency-key': 'k1' })).toEqual({
      scope: `${seller.user_id}/test POST /finance/withdrawals/`,
      route: 'POST /finance/withdrawals/',
      key: 'k1',
      fingerprint: requestFingerprint(body),
    });
    expect(
      idempotentRequestOf(
        { ...seller, environment: 'live' },
        { method: 'POST', path: '/x/', headers: { 'idempotency-key': 'k1' }, body },
      )?.scope,
    ).toBe(`${seller.user_id}/live POST /x/`);
  });

  it('takes a path with or without its trailing slash for one route', () => {
    expect(request({ 'idempotency-key': 'k1' }, '/finance/withdrawals')).toEqual(
      request({ 'idempotency-key': 'k1' }, '/finance/withdrawals/'),
    );
  });

  it('keeps the public route and fingerprint a forwarding service sends', () => {
    const public_ = request({ 'idempotency-key': 'k1' }, '/sellers/orders/abc/refund/');
    const forwarded = request(forwardedIdempotency(public_!), '/internal/charges/abc/refund/');
    expect(forwarded).toEqual(public_);
  });

  it('refuses a malformed key with a 400 naming the header', () => {
    for (const key of ['', 'x'.repeat(256), 'with space', 'ç']) {
      expect(() => request({ 'idempotency-key': key })).toThrow(HttpError);
    }
    try {
      request({ 'idempotency-key': 'bad key' });
    } catch (err) {
      expect((err as HttpError).status).toBe(400);
      expect((err as HttpError).data).toHaveProperty('Idempotency-Key');
    }
  });
});

describe('keyedId', () => {
  const base = {
    scope: 'u/test POST /sellers/orders/',
    route: 'POST /sellers/orders/',
    key: 'k1',
    fingerprint: 'f',
  };

  it('is one version-5 UUID for every retry of a request', () => {
    expect(keyedId(base)).toBe(keyedId({ ...base }));
    expect(keyedId(base)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('differs with the scope, the key or the body', () => {
    const ids = new Set([
      keyedId(base),
      keyedId({ ...base, scope: 'u/live POST /sellers/orders/' }),
      keyedId({ ...base, key: 'k2' }),
      keyedId({ ...base, fingerprint: 'g' }),
    ]);
    expect(ids.size).toBe(4);
  });
});
