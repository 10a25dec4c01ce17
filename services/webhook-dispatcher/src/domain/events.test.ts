import type { Scope } from '@seller-api/service-kit';
import { eventIdOf, eventPageQuery, orderOf } from './events';

const ORDER = '3f1c7a52-1d2e-4b8a-9c61-2f4d5e6a7b8c';

describe('event ids', () => {
  it('are evt_ and 24 letters and digits, one per message, the same each time it arrives', () => {
    const ids = Array.from({ length: 5_000 }, (_, i) => eventIdOf(`message-${i}`));
    for (const id of ids) expect(id).toMatch(/^evt_[A-Za-z0-9]{24}$/);
    expect(new Set(ids).size).toBe(ids.length);
    expect(eventIdOf('message-7')).toBe(ids[7]);
    expect(new Set(ids.join('').replaceAll('evt_', '')).size).toBe(62);
  });
});

describe('the order of an event', () => {
  it("is data.order.uuid, else the producer's header, else none", () => {
    expect(orderOf({ order: { uuid: ORDER, status: 'PAID' } }, null)).toBe(ORDER);
    expect(orderOf({ withdrawal: {} }, ORDER)).toBe(ORDER);
    expect(orderOf({ withdrawal: {} }, null)).toBeNull();
    // Whatever a producer wrote, only a uuid reaches the uuid column.
    expect(orderOf({ order: { uuid: 'nope' } }, 'also-nope')).toBeNull();
    expect(orderOf(null, null)).toBeNull();
  });
});

describe('the page statement', () => {
  const scope: Scope = { sellerId: ORDER, environment: 'test', sellerName: null };
  const cursor = { createdAt: new Date('2026-11-01T00:00:00Z'), id: 'evt_0123456789abcdefghijABCD' };

  it('reads one name by its index range, several by one range each, an order by its own index', () => {
    const one = eventPageQuery(scope, { limit: 10, type: ['order.paid'] }, null);
    expect(one.text).toContain('e.event = $3');
    expect(one.values).toEqual([ORDER, 'test', 'order.paid', 11]);

    const several = eventPageQuery(scope, { limit: 10, type: ['order.paid', 'order.created'] }, cursor);
    expect(several.text).toMatch(/unnest\(\$6::text\[\]\) as t\(event\)\s+cross join lateral/);
    expect(several.values).toEqual([
      ORDER,
      'test',
      cursor.createdAt,
      cursor.id,
      11,
      ['order.paid', 'order.created'],
    ]);

    const byOrder = eventPageQuery(
      scope,
      { limit: 10, order_uuid: ORDER, type: ['order.paid', 'order.created'] },
      null,
    );
    expect(byOrder.text).toContain('e.order_id = $3::uuid');
    expect(byOrder.text).toContain('e.event = any($4::text[])');
    expect(byOrder.text).not.toContain('lateral (select');
  });
});
