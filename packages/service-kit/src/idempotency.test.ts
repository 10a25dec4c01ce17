import type { Identity } from '@seller-api/contracts';
import { HttpError } from './errors';
import { forwardedIdempotency, idempotentRequestOf, requestFingerprint } from './idempotency';

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
