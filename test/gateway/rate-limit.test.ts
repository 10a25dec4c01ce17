import { hostPort, TcpProxy, viaProxy } from '../support/tcp-proxy';
import { call, createKey, type RunningGateway } from '../support/system';
import { useSystem } from '../support/use-system';
import { waitFor } from '../support/wait';

const t = useSystem();
let a: RunningGateway;
let b: RunningGateway;
beforeAll(async () => {
  a = t.gateway;
  b = await t.startGateway();
});

const balance = (g: RunningGateway, key?: string) => call(`${g.url}/finance/balance/`, { key });

describe('rate limiting', () => {
  it('accepts exactly 300 requests a minute per key across two gateway replicas, then answers 429', async () => {
    const { key } = await createKey(a.service);
    const statuses: number[] = [];
    const remaining: number[] = [];
    // Ten at a time, alternating replicas: the budget lives in Redis, not in either process.
    for (let batch = 0; batch < 30; batch += 1) {
      const results = await Promise.all(Array.from({ length: 10 }, (_, i) => balance(i % 2 ? a : b, key)));
      for (const r of results) {
        statuses.push(r.status);
        remaining.push(Number(r.headers.get('x-ratelimit-remaining')));
      }
    }
    expect(statuses.filter((s) => s === 200)).toHaveLength(300);
    expect(Math.min(...remaining)).toBe(0);

    const over = await balance(a, key);
    expect(over.status).toBe(429);
    expect(over.body).toMatchObject({ code: 'rate_limited', message: expect.stringContaining('300') });
    const retryAfter = Number(over.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(over.headers.get('x-ratelimit-remaining')).toBe('0');
    expect((await balance(b, key)).status).toBe(429);

    // Another key has its own budget.
    const other = await createKey(a.service);
    expect((await balance(b, other.key)).status).toBe(200);
  });

  it('limits failed authentications per client IP, so keys cannot be guessed at speed', async () => {
    const g = await t.startGateway({
      UNAUTHENTICATED_RATE_LIMIT_PER_MINUTE: '3',
      REDIS_KEY_PREFIX: `iplimit:${Date.now()}:`,
    });
    const guesses = [];
    for (let i = 0; i < 4; i += 1) {
      guesses.push(
        await call(`${g.url}/finance/balance/`, {
          headers: { authorization: `Bearer mk_test_${'x'.repeat(31)}${i}` },
        }),
      );
    }
    expect(guesses.map((r) => r.status)).toEqual([401, 401, 401, 429]);
    expect(Number(guesses[3]?.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('keeps the failed-authentication budget per client address given by a trusted proxy', async () => {
    const g = await t.startGateway({
      UNAUTHENTICATED_RATE_LIMIT_PER_MINUTE: '2',
      REDIS_KEY_PREFIX: `iplimit-proxy:${Date.now()}:`,
    });
    // The test connects from loopback, a trusted proxy: X-Forwarded-For names the client.
    const guess = (client: string, i: number) =>
      call(`${g.url}/finance/balance/`, {
        headers: {
          authorization: `Bearer mk_test_${'y'.repeat(31)}${i}`,
          'x-forwarded-for': `${client}, 10.0.0.1`,
        },
      });
    const first = [];
    for (let i = 0; i < 3; i += 1) first.push((await guess('203.0.113.7', i)).status);
    expect(first).toEqual([401, 401, 429]);
    // Another client behind the same proxy has its own budget.
    expect((await guess('203.0.113.8', 9)).status).toBe(401);
  });

  it('counts failures only: a valid key from an address over its failure budget answers normally', async () => {
    const g = await t.startGateway({ REDIS_KEY_PREFIX: `iplimit-valid:${Date.now()}:` });
    const { key } = await createKey(a.service);
    const from = { 'x-forwarded-for': '203.0.113.50' };
    const statuses: number[] = [];
    // The default budget is 60 failures a minute; the 61st and later are 429.
    for (let i = 0; i < 62; i += 1) {
      const res = await call(`${g.url}/finance/balance/`, {
        headers: { ...from, authorization: `Bearer mk_test_${'z'.repeat(30)}${String(i).padStart(2, '0')}` },
      });
      statuses.push(res.status);
    }
    expect(statuses.filter((s) => s === 401)).toHaveLength(60);
    expect(statuses.slice(60)).toEqual([429, 429]);

    const valid = await call(`${g.url}/finance/balance/`, { key, headers: from });
    expect(valid.status).toBe(200);
    expect(valid.headers.get('x-ratelimit-limit')).toBe('300');
    // The address stays blocked for bad and missing keys.
    expect((await call(`${g.url}/finance/balance/`, { headers: from })).status).toBe(429);
    expect(
      (await call(`${g.url}/finance/balance/`, { headers: { ...from, authorization: 'Bearer nope' } }))
        .status,
    ).toBe(429);
  });

  it('falls back to an in-memory limiter when Redis is unreachable and keeps serving', async () => {
    const g = await t.startGateway({ REDIS_URL: 'redis://127.0.0.1:1', RATE_LIMIT_PER_MINUTE: '5' });
    // Made where Redis answers: a key change needs it (KeyVersions).
    const { key } = await createKey(a.service);
    const statuses = [];
    for (let i = 0; i < 6; i += 1) statuses.push((await balance(g, key)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    const ready = await call(g.url.replace('/api/v1', '/readyz'));
    expect(ready.status).toBe(503);
    expect(ready.body).toMatchObject({ checks: { redis: 'failing', postgres: 'ok' } });
  });

  it('goes back to the shared limiter when Redis returns', async () => {
    const { host, port } = hostPort(t.env.REDIS_URL as string, 6379);
    const proxy = new TcpProxy(host, port);
    await proxy.start();
    try {
      const g = await t.startGateway({
        REDIS_URL: viaProxy(t.env.REDIS_URL as string, proxy.port),
      });
      const { key } = await createKey(g.service);
      expect((await balance(g, key)).status).toBe(200);
      await proxy.cut();
      const during = await balance(g, key);
      expect(during.status).toBe(200);
      expect(during.headers.get('x-ratelimit-limit')).toBe('300');
      await proxy.restore();
      await waitFor(async () => (await call(g.url.replace('/api/v1', '/readyz'))).status === 200, {
        what: 'redis back',
      });
      // The shared budget still counts the request made before the outage.
      const after = await balance(g, key);
      expect(Number(after.headers.get('x-ratelimit-remaining'))).toBeLessThanOrEqual(298);
    } finally {
      await proxy.stop();
    }
  });
});
