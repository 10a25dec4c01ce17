import { fanOutRows, newEventId, subscriptionKey, type IncomingEvent } from './deliveries';
import { eventIdOf } from './events';

// X-Webhook-Event-Id is one per delivery, the same on every attempt and resend (docs/webhooks.md). No
// index enforces it since Migration20261214DeliveriesCheaperVersions: the id's randomness does.
test('event ids are evt_ and 24 letters and digits, and never repeat', () => {
  const ids = Array.from({ length: 20_000 }, newEventId);
  for (const id of ids) expect(id).toMatch(/^evt_[A-Za-z0-9]{24}$/);
  expect(new Set(ids).size).toBe(ids.length);
  // Every letter and digit turns up: no part of the alphabet is lost.
  expect(new Set(ids.join('').replaceAll('evt_', '')).size).toBe(62);
});

const SELLER = '3f1c7a52-1d2e-4b8a-9c61-2f4d5e6a7b8c';
const ORDER = '9a0b1c2d-3e4f-4a5b-8c6d-7e8f9a0b1c2d';

const incoming = (over: Partial<IncomingEvent>): IncomingEvent => ({
  messageId: 'm1',
  event: 'order.paid',
  sellerId: SELLER,
  environment: 'test',
  occurredAt: new Date('2026-11-28T12:00:00Z'),
  data: { order: { uuid: ORDER } },
  postbackUrl: null,
  orderId: null,
  traceContext: null,
  ...over,
});

describe('the fan-out', () => {
  it("makes a signed delivery per subscribed webhook, an unsigned one to an order event's postback URL", () => {
    const paid = incoming({ postbackUrl: 'https://shop.example.com/hook', orderId: ORDER });
    const subscribers = new Map([
      [
        subscriptionKey(paid),
        [
          { id: 'h1', url: 'https://a.example.com' },
          { id: 'h2', url: 'https://b.example.com' },
        ],
      ],
    ]);
    const { deliveries, recorded } = fanOutRows([paid], subscribers);
    expect(deliveries.map((d) => [d.webhookId, d.url, d.signed, d.orderId])).toEqual([
      ['h1', 'https://a.example.com', true, null],
      ['h2', 'https://b.example.com', true, null],
      [null, 'https://shop.example.com/hook', false, ORDER],
    ]);
    expect(new Set(deliveries.map((d) => d.eventId)).size).toBe(3);
    expect(recorded).toEqual([
      expect.objectContaining({
        messageId: 'm1',
        id: eventIdOf('m1'),
        orderId: ORDER,
        deliveryIds: deliveries.map((d) => d.id),
      }),
    ]);
  });

  it('records an event no one subscribes to, and sends no postback for other events', () => {
    const approved = incoming({
      messageId: 'm2',
      event: 'payment.approved',
      postbackUrl: 'https://shop.example.com/hook',
      orderId: ORDER,
    });
    const { deliveries, recorded } = fanOutRows([approved], new Map());
    expect(deliveries).toEqual([]);
    expect(recorded).toEqual([expect.objectContaining({ id: eventIdOf('m2'), deliveryIds: [] })]);
  });
});
