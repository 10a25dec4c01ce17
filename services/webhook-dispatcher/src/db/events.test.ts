import type { Scope } from '@seller-api/service-kit';
import { eventPageQuery } from './events';

const ORDER = '3f1c7a52-1d2e-4b8a-9c61-2f4d5e6a7b8c';

describe('the page statement', () => {
  const scope: Scope = { sellerId: ORDER, environment: 'test', sellerName: null };
  const cursor = { createdAt: new Date('2026-11-01T00:00:00Z'), id: 'evt_0123456789abcdefghijABCD' };

  it('reads one name by its index range, several by one range each, an order by its own index', () => {
    const one = eventPageQuery(scope, { limit: 10, type: ['order.paid'] }, null, 30);
    expect(one.text).toContain('e.event = $4');
    expect(one.text).toContain('e.occurred_at >= now() - make_interval(days => $3)');
    expect(one.values).toEqual([ORDER, 'test', 30, 'order.paid', 11]);

    const several = eventPageQuery(scope, { limit: 10, type: ['order.paid', 'order.created'] }, cursor, 30);
    expect(several.text).toMatch(/unnest\(\$7::text\[\]\) as t\(event\)\s+cross join lateral/);
    expect(several.values).toEqual([
      ORDER,
      'test',
      30,
      cursor.createdAt,
      cursor.id,
      11,
      ['order.paid', 'order.created'],
    ]);

    const byOrder = eventPageQuery(
      scope,
      { limit: 10, order_uuid: ORDER, type: ['order.paid', 'order.created'] },
      null,
      30,
    );
    expect(byOrder.text).toContain('e.order_id = $4::uuid');
    expect(byOrder.text).toContain('e.event = any($5::text[])');
    expect(byOrder.text).not.toContain('lateral (select');
  });
});
