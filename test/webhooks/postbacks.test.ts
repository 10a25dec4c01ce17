import { randomUUID } from 'node:crypto';
import { DeliveryList } from '@seller-api/contracts';
import { call } from '../support/system';
import { useSystem } from '../support/use-system';
import { waitFor } from '../support/wait';
import { deliveries, placeOrder, register } from './helpers';

// Each test routes a receiver path of its own.
const t = useSystem({ env: { WEBHOOK_RETRY_SCHEDULE: '30ms' }, receiver: true });

const listPath = (order: string, query = '') =>
  `${t.url}/sellers/orders/${order}/postback-deliveries/${query}`;

async function postbacks(key: string, order: string, query = '') {
  const res = await call(listPath(order, query), { key });
  if (res.status !== 200) throw new Error(`postback deliveries not listed: ${res.status} ${res.text}`);
  return DeliveryList.parse(res.body.data);
}

const resend = (key: string, order: string, delivery: string) =>
  call(`${t.url}/sellers/orders/${order}/postback-deliveries/${delivery}/resend/`, {
    method: 'POST',
    key,
  });

describe("an order's postback deliveries", () => {
  it('lists a postback that failed until dead, and a resend delivers it', async () => {
    t.receiver.route('/pb-dead', () => ({ status: 503, body: 'down for maintenance' }));
    const { key } = await t.newKey();
    const order = await placeOrder(t.url, key, { postback_url: `${t.receiver.url}/pb-dead?token=t0k` });
    const dead = await waitFor(async () => (await postbacks(key, order, '?status=dead')).results[0], {
      what: 'a dead postback delivery',
    });
    const hits = t.receiver.at('/pb-dead');
    expect(hits.map((h) => h.body.delivery_attempt)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(dead).toMatchObject({ event: 'order.created', status: 'dead', next_attempt_at: null });
    expect(dead.event_id).toBe(hits[0]?.headers['x-webhook-event-id']);
    expect(dead.attempts).toHaveLength(8);
    expect(dead.attempts[7]).toMatchObject({
      attempt: 8,
      response_status: 503,
      response_body: 'down for maintenance',
      error: null,
    });

    // The receiver is fixed: one more attempt, numbered 9, with the same event id, still unsigned.
    t.receiver.route('/pb-dead', () => ({ status: 200 }));
    const res = await resend(key, order, dead.id);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ message: expect.any(String) });
    const ninth = await waitFor(() => t.receiver.at('/pb-dead')[8], { what: 'attempt 9' });
    expect(ninth.body.delivery_attempt).toBe(9);
    expect(ninth.headers['x-webhook-event-id']).toBe(dead.event_id);
    expect(ninth.headers['x-webhook-signature']).toBeUndefined();
    const delivered = await waitFor(
      async () => (await postbacks(key, order, '?status=delivered')).results[0],
      { what: 'the resent postback delivered' },
    );
    expect(delivered.id).toBe(dead.id);
    expect(delivered.attempts.map((a) => a.response_status)).toEqual([
      503, 503, 503, 503, 503, 503, 503, 503, 200,
    ]);
    expect((await postbacks(key, order, '?status=dead')).results).toEqual([]);
  });

  it('filters by status and pages newest first with a cursor', async () => {
    // order.created is delivered; order.paid fails until dead.
    t.receiver.route('/pb-pages', (hook) => ({ status: hook.body.event === 'order.paid' ? 500 : 200 }));
    const { key } = await t.newKey();
    const order = await placeOrder(t.url, key, { postback_url: `${t.receiver.url}/pb-pages` });
    await waitFor(
      async () => (await postbacks(key, order, '?status=delivered')).results.length === 1 || null,
      {
        what: 'order.created delivered',
      },
    );
    const paid = await call(`${t.url}/sandbox/orders/${order}/pay/`, { method: 'POST', key });
    expect(paid.status).toBe(200);
    await waitFor(async () => (await postbacks(key, order, '?status=dead')).results.length === 1 || null, {
      what: 'order.paid dead',
    });

    const all = await postbacks(key, order);
    expect(all.results.map((d) => d.event)).toEqual(['order.paid', 'order.created']);
    expect(all.next_cursor).toBeNull();
    const first = await postbacks(key, order, '?limit=1');
    expect(first.results.map((d) => d.event)).toEqual(['order.paid']);
    expect(first.next_cursor).toEqual(expect.any(String));
    const second = await postbacks(key, order, `?limit=1&cursor=${first.next_cursor}`);
    expect(second.results.map((d) => d.event)).toEqual(['order.created']);
    expect(second.next_cursor).toBeNull();
    expect((await postbacks(key, order, '?status=dead')).results.map((d) => d.event)).toEqual(['order.paid']);
    expect((await postbacks(key, order, '?status=delivered')).results.map((d) => d.event)).toEqual([
      'order.created',
    ]);
    expect((await postbacks(key, order, '?status=pending')).results).toEqual([]);

    for (const query of ['?status=lost', '?cursor=nonsense', '?limit=0']) {
      const bad = await call(listPath(order, query), { key });
      expect(bad.status).toBe(400);
      expect(bad.body.code).toBe('validation_error');
    }
    expect((await call(`${t.url}/sellers/orders/not-a-uuid/postback-deliveries/`, { key })).status).toBe(400);
  });

  it('answers an order without postback deliveries with an empty list, and keeps them to their seller and environment', async () => {
    const a = await t.newKey();
    // A global webhook of the same event: its delivery is not the order's postback.
    const hook = await register(t.url, a.key, `${t.receiver.url}/pb-global`);
    const order = await placeOrder(t.url, a.key, { postback_url: `${t.receiver.url}/pb-owned` });
    const [postback] = await waitFor(
      async () => {
        const { results } = await postbacks(a.key, order, '?status=delivered');
        return results.length ? results : null;
      },
      { what: 'the postback delivered' },
    );
    const [global] = await waitFor(
      async () => {
        const list = await deliveries(t.url, a.key, hook.id);
        return list.length ? list : null;
      },
      { what: 'the global delivery' },
    );
    expect((await postbacks(a.key, order)).results.map((d) => d.id)).toEqual([postback?.id]);

    // The seller's own order without a postback_url, and an id nobody has: an empty list.
    const plain = await placeOrder(t.url, a.key);
    expect(await postbacks(a.key, plain)).toEqual({ results: [], next_cursor: null });
    expect(await postbacks(a.key, randomUUID())).toEqual({ results: [], next_cursor: null });

    // Another seller, and the same seller's other environment: 404, for the list and the resend.
    const b = await t.newKey();
    const live = await t.newKey({ email: a.email, environment: 'live' });
    for (const other of [b.key, live.key]) {
      const list = await call(listPath(order), { key: other });
      expect(list.status).toBe(404);
      expect(list.body.code).toBe('not_found');
      expect((await resend(other, order, postback!.id)).status).toBe(404);
    }
    // Seller routes: an operator key is refused before the dispatcher is asked.
    const operator = await t.newKey({ role: 'operator' });
    expect((await call(listPath(order), { key: operator.key })).status).toBe(403);
    // Nor can another seller reach it through an order of theirs.
    const theirs = await placeOrder(t.url, b.key, { postback_url: `${t.receiver.url}/pb-theirs` });
    expect((await resend(b.key, theirs, postback!.id)).status).toBe(404);

    // A delivery id of another order of the seller, a global webhook's delivery, an unknown id: 404.
    expect((await resend(a.key, plain, postback!.id)).status).toBe(404);
    expect((await resend(a.key, order, global!.id)).status).toBe(404);
    expect((await resend(a.key, order, randomUUID())).status).toBe(404);
    // Nothing was re-queued by those.
    expect((await postbacks(a.key, order)).results[0]?.attempts).toHaveLength(1);
  });

  it('is reached by a retried resend once under the same Idempotency-Key', async () => {
    t.receiver.route('/pb-keyed', () => ({ status: 200 }));
    const { key } = await t.newKey();
    const order = await placeOrder(t.url, key, { postback_url: `${t.receiver.url}/pb-keyed` });
    const [delivered] = await waitFor(
      async () => {
        const { results } = await postbacks(key, order, '?status=delivered');
        return results.length ? results : null;
      },
      { what: 'the postback delivered' },
    );
    const headers = { 'idempotency-key': randomUUID() };
    const path = `${t.url}/sellers/orders/${order}/postback-deliveries/${delivered!.id}/resend/`;
    const first = await call(path, { method: 'POST', key, headers });
    expect(first.status).toBe(200);
    await waitFor(
      async () =>
        (await postbacks(key, order, '?status=delivered')).results[0]?.attempts.length === 2 || null,
      { what: 'the resent attempt recorded' },
    );
    const again = await call(path, { method: 'POST', key, headers });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    // The replay re-queued nothing: a re-queue would have made it pending again at once.
    const [after] = (await postbacks(key, order)).results;
    expect(after).toMatchObject({ status: 'delivered', attempts: [expect.anything(), expect.anything()] });
    expect(t.receiver.at('/pb-keyed')).toHaveLength(2);
  });
});
