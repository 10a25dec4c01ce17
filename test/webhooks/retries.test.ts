import { call, createKey } from '../support/system';
import { useSystem } from '../support/use-system';
import { waitFor } from '../support/wait';
import { deliveries, placeOrder, register } from './helpers';

// Each test routes a receiver path of its own.
const t = useSystem({ env: { WEBHOOK_RETRY_SCHEDULE: '30ms' }, receiver: true });

describe('retries', () => {
  it('retries every non-2xx answer with the same event id, counting delivery_attempt, 8 times, then dead', async () => {
    t.receiver.route('/fail', (hook) => ({
      status: hook.body.delivery_attempt % 2 ? 500 : 410,
      body: 'x'.repeat(3000),
    }));
    const { key } = await t.newKey();
    const hook = await register(t.url, key, `${t.receiver.url}/fail`);
    await placeOrder(t.url, key);
    const [dead] = await waitFor(
      async () => {
        const list = await deliveries(t.url, key, hook.id, '?status=dead');
        return list.length ? list : null;
      },
      { what: 'dead delivery' },
    );
    const hits = t.receiver.at('/fail');
    expect(hits).toHaveLength(8);
    expect(hits.map((h) => h.body.delivery_attempt)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(new Set(hits.map((h) => h.headers['x-webhook-event-id']))).toEqual(new Set([dead?.event_id]));
    expect(dead?.attempts).toHaveLength(8);
    expect(dead?.attempts[1]).toMatchObject({ attempt: 2, response_status: 410, error: null });
    expect(dead?.attempts[0]?.response_body).toHaveLength(1024);
    expect(dead?.next_attempt_at).toBeNull();
    expect(await deliveries(t.url, key, hook.id, '?status=pending')).toEqual([]);

    // A manual resend is one more attempt, numbered 9, with the same event id.
    t.receiver.route('/fail', () => ({ status: 204 }));
    const resend = await call(`${t.url}/config/webhooks/${hook.id}/deliveries/${dead?.id}/resend/`, {
      method: 'POST',
      key,
    });
    expect(resend.status).toBe(200);
    expect(resend.body).toEqual({ message: expect.any(String) });
    const ninth = await waitFor(() => t.receiver.at('/fail')[8], { what: 'attempt 9' });
    expect(ninth.body.delivery_attempt).toBe(9);
    expect(ninth.headers['x-webhook-event-id']).toBe(dead?.event_id);
    await waitFor(
      async () => (await deliveries(t.url, key, hook.id, '?status=delivered')).length === 1 || null,
      { what: 'delivered' },
    );
  });

  it('records network errors and timeouts as failed attempts', async () => {
    const g = await t.startGateway();
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
    t.receiver.route('/binary', () => ({ status: 200, body: 'ok\u0000\u0000done' }));
    const { key } = await t.newKey();
    const hook = await register(t.url, key, `${t.receiver.url}/binary`);
    await placeOrder(t.url, key);
    const [delivered] = await waitFor(
      async () => {
        const list = await deliveries(t.url, key, hook.id, '?status=delivered');
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
    t.receiver.route('/busy', (hook) =>
      hook.body.delivery_attempt === 1 ? { status: 503, headers: { 'retry-after': '60' } } : { status: 200 },
    );
    const { key } = await t.newKey();
    await register(t.url, key, `${t.receiver.url}/busy`);
    await placeOrder(t.url, key);
    const [first, second] = await waitFor(
      () => (t.receiver.at('/busy').length >= 2 ? t.receiver.at('/busy') : null),
      {
        what: 'second attempt',
      },
    );
    const gap = (second?.at ?? 0) - (first?.at ?? 0);
    expect(gap).toBeGreaterThanOrEqual(60);
    expect(gap).toBeLessThan(5_000);
  });

  it('re-queues every dead delivery of a webhook at once', async () => {
    t.receiver.route('/bulk', () => ({ status: 500 }));
    const { key } = await t.newKey();
    const hook = await register(t.url, key, `${t.receiver.url}/bulk`);
    await placeOrder(t.url, key);
    await placeOrder(t.url, key);
    await waitFor(async () => (await deliveries(t.url, key, hook.id, '?status=dead')).length === 2 || null, {
      what: 'two dead',
    });
    t.receiver.route('/bulk', () => ({ status: 200 }));
    const res = await call(`${t.url}/config/webhooks/${hook.id}/deliveries/resend/`, {
      method: 'POST',
      key,
      body: { status: 'dead', since: new Date(Date.now() - 60_000).toISOString() },
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ count: 2 });
    await waitFor(
      async () => (await deliveries(t.url, key, hook.id, '?status=delivered')).length === 2 || null,
      { what: 'both delivered' },
    );
    const none = await call(`${t.url}/config/webhooks/${hook.id}/deliveries/resend/`, {
      method: 'POST',
      key,
      body: { status: 'dead', until: new Date(Date.now() - 3600_000).toISOString() },
    });
    expect(none.body.data).toEqual({ count: 0 });
  });

  it('gives a paused webhook no new deliveries', async () => {
    const { key } = await t.newKey();
    const paused = await register(t.url, key, `${t.receiver.url}/paused`);
    const marker = await register(t.url, key, `${t.receiver.url}/marker`);
    await call(`${t.url}/config/webhooks/${paused.id}/`, {
      method: 'PATCH',
      key,
      body: { status: 'DISABLED' },
    });
    await placeOrder(t.url, key);
    await waitFor(async () => (await deliveries(t.url, key, marker.id)).length === 1 || null, {
      what: 'marker delivery',
    });
    expect(await deliveries(t.url, key, paused.id)).toEqual([]);
    expect(t.receiver.at('/paused')).toEqual([]);
  });

  it("holds a paused webhook's due retries, which go out once it is resumed", async () => {
    let resumed = false;
    // The first attempt fails, and slowly: the webhook is paused while it is in flight.
    t.receiver.route('/held', () => (resumed ? { status: 200 } : { status: 500, delayMs: 500 }));
    // The barrier fails twice, in step with /held's first attempt: its third attempt comes after
    // /held's retry has been due for a whole retry delay, so claims have passed /held by then.
    t.receiver.route('/barrier', (hook) =>
      hook.body.delivery_attempt === 1
        ? { status: 500, delayMs: 500 }
        : { status: hook.body.delivery_attempt === 2 ? 500 : 200 },
    );
    const { key } = await t.newKey();
    const held = await register(t.url, key, `${t.receiver.url}/held`);
    const barrier = await register(t.url, key, `${t.receiver.url}/barrier`);
    await placeOrder(t.url, key);
    await waitFor(() => t.receiver.at('/held').length === 1 || null, { what: 'the first attempt to /held' });
    await call(`${t.url}/config/webhooks/${held.id}/`, {
      method: 'PATCH',
      key,
      body: { status: 'DISABLED' },
    });
    await waitFor(
      async () => (await deliveries(t.url, key, barrier.id, '?status=delivered')).length === 1 || null,
      { what: 'the barrier delivered at its third attempt' },
    );
    expect(t.receiver.at('/held')).toHaveLength(1);
    const [pending] = await deliveries(t.url, key, held.id);
    expect(pending).toMatchObject({ status: 'pending' });
    expect(pending?.attempts).toHaveLength(1);

    resumed = true;
    await call(`${t.url}/config/webhooks/${held.id}/`, {
      method: 'PATCH',
      key,
      body: { status: 'ACTIVE' },
    });
    const retry = await waitFor(() => t.receiver.at('/held')[1], { what: 'the retry after resuming' });
    expect(retry.body.delivery_attempt).toBe(2);
  });

  it('moves pending deliveries to the new registration on rotation and signs them with the new secret', async () => {
    let open = false;
    t.receiver.route('/rotating', () => ({ status: open ? 200 : 500 }));
    const { key } = await t.newKey();
    const old = await register(t.url, key, `${t.receiver.url}/rotating`);
    await placeOrder(t.url, key);
    await waitFor(() => t.receiver.at('/rotating').length >= 1 || null, { what: 'first failure' });
    const rotated = await register(t.url, key, `${t.receiver.url}/rotating`);
    open = true;
    const { verifyWebhook } = await import('@seller-api/webhook-verify');
    const ok = await waitFor(
      () =>
        t.receiver.at('/rotating').find((h) => {
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
    expect(await deliveries(t.url, key, rotated.id)).toHaveLength(1);
    expect(old.id).not.toBe(rotated.id);
  });

  it('does not follow redirects: a 3xx is a failed attempt and the other address gets nothing', async () => {
    t.receiver.route('/moved', () => ({ status: 302, headers: { location: `${t.receiver.url}/elsewhere` } }));
    const { key } = await t.newKey();
    const hook = await register(t.url, key, `${t.receiver.url}/moved`);
    await placeOrder(t.url, key);
    const [delivery] = await waitFor(
      async () => {
        const list = await deliveries(t.url, key, hook.id);
        return (list[0]?.attempts.length ?? 0) >= 2 ? list : null;
      },
      { what: 'retried after a redirect' },
    );
    expect(delivery?.attempts[0]).toMatchObject({ response_status: 302 });
    expect(t.receiver.at('/elsewhere')).toEqual([]);
  });
});
