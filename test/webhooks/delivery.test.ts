import { randomUUID } from 'node:crypto';
import amqp from 'amqplib';
import { OrderEventData } from '@seller-api/contracts';
import { targetRefusalMessage } from '@seller-api/service-kit';
import { verifyWebhook } from '@seller-api/webhook-verify';
import { INTAKE_QUEUE, SOURCES } from '../../services/webhook-dispatcher/src/events/topology';
import { testEnv } from '../support/env';
import { call } from '../support/system';
import { useSystem } from '../support/use-system';
import { waitFor } from '../support/wait';
import { deliveries, placeOrder, register } from './helpers';

const env = testEnv();
const t = useSystem({ receiver: true });

const forOrder = (uuid: string, event: string) =>
  t.receiver.received.filter(
    (h) => h.body.event === event && (h.body.data.order as { uuid?: string } | undefined)?.uuid === uuid,
  );

describe('deliveries to global webhooks', () => {
  it('sends the envelope with the documented headers, signed, verifiable with the receiver helper', async () => {
    const { key } = await t.newKey();
    const hook = await register(t.url, key, `${t.receiver.url}/global`, 'order.created');
    const order = await placeOrder(t.url, key);
    const [hit] = await waitFor(
      () => (forOrder(order, 'order.created').length ? forOrder(order, 'order.created') : null),
      { what: 'delivery' },
    );
    expect(hit?.path).toBe('/global');
    expect(hit?.headers).toMatchObject({
      'content-type': 'application/json',
      'user-agent': 'Webhooks/1.0',
      'x-webhook-event': 'order.created',
      'x-webhook-event-id': expect.stringMatching(/^evt_[A-Za-z0-9]+$/),
      'x-webhook-timestamp': expect.stringMatching(/^\d{10}$/),
      'x-webhook-signature': expect.stringMatching(/^sha256=[0-9a-f]{64}$/),
    });
    const verified = verifyWebhook({
      secret: hook.secret,
      headers: hit?.headers ?? {},
      rawBody: hit?.rawBody ?? '',
    });
    expect(verified.event).toBe('order.created');
    expect(hit?.body).toEqual({
      event: 'order.created',
      occurred_at: expect.stringMatching(/\.\d{3}Z$/),
      delivery_attempt: 1,
      data: expect.any(Object),
    });
    // Masked as docs/events.md says; no internal ids.
    const data = OrderEventData.parse(hit?.body.data);
    expect(data.customer).toMatchObject({ tax_id: '529.***.***-25', email: 'mar********@example.com' });
    expect(hit?.rawBody).not.toMatch(/seller_id|52998224725/);
    expect(() =>
      verifyWebhook({ secret: 'whsec_wrong', headers: hit?.headers ?? {}, rawBody: hit?.rawBody ?? '' }),
    ).toThrow();

    const [delivery] = await deliveries(t.url, key, hook.id);
    expect(delivery).toMatchObject({
      event: 'order.created',
      event_id: hit?.headers['x-webhook-event-id'],
      status: 'delivered',
      next_attempt_at: null,
    });
    expect(delivery?.attempts).toEqual([
      {
        attempt: 1,
        started_at: expect.any(String),
        duration_ms: expect.any(Number),
        response_status: 200,
        response_body: 'ok',
        error: null,
      },
    ]);
  });

  it('sends compact JSON, the same bytes on a resend but for delivery_attempt', async () => {
    const { key } = await t.newKey();
    const hook = await register(t.url, key, `${t.receiver.url}/compact`, 'order.created');
    const order = await placeOrder(t.url, key, { postback_url: null });
    const first = await waitFor(() => forOrder(order, 'order.created')[0], { what: 'first delivery' });
    const raw = first.rawBody;
    // One style throughout, as the API answers: no whitespace between tokens, in the data too.
    expect(raw).toBe(JSON.stringify(JSON.parse(raw)));
    expect(raw).toContain('"customer":{"name":"Maria Silva",');

    const [delivery] = await deliveries(t.url, key, hook.id);
    const resent = await call(`${t.url}/config/webhooks/${hook.id}/deliveries/${delivery?.id}/resend/`, {
      method: 'POST',
      key,
    });
    expect(resent.status).toBe(200);
    const second = await waitFor(() => forOrder(order, 'order.created')[1], { what: 'resent delivery' });
    expect(second.headers['x-webhook-event-id']).toBe(first.headers['x-webhook-event-id']);
    expect(second.rawBody).toBe(raw.replace('"delivery_attempt":1,', '"delivery_attempt":2,'));
    for (const hit of [first, second]) {
      expect(verifyWebhook({ secret: hook.secret, headers: hit.headers, rawBody: hit.rawBody }).event).toBe(
        'order.created',
      );
    }
  });

  it('sends each event only to webhooks of that event, seller and environment', async () => {
    const mine = await t.newKey();
    const other = await t.newKey();
    await register(t.url, mine.key, `${t.receiver.url}/mine-paid`, 'order.paid');
    await register(t.url, other.key, `${t.receiver.url}/other-created`, 'order.created');
    const marker = await register(t.url, mine.key, `${t.receiver.url}/mine-created`, 'order.created');
    const order = await placeOrder(t.url, mine.key);
    await waitFor(() => forOrder(order, 'order.created').length > 0, { what: 'marker delivery' });
    const paths = t.receiver.received
      .filter((h) => (h.body.data.order as { uuid?: string } | undefined)?.uuid === order)
      .map((h) => h.path);
    expect(paths).toEqual(['/mine-created']);
    expect(await deliveries(t.url, mine.key, marker.id)).toHaveLength(1);
  });
});

describe('postback_url', () => {
  it('gets the order events of its order, unsigned, while global webhooks keep theirs', async () => {
    const { key } = await t.newKey();
    await register(t.url, key, `${t.receiver.url}/global-shipped`, 'order_item.shipped');
    const product = await call(`${t.url}/sellers/products/`, {
      method: 'POST',
      key,
      body: { name: 'Livro', price: 2000, type: 'PHYSICAL' },
    });
    const productId = (product.body.data as { uuid: string }).uuid;
    const res = await call(`${t.url}/sellers/orders/`, {
      method: 'POST',
      key,
      body: {
        customer: {
          name: 'Ana',
          tax_id: '52998224725',
          email: 'ana@example.com',
          address: { street: 'Rua A', neighborhood: 'B', city: 'C', state: 'SP', postal_code: '01001000' },
        },
        items: [{ product_uuid: productId, quantity: 1 }],
        payment: {},
        postback_url: `${t.receiver.url}/postback?token=s3cr3t`,
      },
    });
    const order = (res.body.data as { uuid: string }).uuid;
    await call(`${t.url}/sellers/orders/${order}/tracking/`, {
      method: 'PATCH',
      key,
      body: { tracking_code: 'BR1', shipping_status: 'SHIPPED' },
    });
    const postbacks = await waitFor(
      () => {
        const hits = t.receiver.received.filter(
          (h) =>
            h.path === '/postback?token=s3cr3t' && (h.body.data.order as { uuid?: string })?.uuid === order,
        );
        return hits.length >= 2 ? hits : null;
      },
      { what: 'postbacks' },
    );
    expect(postbacks.map((h) => h.body.event).sort()).toEqual(['order.created', 'order_item.shipped']);
    for (const hit of postbacks) {
      expect(hit.headers['x-webhook-signature']).toBeUndefined();
      expect(hit.headers['x-webhook-timestamp']).toBeUndefined();
      expect(hit.headers['x-webhook-event-id']).toMatch(/^evt_/);
      expect(hit.headers['user-agent']).toBe('Webhooks/1.0');
    }
    const global = await waitFor(
      () =>
        forOrder(order, 'order_item.shipped').filter((h) => h.path === '/global-shipped').length === 1 ||
        null,
      { what: 'global shipped' },
    );
    expect(global).toBe(true);
    // payment.* events are not order events: the postback never gets them.
    expect(
      t.receiver.received.filter(
        (h) => h.path.startsWith('/postback') && h.body.event.startsWith('payment.'),
      ),
    ).toEqual([]);
  });
});

describe('intake', () => {
  it('fans a burst of events out to every webhook once, and a message the broker delivers twice only once', async () => {
    const { key, sellerId } = await t.newKey();
    const first = await register(t.url, key, `${t.receiver.url}/burst-a`, 'order.created');
    await register(t.url, key, `${t.receiver.url}/burst-b`, 'order.created');
    // Orders created together reach the intake together, and are stored in batches.
    const orders = await Promise.all(Array.from({ length: 12 }, () => placeOrder(t.url, key)));
    await waitFor(() => orders.every((order) => forOrder(order, 'order.created').length >= 2), {
      what: 'both deliveries of every order',
    });
    for (const order of orders) {
      expect(
        forOrder(order, 'order.created')
          .map((h) => h.path)
          .sort(),
      ).toEqual(['/burst-a', '/burst-b']);
    }

    // The same message twice, as after an acknowledgement lost with its connection.
    const data = forOrder(orders[0] as string, 'order.created')[0]?.body.data;
    const messageId = randomUUID();
    let handled = 0;
    const count = (queue: string, outcome: string, id: unknown) => {
      if (queue === INTAKE_QUEUE && outcome === 'processed' && id === messageId) handled += 1;
    };
    t.system.dispatcher.runtime.broker.on('handled', count);
    const connection = await amqp.connect(env.AMQP_URL as string);
    try {
      const channel = await connection.createConfirmChannel();
      for (let i = 0; i < 2; i += 1) {
        channel.publish(
          `${env.AMQP_NAMESPACE}${SOURCES.orders}`,
          'order.created',
          Buffer.from(JSON.stringify(data)),
          { messageId, headers: { 'x-seller-id': sellerId, 'x-environment': 'test' } },
        );
      }
      await channel.waitForConfirms();
      await waitFor(() => handled >= 2, { what: 'both copies handled' });
    } finally {
      t.system.dispatcher.runtime.broker.off('handled', count);
      await connection.close();
    }
    expect(await deliveries(t.url, key, first.id, '?limit=100')).toHaveLength(orders.length + 1);
  });
});

describe('targets where the operator allows private ones (the test environment)', () => {
  it('accepts a loopback receiver but refuses documentation, benchmarking, CGNAT and reserved ranges', async () => {
    const { key } = await t.newKey();
    await register(t.url, key, `${t.receiver.url}/loopback-ok`, 'order.paid');
    for (const url of [
      'http://192.0.2.1/x',
      'http://198.51.100.1/x',
      'http://203.0.113.1/x',
      'http://[2001:db8::1]/x',
      'http://198.18.0.1/x',
      'http://240.0.0.1/x',
      'http://100.64.0.1/x',
      'http://169.254.10.10/x',
      'http://[64:ff9b:1::a00:1]/x',
    ]) {
      const res = await call(`${t.url}/config/webhooks/`, {
        method: 'POST',
        key,
        body: { url, event: 'order.paid' },
      });
      expect({ url, status: res.status, body: res.body.data }).toEqual({
        url,
        status: 400,
        body: { url: [targetRefusalMessage({ environment: 'test', allowPrivate: true })] },
      });
    }
    const order = await call(`${t.url}/sellers/orders/`, {
      method: 'POST',
      key,
      body: {
        customer: { name: 'Ana', tax_id: '52998224725', email: 'ana@example.com' },
        payment: { gross_amount: 100 },
        postback_url: 'http://192.0.2.7/cb',
      },
    });
    expect(order.status).toBe(400);
    expect(order.body.data).toEqual({
      postback_url: [targetRefusalMessage({ environment: 'test', allowPrivate: true })],
    });
  });
});
