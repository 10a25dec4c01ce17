import { isDeepStrictEqual } from 'node:util';
import { WebhooksHealth } from '@seller-api/contracts';
import { call } from '../support/system';
import { useSystem } from '../support/use-system';
import { waitFor } from '../support/wait';
import { deliveries, placeOrder, register } from './helpers';

/**
 * GET /config/webhooks/health/ (docs/webhooks.md, "Delivery health"): the last 24 hours of
 * deliveries by state, per webhook and for postbacks, through the gateway with the real dispatcher.
 */
// `/flaky` fails its first attempt at once and holds every later one 2 s before failing it: its
// delivery stays pending after a failed attempt (retrying) for several seconds before it is dead.
const fail = () => ({ status: 500 });
const t = useSystem({
  receiver: {
    routes: {
      '/fail': fail,
      '/pb-fail': fail,
      '/flaky': (hook) =>
        hook.body.delivery_attempt === 1 ? { status: 500 } : { status: 500, delayMs: 2000 },
    },
  },
});

async function health(key: string) {
  const res = await call(`${t.url}/config/webhooks/health/`, { key });
  if (res.status !== 200) throw new Error(`health: ${res.status} ${res.text}`);
  return WebhooksHealth.parse(res.body.data);
}

/** Waits until the seller's health, counts only, is `expected`; answers the last one read. */
async function healthBecomes(key: string, expected: unknown) {
  let last: unknown = null;
  try {
    return await waitFor(
      async () => {
        const h = await health(key);
        last = { webhooks: h.webhooks, postbacks: h.postbacks };
        return isDeepStrictEqual(last, expected) ? h : null;
      },
      { timeoutMs: 30_000, what: 'webhook health' },
    );
  } catch (err) {
    throw new Error(`${(err as Error).message}; last ${JSON.stringify(last)}`, { cause: err });
  }
}

const zero = { delivered: 0, retrying: 0, dead: 0 };

describe('webhook health', () => {
  it('counts each webhook’s and the postbacks’ deliveries of the last 24 hours by state', async () => {
    const { key, email } = await t.newKey();
    const ok = await register(t.url, key, `${t.receiver.url}/ok`, 'order.created');
    const failing = await register(t.url, key, `${t.receiver.url}/fail`, 'order.created');
    const flaky = await register(t.url, key, `${t.receiver.url}/flaky`, 'order.paid');
    const paused = await register(t.url, key, `${t.receiver.url}/ok`, 'order.cancelled');
    const deleted = await register(t.url, key, `${t.receiver.url}/ok`, 'order.expired');
    const pause = await call(`${t.url}/config/webhooks/${paused.id}/`, {
      method: 'PATCH',
      key,
      body: { status: 'DISABLED' },
    });
    expect(pause.status).toBe(200);
    expect((await call(`${t.url}/config/webhooks/${deleted.id}/`, { method: 'DELETE', key })).status).toBe(
      204,
    );
    // Another seller's webhook and postback on the same receiver count for that seller only.
    const other = await t.newKey();
    const theirs = await register(t.url, other.key, `${t.receiver.url}/ok`, 'order.created');
    await placeOrder(t.url, other.key, { postback_url: `${t.receiver.url}/pb-fail` });

    const paidLater = await placeOrder(t.url, key, { postback_url: `${t.receiver.url}/pb-ok` });
    await placeOrder(t.url, key, { postback_url: `${t.receiver.url}/pb-fail` });

    // Newest registration first, every one of them, those without deliveries included.
    const row = (hook: { id: string; url: string; event: string }, status: string, counts: object) => ({
      webhook_id: hook.id,
      url: hook.url,
      event: hook.event,
      status,
      ...counts,
    });
    await healthBecomes(key, {
      webhooks: [
        row(paused, 'DISABLED', zero),
        row(flaky, 'ACTIVE', zero),
        row(failing, 'ACTIVE', { ...zero, dead: 2 }),
        row(ok, 'ACTIVE', { ...zero, delivered: 2 }),
      ],
      postbacks: { delivered: 1, retrying: 0, dead: 1 },
    });
    await healthBecomes(other.key, {
      webhooks: [row(theirs, 'ACTIVE', { ...zero, delivered: 1 })],
      postbacks: { ...zero, dead: 1 },
    });

    // A delivery created more than 24 hours ago is out of the window.
    const [older] = await deliveries(t.url, key, ok.id);
    await t.system.dispatcher.runtime.sql.query(
      `update webhooks.deliveries set created_at = now() - interval '25 hours' where id = $1`,
      [older?.id],
    );

    // A payment: order.paid to the flaky webhook, which fails and keeps retrying, and to the postback.
    const pay = await call(`${t.url}/sandbox/orders/${paidLater}/pay/`, { method: 'POST', key });
    expect(pay.status).toBe(200);
    const now = Date.now();
    const seen = await healthBecomes(key, {
      webhooks: [
        row(paused, 'DISABLED', zero),
        row(flaky, 'ACTIVE', { ...zero, retrying: 1 }),
        row(failing, 'ACTIVE', { ...zero, dead: 2 }),
        row(ok, 'ACTIVE', { ...zero, delivered: 1 }),
      ],
      postbacks: { delivered: 2, retrying: 0, dead: 1 },
    });
    expect(Date.parse(seen.until)).toBeGreaterThanOrEqual(now - 1000);
    expect(Date.parse(seen.until) - Date.parse(seen.since)).toBe(24 * 3_600_000);

    // The seller's live environment has none of it.
    const live = await t.newKey({ email, environment: 'live' });
    expect(await health(live.key)).toMatchObject({ webhooks: [], postbacks: zero });
  });

  it('is a route of its own, not a webhook id, and needs a key', async () => {
    const { key } = await t.newKey();
    const res = await call(`${t.url}/config/webhooks/health/`, { key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      message: 'Webhook health retrieved.',
      data: { since: expect.any(String), until: expect.any(String), webhooks: [], postbacks: zero },
    });
    expect((await call(`${t.url}/config/webhooks/health/`)).status).toBe(401);
    // Other methods on the path are those of a webhook id, which `health` is not.
    const patch = await call(`${t.url}/config/webhooks/health/`, {
      method: 'PATCH',
      key,
      body: { status: 'DISABLED' },
    });
    expect(patch.status).toBe(400);
  });
});
