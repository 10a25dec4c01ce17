import type {
  OrderSummary,
  OrderSummaryBucket,
  OrderSummaryQuery,
  OrderSummaryTotals,
} from '@seller-api/contracts';

/** Counts and sums arrive as bigint and numeric, which pg hands over as strings. */
type Count = string | number;

/** One bucket as the summary's statement answers it (db/orders.ts summarizeOrders). */
export interface SummaryBucketRow {
  /** ISO 8601 in UTC, written by PostgreSQL: its text form of a year before 1000 is not one JS reads. */
  start: string;
  created: Count;
  expired: Count;
  refunded: Count;
  canceled: Count;
  paid: Count;
  amount_paid: Count;
  fees: Count;
  net: Count;
}

/** The summary of the buckets' rows, with their totals (docs/orders.md). */
export function summaryOf(query: OrderSummaryQuery, rows: SummaryBucketRow[]): OrderSummary {
  const totals: OrderSummaryTotals = {
    orders_created: 0,
    orders_paid: 0,
    orders_expired: 0,
    orders_refunded: 0,
    orders_canceled: 0,
    amount_paid: 0,
    fees: 0,
    net: 0,
  };
  const buckets = rows.map((row): OrderSummaryBucket => {
    const bucket = {
      start: row.start,
      orders_created: Number(row.created),
      orders_paid: Number(row.paid),
      amount_paid: Number(row.amount_paid),
      fees: Number(row.fees),
      net: Number(row.net),
    };
    totals.orders_created += bucket.orders_created;
    totals.orders_paid += bucket.orders_paid;
    totals.orders_expired += Number(row.expired);
    totals.orders_refunded += Number(row.refunded);
    totals.orders_canceled += Number(row.canceled);
    totals.amount_paid += bucket.amount_paid;
    totals.fees += bucket.fees;
    totals.net += bucket.net;
    return bucket;
  });
  return {
    from: new Date(query.from).toISOString(),
    to: new Date(query.to).toISOString(),
    granularity: query.granularity,
    time_zone: query.time_zone,
    totals,
    buckets,
  };
}
