import type { OrderSummaryQuery } from '@seller-api/contracts';
import { summaryOf, type SummaryBucketRow } from './summary';

const query: OrderSummaryQuery = {
  from: '2026-06-15T03:00:00-03:00',
  to: '2026-06-17T00:00:00.000Z',
  granularity: 'day',
  time_zone: 'America/Sao_Paulo',
};

const bucket = (start: string, overrides: Partial<SummaryBucketRow> = {}): SummaryBucketRow => ({
  start,
  created: '0',
  expired: '0',
  refunded: '0',
  canceled: '0',
  paid: '0',
  amount_paid: '0',
  fees: '0',
  net: '0',
  ...overrides,
});

describe('summaryOf', () => {
  it('reads the counts and sums as numbers and totals them over the buckets', () => {
    const summary = summaryOf(query, [
      bucket('2026-06-15T03:00:00.000Z', {
        created: '3',
        expired: '1',
        paid: '2',
        amount_paid: '25000',
        fees: '250',
        net: '24750',
      }),
      bucket('2026-06-16T03:00:00.000Z', {
        created: 2,
        refunded: '1',
        canceled: '1',
        paid: '1',
        amount_paid: '999999999999',
      }),
    ]);
    expect(summary.buckets).toEqual([
      {
        start: '2026-06-15T03:00:00.000Z',
        orders_created: 3,
        orders_paid: 2,
        amount_paid: 25000,
        fees: 250,
        net: 24750,
      },
      {
        start: '2026-06-16T03:00:00.000Z',
        orders_created: 2,
        orders_paid: 1,
        amount_paid: 999999999999,
        fees: 0,
        net: 0,
      },
    ]);
    expect(summary.totals).toEqual({
      orders_created: 5,
      orders_paid: 3,
      orders_expired: 1,
      orders_refunded: 1,
      orders_canceled: 1,
      amount_paid: 1000000024999,
      fees: 250,
      net: 24750,
    });
  });

  it('answers the range in UTC, with the granularity and time zone asked', () => {
    expect(summaryOf(query, [])).toEqual({
      from: '2026-06-15T06:00:00.000Z',
      to: '2026-06-17T00:00:00.000Z',
      granularity: 'day',
      time_zone: 'America/Sao_Paulo',
      totals: {
        orders_created: 0,
        orders_paid: 0,
        orders_expired: 0,
        orders_refunded: 0,
        orders_canceled: 0,
        amount_paid: 0,
        fees: 0,
        net: 0,
      },
      buckets: [],
    });
  });
});
