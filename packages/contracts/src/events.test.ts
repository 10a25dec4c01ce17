import {
  EVENT_NAMES,
  EVENT_PAYLOADS,
  EventEnvelope,
  OrderEvents,
  POSTBACK_EVENTS,
  WithdrawalEvents,
  eventEnvelope,
  isPostbackEvent,
  parseEventPayload,
} from './events';

const NOW = '2026-07-01T12:00:00.000Z';

const orderPaid = {
  order: {
    uuid: '3f1c7a52-1d2e-4b8a-9c61-2f4d5e6a7b8c',
    status: 'PAID',
    method: 'PIX',
    gross_amount: 15000,
    shipping_amount: 1000,
    discount_amount: 0,
    fee_amount: 599,
    net_amount: 14401,
    created_at: NOW,
    paid_at: NOW,
  },
  seller: { name: 'Loja' },
  customer: { name: 'Maria', tax_id: '529.***.***-25', tax_id_type: 'CPF', email: 'mar***@example.com' },
  items: [
    {
      product_uuid: '9a1c7a52-1d2e-4b8a-9c61-2f4d5e6a7b8c',
      product_name: 'Livro',
      quantity: 2,
      unit_amount: 7000,
      line_total_amount: 14000,
    },
  ],
};

describe('event names', () => {
  it('lists the 20 events of the catalogue, once each', () => {
    expect(EVENT_NAMES).toHaveLength(20);
    expect(new Set(EVENT_NAMES).size).toBe(20);
    expect(EVENT_NAMES).toContain('payment.pix_qr_code_created');
    expect(OrderEvents.CANCELLED).toBe('order.cancelled');
    expect(WithdrawalEvents.PAID).toBe('withdrawal.paid');
  });

  it('sends postback URLs the 9 order and order_item events only', () => {
    expect(POSTBACK_EVENTS).toHaveLength(9);
    expect(POSTBACK_EVENTS.every((name) => /^order(_item)?\./.test(name))).toBe(true);
    expect(isPostbackEvent('order_item.delivered')).toBe(true);
    expect(isPostbackEvent('payment.approved')).toBe(false);
  });

  it('has a payload schema for every event', () => {
    expect(Object.keys(EVENT_PAYLOADS).sort()).toEqual([...EVENT_NAMES].sort());
  });
});

describe('payloads and envelope', () => {
  it('accepts order.paid exactly as documented, affiliate optional', () => {
    expect(parseEventPayload('order.paid', orderPaid).order.net_amount).toBe(14401);
    expect(parseEventPayload('order.paid', { ...orderPaid, affiliate: { name: 'Ana' } }).affiliate).toEqual({
      name: 'Ana',
    });
    expect(() => parseEventPayload('order.paid', { ...orderPaid, seller: undefined })).toThrow();
  });

  it('checks the typed envelope of one event', () => {
    const envelope = { event: 'order.paid', occurred_at: NOW, delivery_attempt: 1, data: orderPaid };
    expect(eventEnvelope('order.paid').safeParse(envelope).success).toBe(true);
    expect(eventEnvelope('order.created').safeParse(envelope).success).toBe(false);
    expect(EventEnvelope.safeParse({ ...envelope, delivery_attempt: 0 }).success).toBe(false);
    expect(EventEnvelope.safeParse({ ...envelope, event: 'order.unknown' }).success).toBe(false);
  });

  it('requires a reason on withdrawal.denied and the exact withdrawal.paid shape', () => {
    const paid = {
      withdrawal: {
        uuid: '3f1c7a52-1d2e-4b8a-9c61-2f4d5e6a7b8c',
        status: 'PAID',
        gross_amount: 5000,
        requested_at: NOW,
        decided_at: NOW,
      },
      bank_data: { pix_key: 'sel***@example.com', pix_key_type: 'email' },
      seller: { name: 'Loja' },
    };
    expect(EVENT_PAYLOADS['withdrawal.paid'].safeParse(paid).success).toBe(true);
    expect(EVENT_PAYLOADS['withdrawal.denied'].safeParse(paid).success).toBe(false);
    const denied = { ...paid, withdrawal: { ...paid.withdrawal, status: 'DENIED', reason: 'limit' } };
    expect(EVENT_PAYLOADS['withdrawal.denied'].safeParse(denied).success).toBe(true);
  });
});
