import { zodIssuesToFieldErrors } from './errors';
import { EventListQuery, EventPathParams, EventRecord, splitEventTypes } from './event-log';

const fieldErrors = (value: unknown) => {
  const result = EventListQuery.safeParse(value);
  if (result.success) throw new Error('expected failure');
  return zodIssuesToFieldErrors(result.error);
};

describe('events list query', () => {
  it('takes event names repeated, comma-separated or both, in order and without repeats', () => {
    expect(splitEventTypes('order.paid')).toEqual(['order.paid']);
    expect(splitEventTypes('order.paid, order.refunded,,')).toEqual(['order.paid', 'order.refunded']);
    expect(splitEventTypes(['order.paid,payment.approved', 'order.paid', 'withdrawal.paid'])).toEqual([
      'order.paid',
      'payment.approved',
      'withdrawal.paid',
    ]);
    expect(EventListQuery.parse({ type: ['order.paid', 'order.created,order.paid'] })).toEqual({
      limit: 20,
      type: ['order.paid', 'order.created'],
    });
  });

  it('refuses unknown or no event names on type, naming the unknown ones', () => {
    expect(fieldErrors({ type: 'order.paid,order.unknown' })).toEqual({
      type: ['Unknown event name: order.unknown.'],
    });
    expect(fieldErrors({ type: ['ORDER.PAID'] })).toEqual({ type: ['Unknown event name: ORDER.PAID.'] });
    expect(fieldErrors({ type: ',' })).toEqual({ type: ['Must name at least one event.'] });
  });

  it('filters by an ordered window of ISO datetimes and by a order uuid', () => {
    expect(
      EventListQuery.parse({
        created_gte: '2026-11-01T00:00:00Z',
        created_lte: '2026-11-02T00:00:00-03:00',
        order_uuid: '3f1c7a52-1d2e-4b8a-9c61-2f4d5e6a7b8c',
        limit: '5',
      }),
    ).toMatchObject({ limit: 5, order_uuid: '3f1c7a52-1d2e-4b8a-9c61-2f4d5e6a7b8c' });
    expect(fieldErrors({ created_gte: '2026-11-02T00:00:00Z', created_lte: '2026-11-01T00:00:00Z' })).toEqual(
      {
        created_lte: ['Must not be before created_gte.'],
      },
    );
    expect(
      Object.keys(fieldErrors({ created_gte: 'yesterday', order_uuid: 'x', limit: '0' })).sort(),
    ).toEqual(['created_gte', 'limit', 'order_uuid']);
  });

  it('reads event ids only in their own form', () => {
    expect(EventPathParams.safeParse({ id: 'evt_0123456789abcdefghijABCD' }).success).toBe(true);
    for (const id of ['evt_short', '3f1c7a52-1d2e-4b8a-9c61-2f4d5e6a7b8c', 'evt_0123456789abcdefghijABC!']) {
      expect(EventPathParams.safeParse({ id }).success).toBe(false);
    }
  });
});

describe('an event', () => {
  const withdrawal = {
    withdrawal: {
      uuid: '3f1c7a52-1d2e-4b8a-9c61-2f4d5e6a7b8c',
      status: 'PAID',
      gross_amount: 1000,
      requested_at: '2026-11-01T00:00:00.000Z',
      decided_at: '2026-11-01T00:01:00.000Z',
    },
    bank_data: { pix_key: 'joh*****@example.com', pix_key_type: 'email' },
    seller: { name: 'Loja' },
  };

  it("checks data against its own event's payload", () => {
    const event = {
      id: 'evt_0123456789abcdefghijABCD',
      event: 'withdrawal.paid',
      occurred_at: '2026-11-01T00:02:00.000Z',
      data: withdrawal,
      deliveries: [
        {
          id: '6b1c7a52-1d2e-4b8a-9c61-2f4d5e6a7b8c',
          webhook_id: null,
          event_id: 'evt_A123456789abcdefghijABCD',
          status: 'pending',
        },
      ],
    };
    expect(EventRecord.parse(event)).toEqual(event);
    expect(EventRecord.safeParse({ ...event, event: 'order.paid' }).success).toBe(false);
  });
});
