import { randomUUID } from 'node:crypto';
import { json, startFakeUpstream } from '../support/fake-upstream';
import { call, createKey, startSystem, type RunningGateway, type System } from '../support/system';

let system: System;
let gateway: RunningGateway;
let upstream: Awaited<ReturnType<typeof startFakeUpstream>>;
let key: string;
let failNext = 0;

beforeAll(async () => {
  system = await startSystem();
  upstream = await startFakeUpstream(async (req, res) => {
    if (failNext > 0) {
      failNext -= 1;
      return json(res, 503, { message: 'payments unavailable', code: 'service_unavailable' });
    }
    if (req.url.startsWith('/sellers/slow-orders/')) await new Promise((r) => setTimeout(r, 400));
    json(res, 201, {
      message: 'Order created.',
      data: { uuid: randomUUID(), body: JSON.parse(req.body || '{}') },
    });
  });
  gateway = await system.startGateway({ ORDERS_URL: upstream.url });
  ({ key } = await createKey(gateway.service));
});
afterAll(async () => {
  await system.stop();
  await upstream.close();
});

const post = (path: string, body: unknown, idempotencyKey: string, k = key) =>
  call(`${gateway.url}${path}`, {
    method: 'POST',
    key: k,
    body,
    headers: { 'idempotency-key': idempotencyKey },
  });
const calls = (path: string) => upstream.received.filter((r) => r.url === path).length;

describe('Idempotency-Key', () => {
  it('replays the first answer for the same key and body, without running the request again', async () => {
    const idem = randomUUID();
    const first = await post('/sellers/orders/', { n: 1 }, idem);
    const again = await post('/sellers/orders/', { n: 1 }, idem);
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(upstream.received.filter((r) => r.headers['idempotency-key'] === idem)).toHaveLength(1);
  });

  it('answers 409 when the same key comes with a different body', async () => {
    const idem = randomUUID();
    await post('/sellers/orders/', { n: 1 }, idem);
    const res = await post('/sellers/orders/', { n: 2 }, idem);
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({
      code: 'idempotency_conflict',
      message: expect.stringMatching(/different/),
    });
  });

  it('answers 409 to a duplicate that arrives while the first is still running', async () => {
    const idem = randomUUID();
    const before = calls('/sellers/slow-orders/');
    const [a, b] = await Promise.all([
      post('/sellers/slow-orders/', { n: 1 }, idem),
      post('/sellers/slow-orders/', { n: 1 }, idem),
    ]);
    expect([a.status, b.status].sort()).toEqual([201, 409]);
    expect([a, b].find((r) => r.status === 409)?.body.code).toBe('idempotency_conflict');
    expect(calls('/sellers/slow-orders/') - before).toBe(1);
  });

  it('does not keep a 5xx answer: a retry with the same key runs again and then succeeds once', async () => {
    const idem = randomUUID();
    failNext = 1;
    const failed = await post('/sellers/orders/', { retry: true }, idem);
    expect(failed.status).toBe(503);
    const retried = await post('/sellers/orders/', { retry: true }, idem);
    expect(retried.status).toBe(201);
    const replay = await post('/sellers/orders/', { retry: true }, idem);
    expect(replay.text).toBe(retried.text);
    expect(upstream.received.filter((r) => r.headers['idempotency-key'] === idem)).toHaveLength(2);
  });

  it('scopes keys to the user and to the route', async () => {
    const idem = randomUUID();
    const other = await createKey(gateway.service);
    const mine = await post('/sellers/orders/', { n: 1 }, idem);
    const theirs = await post('/sellers/orders/', { n: 1 }, idem, other.key);
    const otherRoute = await post('/sellers/products/', { n: 1 }, idem);
    expect(theirs.status).toBe(201);
    expect(otherRoute.status).toBe(201);
    expect(new Set([mine.text, theirs.text, otherRoute.text]).size).toBe(3);
  });

  it("keeps a user's test and live keys apart: the same key never replays the other environment's answer", async () => {
    const idem = randomUUID();
    const { email } = await createKey(gateway.service, { email: `both-${randomUUID()}@example.com` });
    const test = await createKey(gateway.service, { email, environment: 'test' });
    const live = await createKey(gateway.service, { email, environment: 'live' });
    expect(live.userId).toBe(test.userId);
    const inTest = await post('/sellers/orders/', { n: 1 }, idem, test.key);
    const inLive = await post('/sellers/orders/', { n: 1 }, idem, live.key);
    expect(inLive.status).toBe(201);
    expect(inLive.headers.get('idempotent-replayed')).toBeNull();
    expect(inLive.text).not.toBe(inTest.text);
  });

  it('keeps the key claimed after a timeout, whose outcome is unknown: a prompt retry is a 409, not a second run', async () => {
    const hurried = await system.startGateway({ ORDERS_URL: upstream.url, UPSTREAM_TIMEOUT_MS: '100' });
    const { key: mine } = await createKey(hurried.service);
    const idem = randomUUID();
    const send = () =>
      call(`${hurried.url}/sellers/slow-orders/`, {
        method: 'POST',
        key: mine,
        body: { n: 1 },
        headers: { 'idempotency-key': idem },
      });
    const first = await send();
    expect(first.status).toBe(504);
    const retry = await send();
    expect(retry.status).toBe(409);
    expect(retry.body.code).toBe('idempotency_conflict');
    expect(upstream.received.filter((r) => r.headers['idempotency-key'] === idem)).toHaveLength(1);
  });

  it('refuses a malformed key with 400', async () => {
    const res = await post('/sellers/orders/', { n: 1 }, 'x'.repeat(256));
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('validation_error');
  });

  it('answers 503 rather than risk a duplicate when the idempotency store is down', async () => {
    const g = await system.startGateway({ ORDERS_URL: upstream.url, REDIS_URL: 'redis://127.0.0.1:1' });
    const res = await call(`${g.url}/sellers/orders/`, {
      method: 'POST',
      key,
      body: { n: 1 },
      headers: { 'idempotency-key': randomUUID() },
    });
    expect(res.status).toBe(503);
    expect(res.body.code).toBe('service_unavailable');
    // Without the header the request goes through.
    expect((await call(`${g.url}/sellers/orders/`, { method: 'POST', key, body: { n: 1 } })).status).toBe(
      201,
    );
  });
});
