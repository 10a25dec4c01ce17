import { randomUUID } from 'node:crypto';
import amqp from 'amqplib';
import {
  DeliveryList,
  EventListResponse,
  OrderEventData,
  POSTBACK_EVENTS,
  type OrderDueDateDetail,
} from '@seller-api/contracts';
import { verifyWebhook } from '@seller-api/webhook-verify';
import { SOURCES } from '../../services/webhook-dispatcher/src/events/topology';
import { testEnv } from '../support/env';
import { call } from '../support/system';
import { useSystem } from '../support/use-system';
import { waitFor } from '../support/wait';
import { placeOrder, register } from './helpers';

// order.overdue (docs/events.md): published by orders on its exchange like every order event; the
// dispatcher's intake binds order.* there, so it reaches the webhooks of that event and the postback URL.
const env = testEnv();
const t = useSystem({ receiver: true });

const hitsOf = (path: string, event: string) => t.receiver.at(path).filter((h) => h.body.event === event);

const dueDate: OrderDueDateDetail = {
  due_date: '2026-11-20',
  days_after_due: 30,
  fine: { type: 'percent', rate: 200 },
  interest: { type: 'percent_per_month', value: 100, days: 'calendar' },
  rebate: null,
  discount: null,
  calendar: null,
  effective_due_date: '2026-11-20',
  last_payable_date: '2026-12-21',
  overdue: true,
};

describe('order.overdue', () => {
  it('is one of the postback events', () => {
    expect(POSTBACK_EVENTS).toContain('order.overdue');
  });

  it('published on the orders exchange reaches a subscribed webhook, signed, and the postback URL, unsigned', async () => {
    const { key, sellerId } = await t.newKey();
    const overdueHook = await register(t.url, key, `${t.receiver.url}/overdue-hook`, 'order.overdue');
    // A webhook of another order event gets nothing of it.
    await register(t.url, key, `${t.receiver.url}/overdue-other`, 'order.paid');
    const postbackUrl = `${t.receiver.url}/overdue-postback`;
    const order = await placeOrder(t.url, key, { postback_url: postbackUrl });
    // The order's own data as orders sends it (order.created's postback), with the due-date detail.
    const [created] = await waitFor(
      () =>
        hitsOf('/overdue-postback', 'order.created').length
          ? hitsOf('/overdue-postback', 'order.created')
          : null,
      { what: "the order's order.created postback" },
    );
    const base = OrderEventData.parse(created?.body.data);
    const data = {
      ...base,
      order: { ...base.order, status: 'PENDING', due_date: dueDate, amount_paid: null },
    };
    OrderEventData.parse(data);

    const connection = await amqp.connect(env.AMQP_URL as string);
    try {
      const channel = await connection.createConfirmChannel();
      // The headers orders puts on every message about an order (services/orders/src/events/payloads.ts).
      channel.publish(
        `${env.AMQP_NAMESPACE}${SOURCES.orders}`,
        'order.overdue',
        Buffer.from(JSON.stringify(data)),
        {
          messageId: randomUUID(),
          headers: {
            'x-seller-id': sellerId,
            'x-environment': 'test',
            'x-order-uuid': order,
            'x-postback-url': postbackUrl,
          },
        },
      );
      await channel.waitForConfirms();
    } finally {
      await connection.close();
    }

    const [hook] = await waitFor(
      () =>
        hitsOf('/overdue-hook', 'order.overdue').length ? hitsOf('/overdue-hook', 'order.overdue') : null,
      { what: 'order.overdue at the webhook' },
    );
    const [postback] = await waitFor(
      () =>
        hitsOf('/overdue-postback', 'order.overdue').length
          ? hitsOf('/overdue-postback', 'order.overdue')
          : null,
      { what: 'order.overdue at the postback URL' },
    );
    expect(hook?.headers['x-webhook-event']).toBe('order.overdue');
    const verified = verifyWebhook({
      secret: overdueHook.secret,
      headers: hook?.headers ?? {},
      rawBody: hook?.rawBody ?? '',
    });
    expect(verified.event).toBe('order.overdue');
    expect(hook?.body).toEqual({
      event: 'order.overdue',
      occurred_at: expect.any(String),
      delivery_attempt: 1,
      data,
    });
    expect(OrderEventData.parse(hook?.body.data).order.due_date).toEqual(dueDate);

    expect(postback?.headers['x-webhook-event']).toBe('order.overdue');
    expect(postback?.headers['x-webhook-signature']).toBeUndefined();
    expect(postback?.body.data).toEqual(data);
    expect(postback?.headers['x-webhook-event-id']).not.toBe(hook?.headers['x-webhook-event-id']);

    // The order's postback deliveries list it; the events API lists it with both deliveries.
    const listed = await call(`${t.url}/sellers/orders/${order}/postback-deliveries/`, { key });
    expect(listed.status).toBe(200);
    const postbackDeliveries = DeliveryList.parse(listed.body.data).results;
    expect(postbackDeliveries.map((d) => d.event).sort()).toEqual(['order.created', 'order.overdue']);

    const events = await waitFor(
      async () => {
        const res = await call(`${t.url}/events/?type=order.overdue`, { key });
        const { results } = EventListResponse.parse(res.body).data;
        return results[0]?.deliveries.length === 2 ? results : null;
      },
      { what: 'order.overdue in the events API with both deliveries' },
    );
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ event: 'order.overdue', data });
    expect(events[0]?.deliveries.map((d) => d.event_id).sort()).toEqual(
      [hook?.headers['x-webhook-event-id'], postback?.headers['x-webhook-event-id']].sort(),
    );
    const filtered = await call(`${t.url}/events/?type=order.overdue&order_uuid=${order}`, { key });
    expect(EventListResponse.parse(filtered.body).data.results.map((e) => e.event)).toEqual([
      'order.overdue',
    ]);

    // The other event's webhook: nothing (order.paid never happened).
    expect(t.receiver.at('/overdue-other')).toEqual([]);
  });
});
