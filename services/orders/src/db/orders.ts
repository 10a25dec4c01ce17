import { LockMode, raw } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import {
  MESSAGES,
  type OrderListQuery,
  type OrderSummary,
  type OrderSummaryQuery,
  type TrackingUpdateRequest,
} from '@seller-api/contracts';
import {
  assertOwned,
  badRequest,
  enqueue,
  olderThan,
  page,
  type Scope,
  type Sql,
} from '@seller-api/service-kit';
import { endOfDayOrInstant, startOfDayOrInstant } from '../domain/dates';
import { summaryOf, type SummaryBucketRow } from '../domain/summary';
import { applyTracking, trackingEvents } from '../domain/tracking';
import { OrderItemSchema, OrderSchema, type OrderItemRow, type OrderRow } from './entities';

// The orders as sellers read and track them. An order's create is order-writes.ts; the changes of
// its money state are charge-mirror.ts.

/** The order alone, with the ownership rule (404 other environment, 403 other seller). */
export async function findOwnedOrder(em: EntityManager, scope: Scope, id: string): Promise<OrderRow> {
  return assertOwned(await em.findOne(OrderSchema, { id }), scope, 'Order');
}

export async function getOrder(
  em: EntityManager,
  scope: Scope,
  id: string,
): Promise<{ order: OrderRow; items: OrderItemRow[] }> {
  const order = await findOwnedOrder(em, scope, id);
  const items = await em.find(OrderItemSchema, { orderId: id }, { orderBy: { position: 'asc' } });
  return { order, items };
}

/**
 * Newest first, keyset-paginated on (created_at, id) so pages stay fast and stable at any depth, with
 * the list's filters and searches (docs/orders.md, "List orders").
 */
export async function listOrders(em: EntityManager, scope: Scope, query: OrderListQuery) {
  const createdAt = {
    ...(query.created_from ? { $gte: startOfDayOrInstant(query.created_from) } : {}),
    ...(query.created_to ? { $lte: endOfDayOrInstant(query.created_to) } : {}),
  };
  const rows = await em.find(
    OrderSchema,
    {
      sellerId: scope.sellerId,
      environment: scope.environment,
      ...(query.status ? { status: query.status } : {}),
      ...(query.shipping_status ? { shippingStatus: query.shipping_status } : {}),
      // Exact matches, on orders_customer_email_idx (lowercased) and orders_customer_tax_id_idx.
      ...(query.customer_email
        ? { [raw('lower(customer_email)')]: raw('lower(?)', [query.customer_email]) }
        : {}),
      ...(query.customer_tax_id ? { customerTaxId: query.customer_tax_id } : {}),
      ...(Object.keys(createdAt).length ? { createdAt } : {}),
      ...olderThan(query.cursor),
    },
    {
      orderBy: { createdAt: 'desc', id: 'desc' },
      limit: query.limit + 1,
      fields: [
        'id',
        'status',
        'createdAt',
        'paidAt',
        'customerName',
        'customerEmail',
        'method',
        'grossAmount',
        'shippingAmount',
        'trackingCode',
        'shippingStatus',
      ],
    },
  );
  return page(rows, query.limit);
}

/**
 * `PATCH /sellers/orders/{uuid}/tracking/`: one transaction, the order row locked against a concurrent
 * update; the rules are domain/tracking.ts applyTracking, and its events commit with the change.
 */
export async function updateTracking(
  em: EntityManager,
  scope: Scope,
  orderId: string,
  update: TrackingUpdateRequest,
): Promise<void> {
  await em.transactional(async (tx) => {
    const order = assertOwned(
      await tx.findOne(OrderSchema, { id: orderId }, { lockMode: LockMode.PESSIMISTIC_WRITE }),
      scope,
      'Order',
    );
    const items = await tx.find(OrderItemSchema, { orderId }, { orderBy: { position: 'asc' } });
    const changes = applyTracking(order, items, update, new Date());
    for (const message of trackingEvents(order, changes)) enqueue(tx, message);
  });
}

// The buckets' first instants, $3 (from) to $4 (to) in time zone $5, as `start`. Days are the time
// zone's calendar days, stepped on its clock (a day across a daylight-saving change lasts 23 or 25
// hours); hours are steps of one hour from the time zone's hour that holds `from`.
const DAY_STARTS = `select (local at time zone $5::text) as start
    from generate_series(date_trunc('day', $3::timestamptz at time zone $5::text),
                         $4::timestamptz at time zone $5::text, interval '1 day') local`;
const HOUR_STARTS = `select start
    from generate_series(date_trunc('hour', $3::timestamptz, $5::text), $4::timestamptz, interval '1 hour') start`;

// Every bucket with its counts and amounts, aggregated by PostgreSQL from the orders' indexes
// (orders_created_idx, orders_paid_idx); width_bucket places each order in the bucket whose start is
// the last one not after it.
const summaryStatement = (starts: string) => `
  with series as (
    select s.start, row_number() over (order by s.start) as i from (${starts}) s where s.start < $4
  ),
  edges as (select array_agg(start order by start) as starts from series),
  created as (
    select width_bucket(o.created_at, e.starts) as i,
           count(*) as created,
           count(*) filter (where o.status = 'EXPIRED') as expired,
           count(*) filter (where o.status = 'REFUNDED') as refunded,
           count(*) filter (where o.status = 'CANCELLED') as canceled
      from orders.orders o cross join edges e
     where o.seller_id = $1 and o.environment = $2 and o.created_at >= $3 and o.created_at < $4
     group by 1
  ),
  paid as (
    select width_bucket(o.paid_at, e.starts) as i,
           count(*) as paid,
           -- What was paid: fee and net are of the amount paid (a due-date charge's differs from its
           -- gross, docs/pix.md), and add up to it; both are in orders_paid_idx.
           sum(o.fee_amount + o.net_amount) as amount_paid,
           sum(o.fee_amount) as fees,
           sum(o.net_amount) as net
      from orders.orders o cross join edges e
     where o.seller_id = $1 and o.environment = $2 and o.paid_at is not null
       and o.paid_at >= $3 and o.paid_at < $4
     group by 1
  )
  select to_char(s.start at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as start,
         coalesce(c.created, 0) as created, coalesce(c.expired, 0) as expired,
         coalesce(c.refunded, 0) as refunded, coalesce(c.canceled, 0) as canceled,
         coalesce(p.paid, 0) as paid, coalesce(p.amount_paid, 0) as amount_paid,
         coalesce(p.fees, 0) as fees, coalesce(p.net, 0) as net
    from series s left join created c on c.i = s.i left join paid p on p.i = s.i
   order by s.start`;

const STATEMENTS = { day: summaryStatement(DAY_STARTS), hour: summaryStatement(HOUR_STARTS) };

// For this statement only: a plan of its own at each run, since ranges and sellers differ by orders
// of magnitude; and no JIT compilation, which the planner's estimates of the joins with the buckets
// (far above the rows there are) would start, and which cost more than the whole query (measured:
// 1.3 s of compilation for 0.8 s of work over 240,000 orders).
const SUMMARY_SETTINGS = 'set local plan_cache_mode = force_custom_plan; set local jit = off';

// PostgreSQL's time zone database may lack a name the contracts' check (the runtime's) knows:
// `invalid_parameter_value`, 'time zone "x" not recognized'.
const isUnknownTimeZone = (err: unknown) =>
  (err as { code?: unknown }).code === '22023' && /time zone/i.test((err as Error).message ?? '');

/** The seller's orders of one environment over [from, to), in buckets of the time zone (docs/orders.md). */
export async function summarizeOrders(
  sql: Sql,
  scope: Scope,
  query: OrderSummaryQuery,
): Promise<OrderSummary> {
  const from = new Date(query.from);
  const to = new Date(query.to);
  let rows: SummaryBucketRow[];
  try {
    rows = await sql.transaction(SUMMARY_SETTINGS, (_settings, run) =>
      run<SummaryBucketRow>(STATEMENTS[query.granularity], [
        scope.sellerId,
        scope.environment,
        from,
        to,
        query.time_zone,
      ]),
    );
  } catch (err) {
    if (isUnknownTimeZone(err)) throw badRequest('Invalid query.', { time_zone: [MESSAGES.unknownTimeZone] });
    throw err;
  }
  return summaryOf(query, rows);
}
