import { OrderDetail, OrderSummary } from '@seller-api/contracts';
import { call, createKey } from '../support/system';
import { act, fund, newOrder, newSeller, useHarness, type Seller } from '../withdrawals/helpers';

/**
 * GET /sellers/orders/summary/ (docs/orders.md, "Summary"): counts and amounts per hour or day of a
 * time zone, every bucket present. The orders are made through the API, then moved in time in the
 * orders database so that each lands at a chosen instant.
 */

const h = useHarness();

async function summary(key: string, query: Record<string, string>) {
  const res = await call(`${h.gateway.url}/sellers/orders/summary/?${new URLSearchParams(query)}`, { key });
  return { res, data: res.status === 200 ? OrderSummary.parse(res.body.data) : null };
}

/** Places an order at `createdAt` (and `paidAt`) in the orders database. */
async function moveOrder(uuid: string, createdAt: string, paidAt: string | null = null): Promise<void> {
  const rows = await h.system.orders.runtime.sql.query<{ id: string }>(
    `update orders.orders set created_at = $2, paid_at = coalesce($3, paid_at) where id = $1 returning id`,
    [uuid, new Date(createdAt), paidAt ? new Date(paidAt) : null],
  );
  if (rows.length !== 1) throw new Error(`order ${uuid} not found`);
}

async function detail(seller: Seller, uuid: string): Promise<OrderDetail> {
  const res = await call(`${h.gateway.url}/sellers/orders/${uuid}/`, { key: seller.key });
  return OrderDetail.parse(res.body.data);
}

async function paidOrder(seller: Seller, gross: number): Promise<string> {
  const uuid = await newOrder(h, seller.key, gross);
  await act(h, seller.key, `/sandbox/orders/${uuid}/pay/`);
  return uuid;
}

const zeroBucket = (start: string) => ({
  start,
  orders_created: 0,
  orders_paid: 0,
  amount_paid: 0,
  fees: 0,
  net: 0,
});

describe('order summary', () => {
  it('counts by creation and by payment in the days of the time zone, with totals by status', async () => {
    const seller = await newSeller(h);
    // Refunded: paid first, with the net in the balance that a refund takes back.
    const refunded = await fund(h, seller, 20000);
    await act(h, seller.key, `/sellers/orders/${refunded}/refund/`);
    const paid = await paidOrder(seller, 10000);
    const paidBefore = await paidOrder(seller, 30000);
    const expired = await newOrder(h, seller.key, 4000);
    await act(h, seller.key, `/sandbox/orders/${expired}/expire/`);
    const cancelled = await newOrder(h, seller.key, 5000);
    await act(h, seller.key, `/sellers/orders/${cancelled}/cancel/`);
    const early = await newOrder(h, seller.key, 6000);
    const late = await newOrder(h, seller.key, 7000);

    // São Paulo is UTC-03:00: an evening there is the next day in UTC.
    await moveOrder(refunded, '2026-03-01T10:00:00-03:00', '2026-03-01T10:05:00-03:00');
    await moveOrder(paid, '2026-03-01T23:30:00-03:00', '2026-03-02T00:10:00-03:00');
    await moveOrder(paidBefore, '2026-02-28T20:00:00-03:00', '2026-03-03T09:00:00-03:00');
    await moveOrder(expired, '2026-03-02T12:00:00-03:00');
    await moveOrder(cancelled, '2026-03-03T23:59:59.999-03:00');
    await moveOrder(early, '2026-02-28T23:00:00-03:00');
    await moveOrder(late, '2026-03-04T00:00:00-03:00');

    // Another seller's order at the same time, and the seller's live environment, count for neither.
    const other = await newSeller(h);
    await moveOrder(await paidOrder(other, 90000), '2026-03-01T12:00:00-03:00', '2026-03-01T12:01:00-03:00');

    const amounts = async (uuid: string) => (await detail(seller, uuid)).payment;
    const [r, p, b] = await Promise.all([amounts(refunded), amounts(paid), amounts(paidBefore)]);
    expect([r.gross_amount, p.gross_amount, b.gross_amount]).toEqual([20000, 10000, 30000]);
    const range = { from: '2026-03-01T00:00:00-03:00', to: '2026-03-04T00:00:00-03:00' };

    const { res, data } = await summary(seller.key, {
      ...range,
      granularity: 'day',
      time_zone: 'America/Sao_Paulo',
    });
    expect(res.status).toBe(200);
    expect(data).toEqual({
      from: '2026-03-01T03:00:00.000Z',
      to: '2026-03-04T03:00:00.000Z',
      granularity: 'day',
      time_zone: 'America/Sao_Paulo',
      totals: {
        orders_created: 4,
        orders_paid: 3,
        orders_expired: 1,
        orders_refunded: 1,
        orders_canceled: 1,
        amount_paid: 60000,
        fees: r.fee_amount + p.fee_amount + b.fee_amount,
        net: r.net_amount + p.net_amount + b.net_amount,
      },
      buckets: [
        {
          start: '2026-03-01T03:00:00.000Z',
          orders_created: 2,
          orders_paid: 1,
          amount_paid: 20000,
          fees: r.fee_amount,
          net: r.net_amount,
        },
        {
          start: '2026-03-02T03:00:00.000Z',
          orders_created: 1,
          orders_paid: 1,
          amount_paid: 10000,
          fees: p.fee_amount,
          net: p.net_amount,
        },
        {
          start: '2026-03-03T03:00:00.000Z',
          orders_created: 1,
          orders_paid: 1,
          amount_paid: 30000,
          fees: b.fee_amount,
          net: b.net_amount,
        },
      ],
    });
    expect(r.fee_amount).toBeGreaterThan(0);

    // The same instants in UTC days: the evening orders move to the next day, the early one comes in.
    const utc = await summary(seller.key, {
      from: '2026-03-01T00:00:00Z',
      to: '2026-03-04T00:00:00Z',
    });
    expect(utc.data?.granularity).toBe('day');
    expect(utc.data?.time_zone).toBe('UTC');
    expect(utc.data?.buckets.map((x) => [x.start, x.orders_created, x.orders_paid])).toEqual([
      ['2026-03-01T00:00:00.000Z', 2, 1],
      ['2026-03-02T00:00:00.000Z', 2, 1],
      ['2026-03-03T00:00:00.000Z', 0, 1],
    ]);
    expect(utc.data?.totals).toMatchObject({ orders_created: 4, orders_canceled: 0, orders_expired: 1 });

    // The other seller sees only its own.
    const otherSummary = await summary(other.key, { ...range, time_zone: 'America/Sao_Paulo' });
    expect(otherSummary.data?.totals).toMatchObject({
      orders_created: 1,
      orders_paid: 1,
      amount_paid: 90000,
    });
  });

  it('gives a live key of the same seller its live orders only: none here', async () => {
    const seller = await newSeller(h);
    const uuid = await paidOrder(seller, 12000);
    await moveOrder(uuid, '2026-04-10T12:00:00Z', '2026-04-10T12:30:00Z');
    const liveKey = (await createKey(h.gateway.service, { email: seller.email, environment: 'live' })).key;
    const range = { from: '2026-04-10T00:00:00Z', to: '2026-04-11T00:00:00Z' };
    expect((await summary(seller.key, range)).data?.totals.orders_paid).toBe(1);
    const live = await summary(liveKey, range);
    expect(live.res.status).toBe(200);
    expect(live.data?.totals).toEqual({
      orders_created: 0,
      orders_paid: 0,
      orders_expired: 0,
      orders_refunded: 0,
      orders_canceled: 0,
      amount_paid: 0,
      fees: 0,
      net: 0,
    });
    expect(live.data?.buckets).toEqual([zeroBucket('2026-04-10T00:00:00.000Z')]);
  });

  it('buckets hours of a time zone with a half-hour offset, zeros included, from inside the first', async () => {
    const seller = await newSeller(h);
    const before = await newOrder(h, seller.key, 1000);
    const first = await paidOrder(seller, 2000);
    const last = await newOrder(h, seller.key, 3000);
    // Asia/Kolkata is UTC+05:30: its hours start at half past in UTC.
    await moveOrder(before, '2026-03-10T10:10:00+05:30');
    await moveOrder(first, '2026-03-10T10:25:00+05:30', '2026-03-10T11:15:00+05:30');
    await moveOrder(last, '2026-03-10T12:59:59.999+05:30');
    const { data } = await summary(seller.key, {
      from: '2026-03-10T10:20:00+05:30',
      to: '2026-03-10T13:00:00+05:30',
      granularity: 'hour',
      time_zone: 'Asia/Kolkata',
    });
    const fee = (await detail(seller, first)).payment.fee_amount;
    expect(data?.buckets).toEqual([
      { ...zeroBucket('2026-03-10T04:30:00.000Z'), orders_created: 1 },
      {
        ...zeroBucket('2026-03-10T05:30:00.000Z'),
        orders_paid: 1,
        amount_paid: 2000,
        fees: fee,
        net: 2000 - fee,
      },
      { ...zeroBucket('2026-03-10T06:30:00.000Z'), orders_created: 1 },
    ]);
    expect(data?.totals.orders_created).toBe(2);
  });

  it('follows the days of a time zone across a daylight-saving change', async () => {
    const seller = await newSeller(h);
    const uuid = await newOrder(h, seller.key, 1000);
    // New York leaves daylight saving on 2026-11-01: that day lasts 25 hours.
    await moveOrder(uuid, '2026-11-01T23:30:00-05:00');
    const { data } = await summary(seller.key, {
      from: '2026-10-31T00:00:00-04:00',
      to: '2026-11-03T00:00:00-05:00',
      time_zone: 'America/New_York',
    });
    expect(data?.buckets).toEqual([
      zeroBucket('2026-10-31T04:00:00.000Z'),
      { ...zeroBucket('2026-11-01T04:00:00.000Z'), orders_created: 1 },
      zeroBucket('2026-11-02T05:00:00.000Z'),
    ]);
  });

  it('answers every bucket of the longest ranges, counted on the time zone clock', async () => {
    const seller = await newSeller(h);
    // 92 days of New York's clock, one of them 25 hours long.
    const days = await summary(seller.key, {
      from: '2026-09-01T00:00:00-04:00',
      to: '2026-12-02T00:00:00-05:00',
      time_zone: 'America/New_York',
    });
    expect(days.res.status).toBe(200);
    expect(days.data?.buckets).toHaveLength(92);
    expect(days.data?.buckets.every((b) => b.orders_created === 0 && b.amount_paid === 0)).toBe(true);
    const hours = await summary(seller.key, {
      from: '2026-05-01T00:00:00Z',
      to: '2026-05-08T00:00:00Z',
      granularity: 'hour',
    });
    expect(hours.data?.buckets).toHaveLength(168);
    expect(hours.data?.buckets[1]?.start).toBe('2026-05-01T01:00:00.000Z');
  });

  it('answers the earliest dates accepted, in a time zone of local mean time then', async () => {
    const seller = await newSeller(h);
    const { res, data } = await summary(seller.key, {
      from: '0001-01-02T00:00:00Z',
      to: '0001-01-04T00:00:00Z',
      time_zone: 'America/Sao_Paulo',
    });
    expect(res.status).toBe(200);
    // São Paulo was 3:06:28 behind UTC before standard time zones.
    expect(data?.buckets.map((b) => b.start)).toEqual([
      '0001-01-01T03:06:28.000Z',
      '0001-01-02T03:06:28.000Z',
      '0001-01-03T03:06:28.000Z',
    ]);
  });

  it('refuses a bad range, granularity or time zone with 400 on the field', async () => {
    const seller = await newSeller(h);
    for (const [query, field] of [
      [
        { from: '2026-09-01T00:00:00-04:00', to: '2026-12-02T00:00:01-05:00', time_zone: 'America/New_York' },
        'to',
      ],
      [{ from: '2026-01-01T00:00:00Z', to: '2026-04-04T00:00:00Z' }, 'to'],
      [{ from: '2026-05-01T00:00:00Z', to: '2026-05-08T00:00:00.001Z', granularity: 'hour' }, 'to'],
      [{ from: '2026-05-02T00:00:00Z', to: '2026-05-01T00:00:00Z' }, 'to'],
      [{ from: '2026-05-01T00:00:00Z', to: '2026-05-01T00:00:00Z' }, 'to'],
      [{ from: '2026-05-01T00:00:00Z', to: '2026-05-02T00:00:00Z', granularity: 'week' }, 'granularity'],
      [
        { from: '2026-05-01T00:00:00Z', to: '2026-05-02T00:00:00Z', time_zone: 'Mars/Olympus_Mons' },
        'time_zone',
      ],
      [{ from: '2026-05-01T00:00:00Z', to: '2026-05-02T00:00:00Z', time_zone: '+03:00' }, 'time_zone'],
      [{ from: '2026-05-01', to: '2026-05-02T00:00:00Z' }, 'from'],
      [{ to: '2026-05-02T00:00:00Z' }, 'from'],
    ] as const) {
      const { res } = await summary(seller.key, query);
      expect({ query, status: res.status, code: res.body.code }).toEqual({
        query,
        status: 400,
        code: 'validation_error',
      });
      expect(res.body.data).toHaveProperty([field]);
    }
  });

  it('is not taken for an order id, and needs a key', async () => {
    const noKey = await call(
      `${h.gateway.url}/sellers/orders/summary/?from=2026-05-01T00:00:00Z&to=2026-05-02T00:00:00Z`,
    );
    expect(noKey.status).toBe(401);
    const seller = await newSeller(h);
    const { res } = await summary(seller.key, { from: '2026-05-01T00:00:00Z', to: '2026-05-02T00:00:00Z' });
    expect(res.status).toBe(200);
    expect(res.body.message).toBe('Order summary retrieved.');
  });
});
