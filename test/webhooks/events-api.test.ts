import { randomUUID } from 'node:crypto';
import amqp from 'amqplib';
import {
  EventListResponse,
  EventRecordResponse,
  type EventName,
  type EventRecord,
  type ValidationErrorBody,
} from '@seller-api/contracts';
import { eventIdOf } from '../../services/webhook-dispatcher/src/domain/events';
import { INTAKE_QUEUE, SOURCES } from '../../services/webhook-dispatcher/src/events/topology';
import { keepHistory } from '../../services/webhook-dispatcher/src/jobs/history-retention';
import { testEnv } from '../support/env';
import { call, uniqueEmail } from '../support/system';
import { useSystem } from '../support/use-system';
import { waitFor } from '../support/wait';
import { placeOrder, register } from './helpers';

const env = testEnv();
const t = useSystem({ receiver: true });

async function listEvents(key: string, query = '') {
  const res = await call(`${t.url}/events/${query}`, { key });
  if (res.status !== 200) throw new Error(`events not listed: ${res.status} ${res.text}`);
  return EventListResponse.parse(res.body).data;
}

/** Every event of the list, following next_cursor from page to page. */
async function allPages(key: string, query: string, limit: number) {
  const seen: EventRecord[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const separator = query ? '&' : '';
    const page = await listEvents(
      key,
      `?${query}${separator}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
    );
    expect(page.results.length).toBeLessThanOrEqual(limit);
    seen.push(...page.results);
    cursor = page.next_cursor;
    pages += 1;
  } while (cursor);
  return { seen, pages };
}

const isNewestFirst = (events: EventRecord[]) =>
  events.every(
    (e, i) =>
      i === 0 ||
      Date.parse((events[i - 1] as EventRecord).occurred_at) > Date.parse(e.occurred_at) ||
      ((events[i - 1] as EventRecord).occurred_at === e.occurred_at &&
        (events[i - 1] as EventRecord).id > e.id),
  );

/** Publishes public events straight to the dispatcher's intake, as a producer's outbox would. */
async function publish(
  sellerId: string,
  events: Array<{
    event: EventName;
    occurredAt: Date;
    data: unknown;
    environment?: 'test' | 'live';
    messageId?: string;
  }>,
) {
  const connection = await amqp.connect(env.AMQP_URL as string);
  try {
    const channel = await connection.createConfirmChannel();
    for (const e of events) {
      channel.publish(
        // Each producer's exchange carries its own events (the dispatcher's topology).
        `${env.AMQP_NAMESPACE}${e.event.startsWith('withdrawal.') ? SOURCES.withdrawals : SOURCES.orders}`,
        e.event,
        Buffer.from(JSON.stringify(e.data)),
        {
          messageId: e.messageId ?? randomUUID(),
          headers: {
            'x-seller-id': sellerId,
            'x-environment': e.environment ?? 'test',
            'x-occurred-at': e.occurredAt.toISOString(),
          },
        },
      );
    }
    await channel.waitForConfirms();
  } finally {
    await connection.close();
  }
}

const orderData = (uuid: string) => ({
  order: {
    uuid,
    status: 'PAID',
    method: 'PIX',
    gross_amount: 1000,
    shipping_amount: 0,
    discount_amount: 0,
    fee_amount: 50,
    net_amount: 950,
    created_at: '2026-11-01T00:00:00.000Z',
    paid_at: '2026-11-01T00:01:00.000Z',
  },
  seller: { name: 'Loja' },
  customer: { name: 'Maria', tax_id: '529.***.***-25', tax_id_type: 'CPF', email: 'mar**@example.com' },
  items: [],
});

const withdrawalData = (uuid: string) => ({
  withdrawal: {
    uuid,
    status: 'PAID',
    gross_amount: 1000,
    requested_at: '2026-11-01T00:00:00.000Z',
    decided_at: '2026-11-01T00:01:00.000Z',
  },
  bank_data: { pix_key: 'joh*****@example.com', pix_key_type: 'email' },
  seller: { name: 'Loja' },
});

describe('events of a paid order', () => {
  let key: string;
  let order: string;
  let hookId: string;

  beforeAll(async () => {
    ({ key } = await t.newKey());
    hookId = (await register(t.url, key, `${t.receiver.url}/events-global`, 'order.paid')).id;
    order = await placeOrder(t.url, key, { postback_url: `${t.receiver.url}/events-postback` });
    const paid = await call(`${t.url}/sandbox/orders/${order}/pay/`, { method: 'POST', key });
    expect(paid.status).toBe(200);
  });

  const hitsOf = (path: string) =>
    t.receiver.received.filter(
      (h) =>
        h.path === path &&
        h.body.event === 'order.paid' &&
        (h.body.data.order as { uuid?: string } | undefined)?.uuid === order,
    );

  it('lists every event of the order, newest first, each with the data its deliveries carry', async () => {
    const [webhookHit] = await waitFor(
      () => hitsOf('/events-global').length > 0 && hitsOf('/events-global'),
      {
        what: 'the order.paid webhook',
      },
    );
    const [postbackHit] = await waitFor(
      () => hitsOf('/events-postback').length > 0 && hitsOf('/events-postback'),
      { what: 'the order.paid postback' },
    );
    // Both deliveries are recorded as delivered once the receiver has answered.
    const paid = await waitFor(
      async () => {
        const { results } = await listEvents(key, `?order_uuid=${order}&type=order.paid`);
        const event = results[0];
        return (
          event?.deliveries.length === 2 && event.deliveries.every((d) => d.status === 'delivered') && event
        );
      },
      { what: 'order.paid delivered twice' },
    );
    expect(paid.data).toEqual(webhookHit?.body.data);
    expect(paid.data).toEqual(postbackHit?.body.data);
    expect(paid.occurred_at).toBe(webhookHit?.body.occurred_at);
    expect(paid.id).toMatch(/^evt_[A-Za-z0-9]{24}$/);
    // One delivery per destination, each with the X-Webhook-Event-Id that destination received.
    expect(paid.deliveries).toEqual([
      {
        id: expect.any(String),
        webhook_id: hookId,
        event_id: webhookHit?.headers['x-webhook-event-id'],
        status: 'delivered',
      },
      {
        id: expect.any(String),
        webhook_id: null,
        event_id: postbackHit?.headers['x-webhook-event-id'],
        status: 'delivered',
      },
    ]);

    // payment.approved comes from payments' outbox and order.paid from orders': either may be
    // recorded first, so wait until both are.
    const results = await waitFor(
      async () => {
        const list = (await listEvents(key, `?order_uuid=${order}`)).results;
        return list.some((e) => e.event === 'payment.approved') && list;
      },
      { what: 'payment.approved recorded' },
    );
    expect(isNewestFirst(results)).toBe(true);
    const names = results.map((e) => e.event);
    expect(names).toEqual(expect.arrayContaining(['order.created', 'order.paid', 'payment.approved']));
    // An event nobody subscribed to is recorded too; the postback gets order events only.
    const approved = results.find((e) => e.event === 'payment.approved');
    expect(approved?.deliveries).toEqual([]);
    const created = results.find((e) => e.event === 'order.created');
    expect(created?.deliveries).toEqual([
      expect.objectContaining({ webhook_id: null, status: expect.stringMatching(/pending|delivered/) }),
    ]);

    const one = await call(`${t.url}/events/${paid.id}/`, { key });
    expect(one.status).toBe(200);
    expect(EventRecordResponse.parse(one.body).data).toEqual(paid);
  });

  it('hides the events from a live key and from another seller', async () => {
    const { results } = await waitFor(
      async () => {
        const page = await listEvents(key, `?order_uuid=${order}&type=order.created`);
        return page.results.length > 0 && page;
      },
      { what: 'order.created' },
    );
    const id = (results[0] as EventRecord).id;

    // The same seller's live key: test events do not exist for it.
    const email = uniqueEmail('events-env');
    const test = await t.newKey({ email });
    const live = await t.newKey({ email, environment: 'live' });
    const own = await placeOrder(t.url, test.key);
    await waitFor(async () => (await listEvents(test.key, `?order_uuid=${own}`)).results.length > 0, {
      what: 'the test order event',
    });
    expect((await listEvents(live.key)).results).toEqual([]);
    const ownId = (await listEvents(test.key)).results[0]?.id;
    const fromLive = await call(`${t.url}/events/${ownId}/`, { key: live.key });
    expect(fromLive.status).toBe(404);
    expect(fromLive.body).toMatchObject({ code: 'not_found', message: 'Event not found.' });

    // Another seller's event, same environment: forbidden, as every other object of another seller.
    const other = await call(`${t.url}/events/${id}/`, { key: test.key });
    expect(other.status).toBe(403);
    expect(other.body).toMatchObject({ code: 'forbidden' });
    expect((await listEvents(test.key, `?order_uuid=${order}`)).results).toEqual([]);

    const unknown = await call(`${t.url}/events/evt_000000000000000000000000/`, { key });
    expect(unknown.status).toBe(404);
    const malformed = await call(`${t.url}/events/not-an-event/`, { key });
    expect(malformed.status).toBe(400);
    expect(malformed.body).toMatchObject({ code: 'validation_error', data: { id: expect.any(Array) } });
    expect((await call(`${t.url}/events/`)).status).toBe(401);
  });
});

describe('filters and pages', () => {
  let key: string;
  let sellerId: string;
  // Two days ago, well within the retention, on a whole minute.
  const base = Math.floor((Date.now() - 2 * 86_400_000) / 60_000) * 60_000;
  const at = (minutes: number) => new Date(base + minutes * 60_000);
  const orders = [randomUUID(), randomUUID()];
  // 14 events a minute apart, from three names, about two orders and none.
  const plan: Array<{ event: EventName; minute: number; order: string | null }> = Array.from(
    { length: 14 },
    (_, i) => {
      const event: EventName = (['order.created', 'order.paid', 'withdrawal.paid'] as const)[
        i % 3
      ] as EventName;
      return { event, minute: i, order: event === 'withdrawal.paid' ? null : (orders[i % 2] as string) };
    },
  );

  beforeAll(async () => {
    const made = await t.newKey();
    key = made.key;
    sellerId = made.sellerId as string;
    await publish(
      sellerId,
      plan.map((p) => ({
        event: p.event,
        occurredAt: at(p.minute),
        data: p.order ? orderData(p.order) : withdrawalData(randomUUID()),
      })),
    );
    // The same seller's live events never show to the test key.
    await publish(sellerId, [
      { event: 'order.paid', occurredAt: at(30), data: orderData(orders[0] as string), environment: 'live' },
    ]);
    await waitFor(async () => (await listEvents(key, '?limit=100')).results.length === plan.length, {
      what: 'every published event',
    });
  });

  it('lists newest first and pages through all of them with cursors', async () => {
    const { results } = await listEvents(key, '?limit=100');
    expect(results.map((e) => e.occurred_at)).toEqual(
      [...plan].reverse().map((p) => at(p.minute).toISOString()),
    );
    const { seen, pages } = await allPages(key, '', 4);
    expect(pages).toBe(4);
    expect(seen.map((e) => e.id)).toEqual(results.map((e) => e.id));

    const tampered = await call(`${t.url}/events/?cursor=abc`, { key });
    expect(tampered.status).toBe(400);
    expect(tampered.body).toMatchObject({ code: 'validation_error', data: { cursor: expect.any(Array) } });
  });

  it('filters by one or several names, repeated or comma-separated, paging within the filter', async () => {
    const paid = await listEvents(key, '?type=order.paid&limit=100');
    expect(paid.results.map((e) => e.occurred_at)).toEqual(
      plan
        .filter((p) => p.event === 'order.paid')
        .reverse()
        .map((p) => at(p.minute).toISOString()),
    );
    const wanted = plan.filter((p) => p.event !== 'order.created').reverse();
    for (const query of ['type=order.paid,withdrawal.paid', 'type=withdrawal.paid&type=order.paid']) {
      const { seen } = await allPages(key, query, 3);
      expect(seen.map((e) => `${e.event}@${e.occurred_at}`)).toEqual(
        wanted.map((p) => `${p.event}@${at(p.minute).toISOString()}`),
      );
    }

    const bad = await call(`${t.url}/events/?type=order.paid,order.shipped`, { key });
    expect(bad.status).toBe(400);
    expect(bad.body as ValidationErrorBody).toMatchObject({
      code: 'validation_error',
      data: { type: ['Unknown event name: order.shipped.'] },
    });
  });

  /** The same instant written with a -03:00 offset. */
  const inBrasilia = (instant: Date) =>
    new Date(instant.getTime() - 3 * 3_600_000).toISOString().replace('Z', '-03:00');

  it('filters by when events occurred and by order, alone or with names', async () => {
    const window = await listEvents(
      key,
      `?created_gte=${encodeURIComponent(at(3).toISOString())}&created_lte=${encodeURIComponent(inBrasilia(at(6)))}`,
    );
    expect(window.results.map((e) => e.occurred_at)).toEqual([6, 5, 4, 3].map((m) => at(m).toISOString()));

    const ofOrder = await allPages(key, `order_uuid=${orders[1]}`, 2);
    const expected = plan.filter((p) => p.order === orders[1]).reverse();
    expect(ofOrder.seen.map((e) => e.occurred_at)).toEqual(expected.map((p) => at(p.minute).toISOString()));

    const paidOfOrder = await listEvents(key, `?order_uuid=${orders[1]}&type=order.paid,withdrawal.paid`);
    expect(paidOfOrder.results.map((e) => e.occurred_at)).toEqual(
      expected.filter((p) => p.event === 'order.paid').map((p) => at(p.minute).toISOString()),
    );
    expect((await listEvents(key, `?order_uuid=${randomUUID()}`)).results).toEqual([]);

    const reversed = await call(
      `${t.url}/events/?created_gte=${encodeURIComponent(at(5).toISOString())}&created_lte=${encodeURIComponent(at(1).toISOString())}`,
      { key },
    );
    expect(reversed.status).toBe(400);
    expect(reversed.body).toMatchObject({ data: { created_lte: ['Must not be before created_gte.'] } });
  });
});

describe('recording', () => {
  it('records an event once however often its message arrives', async () => {
    const { key, sellerId } = await t.newKey();
    const message = { event: 'withdrawal.paid' as const, occurredAt: new Date(), messageId: randomUUID() };
    let handled = 0;
    const count = (queue: string, outcome: string, id: unknown) => {
      if (queue === INTAKE_QUEUE && outcome === 'processed' && id === message.messageId) handled += 1;
    };
    t.system.dispatcher.runtime.broker.on('handled', count);
    try {
      // The same message twice, as after an acknowledgement lost with its connection.
      const data = withdrawalData(randomUUID());
      await publish(sellerId as string, [
        { ...message, data },
        { ...message, data },
      ]);
      await waitFor(() => handled >= 2, { what: 'both copies handled' });
    } finally {
      t.system.dispatcher.runtime.broker.off('handled', count);
    }
    const { results } = await listEvents(key, '?limit=100');
    expect(results.map((e) => e.event)).toEqual(['withdrawal.paid']);
  });
});

describe('retention', () => {
  it('records no event older than the retention, and shows none past it', async () => {
    const { key, sellerId } = (await t.newKey()) as { key: string; sellerId: string };
    const day = 86_400_000;
    const now = Date.now();
    const published = [45, 31, 29, 1].map((age) => ({
      event: 'withdrawal.paid' as const,
      occurredAt: new Date(now - age * day),
      data: withdrawalData(randomUUID()),
      messageId: randomUUID(),
    }));
    const ids = new Set<string>(published.map((e) => e.messageId));
    let handled = 0;
    const count = (queue: string, outcome: string, id: unknown) => {
      if (queue === INTAKE_QUEUE && outcome === 'processed' && ids.has(String(id))) handled += 1;
    };
    t.system.dispatcher.runtime.broker.on('handled', count);
    try {
      await publish(sellerId, published);
      await waitFor(() => handled >= published.length, { what: 'the published events handled' });
    } finally {
      t.system.dispatcher.runtime.broker.off('handled', count);
    }
    const { results } = await listEvents(key, '?limit=100');
    expect(results.map((e) => e.id)).toEqual(
      published
        .slice(2)
        .reverse()
        .map((e) => eventIdOf(e.messageId)),
    );
    const old = await call(`${t.url}/events/${eventIdOf(published[0]?.messageId as string)}/`, { key });
    expect(old.status).toBe(404);
  });

  it("runs in every dispatcher, from its start, with that dispatcher's EVENTS_RETENTION_DAYS", async () => {
    const { key, sellerId } = await t.newKey();
    const day = 86_400_000;
    await publish(
      sellerId as string,
      [12, 3].map((age) => ({
        event: 'withdrawal.paid' as const,
        occurredAt: new Date(Date.now() - age * day),
        data: withdrawalData(randomUUID()),
      })),
    );
    const [recent] = await waitFor(
      async () => {
        const { results } = await listEvents(key);
        return results.length === 2 && results;
      },
      { what: 'the published events' },
    );
    try {
      // Its start drops the days older than 10, the 12-day-old event's with them.
      await t.system.startDispatcherReplica({ EVENTS_RETENTION_DAYS: '10' });
      await waitFor(async () => (await listEvents(key)).results.length === 1, {
        what: 'the 12-day-old event dropped',
      });
      expect((await listEvents(key)).results.map((e) => e.id)).toEqual([recent?.id]);
    } finally {
      // The other dispatcher's days back, as its next run would make them.
      await keepHistory(t.system.dispatcher.runtime, { events: 30, deliveries: 90 }, new Date());
    }
  });
});
