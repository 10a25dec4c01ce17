import { startReceiver, type ReceivedHook, type Reply } from '../support/receiver';
import { call, createKey, startSystem, type RunningGateway, type System } from '../support/system';
import { waitFor } from '../support/wait';
import { deliveries, placeOrder, register } from './helpers';

let system: System;
let gateway: RunningGateway;
let receiver: Awaited<ReturnType<typeof startReceiver>>;
// Each test sets how its own path answers.
const replies = new Map<string, (hook: ReceivedHook) => Reply>();

beforeAll(async () => {
  system = await startSystem({ WEBHOOK_RETRY_SCHEDULE: '30ms' });
  gateway = await system.startGateway();
  receiver = await startReceiver(
    (hook) => replies.get(hook.path.split('?')[0] ?? '')?.(hook) ?? { status: 200 },
  );
});
afterAll(async () => {
  await system.stop();
  await receiver.close();
});

const hitsAt = (path: string) => receiver.received.filter((h) => h.path === path);

describe('retries', () => {
  it('retries every non-2xx answer with the same event id, counting delivery_attempt, 8 times, then dead', async () => {
    replies.set('/fail', (hook) => ({
      status: hook.body.delivery_attempt % 2 ? 500 : 410,
      body: 'x'.repeat(3000),
    }));
    const { key } = await createKey(gateway.service);
    const hook = await register(gateway.url, key, `${receiver.url}/fail`);
    await placeOrder(gateway.url, key);
    const [dead] = await waitFor(
      async () => {
        const list = await deliveries(gateway.url, key, hook.id, '?status=dead');
        return list.length ? list : null;
      },
      { what: 'dead delivery' },
    );
    const hits = hitsAt('/fail');
    expect(hits).toHaveLength(8);
    expect(hits.map((h) => h.body.delivery_attempt)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(new Set(hits.map((h) => h.headers['x-webhook-event-id']))).toEqual(new Set([dead?.event_id]));
    expect(dead?.attempts).toHaveLength(8);
    expect(dead?.attempts[1]).toMatchObject({ attempt: 2, response_status: 410, error: null });
    expect(dead?.attempts[0]?.response_body).toHaveLength(1024);
    expect(dead?.next_attempt_at).toBeNull();
    expect(await deliveries(gateway.url, key, hook.id, '?status=pending')).toEqual([]);

    // A manual resend is one more attempt, numbered 9, with the same event id.
    replies.set('/fail', () => ({ status: 204 }));
    const resend = await call(`${gateway.url}/config/webhooks/${hook.id}/deliveries/${dead?.id}/resend/`, {
      method: 'POST',
      key,
    });
    expect(resend.status).toBe(200);
    expect(resend.body).toEqual({ message: expect.any(String) });
    const ninth = await waitFor(() => hitsAt('/fail')[8], { what: 'attempt 9' });
    expect(ninth.body.delivery_attempt).toBe(9);
    expect(ninth.headers['x-webhook-event-id']).toBe(dead?.event_id);
    await waitFor(
      async () => (await deliveries(gateway.url, key, hook.id, '?status=delivered')).length === 1 || null,
      { what: 'delivered' },
    );
  });

  it('records network errors and timeouts as failed attempts', async () => {
    const g = await system.startGateway();
    const { key } = await createKey(g.service);
    const hook = await register(g.url, key, 'http://127.0.0.1:1/closed');
    await placeOrder(g.url, key);
    const [delivery] = await waitFor(
      async () => {
        const list = await deliveries(g.url, key, hook.id);
        return list[0]?.attempts.length ? list : null;
      },
      { what: 'a failed attempt' },
    );
    expect(delivery?.attempts[0]).toMatchObject({
      response_status: null,
      response_body: null,
      error: expect.stringMatching(/ECONNREFUSED/),
    });
  });

  it('records an answer with NUL characters (which PostgreSQL text cannot hold) without them', async () => {
    replies.set('/binary', () => ({ status: 200, body: 'ok\u0000\u0000done' }));
    const { key } = await createKey(gateway.service);
    const hook = await register(gateway.url, key, `${receiver.url}/binary`);
    await placeOrder(gateway.url, key);
    const [delivered] = await waitFor(
      async () => {
        const list = await deliveries(gateway.url, key, hook.id, '?status=delivered');
        return list.length ? list : null;
      },
      { what: 'delivered' },
    );
    expect(delivered?.attempts[0]).toMatchObject({
      response_status: 200,
      response_body: 'okdone',
      error: null,
    });
  });

  it('honours Retry-After, held between one and two times the scheduled delay', async () => {
    // Asks for 60 s; the schedule says about 30 ms, so the wait is held at twice that.
    replies.set('/busy', (hook) =>
      hook.body.delivery_attempt === 1 ? { status: 503, headers: { 'retry-after': '60' } } : { status: 200 },
    );
    const { key } = await createKey(gateway.service);
    await register(gateway.url, key, `${receiver.url}/busy`);
    await placeOrder(gateway.url, key);
    const [first, second] = await waitFor(() => (hitsAt('/busy').length >= 2 ? hitsAt('/busy') : null), {
      what: 'second attempt',
    });
    const gap = (second?.at ?? 0) - (first?.at ?? 0);
    expect(gap).toBeGreaterThanOrEqual(60);
    expect(gap).toBeLessThan(5_000);
  });

  it('re-queues every dead delivery of a webhook at once', async () => {
    replies.set('/bulk', () => ({ status: 500 }));
    const { key } = await createKey(gateway.service);
    const hook = await register(gateway.url, key, `${receiver.url}/bulk`);
    await placeOrder(gateway.url, key);
    await placeOrder(gateway.url, key);
    await waitFor(
      async () => (await deliveries(gateway.url, key, hook.id, '?status=dead')).length === 2 || null,
      { what: 'two dead' },
    );
    replies.set('/bulk', () => ({ status: 200 }));
    const res = await call(`${gateway.url}/config/webhooks/${hook.id}/deliveries/resend/`, {
      method: 'POST',
      key,
      body: { status: 'dead', since: new Date(Date.now() - 60_000).toISOString() },
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ count: 2 });
    await waitFor(
      async () => (await deliveries(gateway.url, key, hook.id, '?status=delivered')).length === 2 || null,
      { what: 'both delivered' },
    );
    const none = await call(`${gateway.url}/config/webhooks/${hook.id}/deliveries/resend/`, {
      method: 'POST',
      key,
      body: { status: 'dead', until: new Date(Date.now() - 3600_000).toISOString() },
    });
    expect(none.body.data).toEqual({ count: 0 });
  });

  it('gives a paused webhook no new deliveries', async () => {
    const { key } = await createKey(gateway.service);
    const paused = await register(gateway.url, key, `${receiver.url}/paused`);
    const marker = await register(gateway.url, key, `${receiver.url}/marker`);
    await call(`${gateway.url}/config/webhooks/${paused.id}/`, {
      method: 'PATCH',
      key,
      body: { status: 'DISABLED' },
    });
    await placeOrder(gateway.url, key);
    await waitFor(async () => (await deliveries(gateway.url, key, marker.id)).length === 1 || null, {
      what: 'marker delivery',
    });
    expect(await deliveries(gateway.url, key, paused.id)).toEqual([]);
    expect(hitsAt('/paused')).toEqual([]);
  });

  it("holds a paused webhook's due retries, which go out once it is resumed", async () => {
    let resumed = false;
    // The first attempt fails, and slowly: the webhook is paused while it is in flight.
    replies.set('/held', () => (resumed ? { status: 200 } : { status: 500, delayMs: 500 }));
    // The barrier fails twice, in step with /held's first attempt: its third attempt comes after
    // /held's retry has been due for a whole retry delay, so claims have passed /held by then.
    replies.set('/barrier', (hook) =>
      hook.body.delivery_attempt === 1
        ? { status: 500, delayMs: 500 }
        : { status: hook.body.delivery_attempt === 2 ? 500 : 200 },
    );
    const { key } = await createKey(gateway.service);
    const held = await register(gateway.url, key, `${receiver.url}/held`);
    const barrier = await register(gateway.url, key, `${receiver.url}/barrier`);
    await placeOrder(gateway.url, key);
    await waitFor(() => hitsAt('/held').length === 1 || null, { what: 'the first attempt to /held' });
    await call(`${gateway.url}/config/webhooks/${held.id}/`, {
      method: 'PATCH',
      key,
      body: { status: 'DISABLED' },
    });
    await waitFor(
      async () => (await deliveries(gateway.url, key, barrier.id, '?status=delivered')).length === 1 || null,
      { what: 'the barrier delivered at its third attempt' },
    );
    expect(hitsAt('/held')).toHaveLength(1);
    const [pending] = await deliveries(gateway.url, key, held.id);
    expect(pending).toMatchObject({ status: 'pending' });
    expect(pending?.attempts).toHaveLength(1);

    resumed = true;
    await call(`${gateway.url}/config/webhooks/${held.id}/`, {
      method: 'PATCH',
      key,
      body: { status: 'ACTIVE' },
    });
    const retry = await waitFor(() => hitsAt('/held')[1], { what: 'the retry after resuming' });
    expect(retry.body.delivery_attempt).toBe(2);
  });

  it('moves pending deliveries to the new registration on rotation and signs them with the new secret', async () => {
    let open = false;
    replies.set('/rotating', () => ({ status: open ? 200 : 500 }));
    const { key } = await createKey(gateway.service);
    const old = await register(gateway.url, key, `${receiver.url}/rotating`);
    await placeOrder(gateway.url, key);
    await waitFor(() => hitsAt('/rotating').length >= 1 || null, { what: 'first failure' });
    const rotated = await register(gateway.url, key, `${receiver.url}/rotating`);
    open = true;
    const { verifyWebhook } = await import('@seller-api/webhook-verify');
    const ok = await waitFor(
      () =>
        hitsAt('/rotating').find((h) => {
          try {
            verifyWebhook({ secret: rotated.secret, headers: h.headers, rawBody: h.rawBody });
            return true;
          } catch {
            return false;
          }
        }),
      { what: 'a delivery signed with the new secret' },
    );
    expect(ok.body.event).toBe('order.created');
    expect(await deliveries(gateway.url, key, rotated.id)).toHaveLength(1);
    expect(old.id).not.toBe(rotated.id);
  });

  it('does not follow redirects: a 3xx is a failed attempt and the other address gets nothing', async () => {
    replies.set('/moved', () => ({ status: 302, headers: { location: `${receiver.url}/elsewhere` } }));
    const { key } = await createKey(gateway.service);
    const hook = await register(gateway.url, key, `${receiver.url}/moved`);
    await placeOrder(gateway.url, key);
    const [delivery] = await waitFor(
      async () => {
        const list = await deliveries(gateway.url, key, hook.id);
        return (list[0]?.attempts.length ?? 0) >= 2 ? list : null;
      },
      { what: 'retried after a redirect' },
    );
    expect(delivery?.attempts[0]).toMatchObject({ response_status: 302 });
    expect(hitsAt('/elsewhere')).toEqual([]);
  });
});
