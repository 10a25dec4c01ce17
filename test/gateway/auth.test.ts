import { createApiKey } from '../../services/gateway/src/db/api-keys';
import { setSellerStatus } from '../../services/gateway/src/db/sellers';
import { call, type RunningGateway } from '../support/system';
import { useSystem } from '../support/use-system';

const t = useSystem();
let second: RunningGateway;
beforeAll(async () => {
  second = await t.startGateway();
});

const balance = (g: RunningGateway, key?: string, headers?: Record<string, string>) =>
  call(`${g.url}/finance/balance/`, { key, headers });

describe('API key authentication', () => {
  it('answers 401 with the documented body when the header is missing', async () => {
    const res = await balance(t.gateway);
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ code: 'unauthorized', message: expect.stringMatching(/credentials/i) });
  });

  it.each([
    ['a malformed header', { authorization: 'Token abc' }],
    ['a key of the wrong format', { authorization: 'Bearer mk_prod_abcdefghijklmnopqrstuvwxyz0123456789' }],
    ['an unknown key', { authorization: 'Bearer mk_test_ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghij0123' }],
    ['a basic credential', { authorization: 'Basic dXNlcjpwYXNz' }],
  ])('answers 401 to %s', async (_name, headers) => {
    const res = await balance(t.gateway, undefined, headers);
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('unauthorized');
  });

  it('lets a valid key through to the service with the rate-limit headers', async () => {
    const { key } = await t.newKey();
    const res = await balance(t.gateway, key);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      message: expect.any(String),
      data: { available_amount: 0, pending_amount: 0, currency: 'BRL' },
    });
    expect(res.headers.get('x-ratelimit-limit')).toBe('300');
    expect(res.headers.get('x-ratelimit-remaining')).toBe('299');
    expect(Number(res.headers.get('x-ratelimit-reset'))).toBeGreaterThan(0);
  });

  it('revokes the previous key of an environment on the very next request, on every gateway replica', async () => {
    const first = await t.newKey();
    const live = await createApiKey(
      t.gateway.service.runtime.sql,
      t.gateway.service.runtime.orm.em.fork(),
      t.gateway.service.keyVersions,
      first.userId,
      'live',
      null,
    );
    expect((await balance(t.gateway, first.key)).status).toBe(200);
    expect((await balance(second, first.key)).status).toBe(200);

    const rotated = await createApiKey(
      t.gateway.service.runtime.sql,
      t.gateway.service.runtime.orm.em.fork(),
      t.gateway.service.keyVersions,
      first.userId,
      'test',
      'rotated',
    );
    expect((await balance(t.gateway, first.key)).status).toBe(401);
    expect((await balance(second, first.key)).status).toBe(401);
    expect((await balance(second, rotated.key)).status).toBe(200);
    // The live key of the same user is untouched by a test rotation.
    expect((await balance(second, live.key)).status).toBe(200);
  });

  it('refuses a live key on a sandbox route with 403', async () => {
    const { key } = await t.newKey({ environment: 'live' });
    const res = await call(`${t.url}/sandbox/orders/00000000-0000-4000-8000-000000000000/pay/`, {
      method: 'POST',
      key,
    });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('forbidden');
  });

  it('refuses a seller key on an operator route and an operator key on seller routes', async () => {
    const seller = await t.newKey();
    const operator = await t.newKey({ role: 'operator' });
    const ops = await call(`${t.url}/ops/withdrawals/00000000-0000-4000-8000-000000000000/approve/`, {
      method: 'POST',
      key: seller.key,
    });
    expect(ops.status).toBe(403);
    const sellerRoute = await balance(t.gateway, operator.key);
    expect(sellerRoute.status).toBe(403);
    expect(sellerRoute.body.message).toMatch(/operator/i);
  });

  it('refuses the keys of a suspended seller with 403, on every replica at once', async () => {
    const { key, sellerId } = await t.newKey();
    // Both replicas have the key's holder in their caches before the suspension.
    expect((await balance(t.gateway, key)).status).toBe(200);
    expect((await balance(second, key)).status).toBe(200);
    await setSellerStatus(
      t.gateway.service.runtime.sql,
      t.gateway.service.keyVersions,
      sellerId as string,
      'SUSPENDED',
    );
    const res = await balance(t.gateway, key);
    expect(res.status).toBe(403);
    expect(res.body.message).toMatch(/suspended/);
    expect((await balance(second, key)).status).toBe(403);
  });

  it('still authenticates from PostgreSQL when the key version cannot be read', async () => {
    const { key } = await t.newKey();
    expect((await balance(t.gateway, key)).status).toBe(200);
    // A change left in progress (its revoker lost Redis): the replicas read PostgreSQL meanwhile.
    const prefix = t.env.REDIS_KEY_PREFIX;
    await t.gateway.service.redis.hset(`${prefix}keys:changing`, 'stuck', Date.now());
    try {
      expect((await balance(second, key)).status).toBe(200);
      expect((await balance(t.gateway, 'mk_test_ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghij0123')).status).toBe(401);
    } finally {
      await t.gateway.service.redis.del(`${prefix}keys:changing`);
    }
  });
});
