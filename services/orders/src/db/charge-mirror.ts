import type { ChargeState, Environment } from '@seller-api/contracts';
import {
  OutboxMessageSchema,
  insertPart,
  outboxRow,
  recordProcessedMessages,
  rowsOf,
  type BatchedMessage,
  type OutboxMessage,
  type Sql,
  type SqlQuery,
} from '@seller-api/service-kit';
import { mirrorChargeState, statesToMirror, type MirroredOrder } from '../domain/order-status';
import { SCHEMA } from './migrations';

/**
 * The mirror of payments' charge state on the orders; its rules are domain/order-status.ts.
 * applyChargeState takes no lock and no transaction of its own: the write names the version it read,
 * so a state mirrored meanwhile by the other path (the request's answer, the message) makes it write
 * nothing, and the reader tries again.
 */

/**
 * The one place where an order's status changes after creation. Payments decides the money state;
 * this mirrors it, from the internal action answer or from the internal event, whichever comes first
 * (the version makes the second a no-op), and stores the public order.* event with the change (one
 * statement, written only if the order still holds the version read, read again otherwise). `query`
 * runs the statements: the runtime's own, or a transaction's (the consumer records the message id with
 * the change). Answers whether the state was newer; the caller wakes the outbox relay.
 */
export async function applyChargeState(
  sql: Sql,
  state: ChargeState,
  query: SqlQuery = sql.query,
): Promise<boolean> {
  // A write that finds another version means another state was mirrored meanwhile; versions only grow,
  // so this ends at the next read in practice: the bound guards against a writer breaking that rule.
  for (let tries = 0; tries < 10; tries += 1) {
    const order = await readMirroredOrder(query, state.order_uuid);
    if (!order) return false;
    const next = mirrorChargeState(order, state);
    if (!next) return false;
    // A millisecond apart: the relay sends by stamp, so order.paid goes before the state after it.
    const at = Date.now();
    const events = next.events.map((event, i) => outboxRow(event, new Date(at + i)));
    if (await writeMirror(sql, query, order.chargeVersion, next.order, events)) return true;
  }
  throw new Error(`order ${state.order_uuid}: its charge version kept changing under the mirror`);
}

/**
 * The consumer's batch of charge states (events/charges.ts). Most states were mirrored already by the
 * request that caused them, and versions only grow: when the orders hold every version of the batch,
 * its ids are only recorded as processed by `consumer`, in one statement. Otherwise the ids and the
 * newer states (applyChargeState, in statesToMirror's order) commit together in one transaction.
 * Answers the ids that were new, and whether the transaction ran (its events wait for the relay).
 */
export async function mirrorChargeStates(
  sql: Sql,
  consumer: string,
  batch: Array<BatchedMessage<ChargeState>>,
): Promise<{ fresh: Set<string>; stored: boolean }> {
  const ids = batch.map((item) => item.message.id);
  const held = await chargeVersionsOf(sql, [...new Set(batch.map((item) => item.value.order_uuid))]);
  const newer = statesToMirror(batch, held);
  if (newer.length === 0)
    return { fresh: await recordProcessedMessages(sql.query, SCHEMA, consumer, ids), stored: false };
  const fresh = await sql.transaction('select 1', async (_rows, query) => {
    const recorded = await recordProcessedMessages(query, SCHEMA, consumer, ids);
    for (const item of newer)
      if (recorded.has(item.message.id)) await applyChargeState(sql, item.value, query);
    return recorded;
  });
  return { fresh, stored: true };
}

/** The charge version each of these orders mirrors, for those that exist (the consumer's batch). */
async function chargeVersionsOf(sql: Sql, orderIds: string[]): Promise<Map<string, number>> {
  const rows = await sql.query<{ id: string; charge_version: number }>(
    `select id, charge_version from orders.orders where id = any($1::uuid[])`,
    [orderIds],
  );
  return new Map(rows.map((row) => [row.id, row.charge_version]));
}

/** Whose order this is (for assertOwned before an action on its charge); null when there is none. */
export async function orderOwner(
  sql: Sql,
  orderId: string,
): Promise<{ sellerId: string; environment: Environment } | null> {
  const [row] = await sql.query<{ sellerId: string; environment: Environment }>(
    `select seller_id as "sellerId", environment from orders.orders where id = $1`,
    [orderId],
  );
  return row ?? null;
}

// Amounts are bigint columns: as float8 they arrive as numbers (integer cents, far below 2^53).
export const MIRRORED_COLUMNS = `o.id, o.seller_id as "sellerId", o.environment, o.seller_name as "sellerName",
       o.status, o.method, o.gross_amount::float8 as "grossAmount",
       o.shipping_amount::float8 as "shippingAmount", o.discount_amount::float8 as "discountAmount",
       o.fee_amount::float8 as "feeAmount", o.net_amount::float8 as "netAmount", o.created_at as "createdAt",
       o.paid_at as "paidAt", o.affiliate_name as "affiliateName", o.customer_name as "customerName",
       o.customer_tax_id as "customerTaxId", o.customer_tax_id_type as "customerTaxIdType",
       o.customer_email as "customerEmail", o.postback_url as "postbackUrl",
       o.charge_version as "chargeVersion", o.refund_status as "refundStatus",
       o.refund_attempt as "refundAttempt", o.refund_amount::float8 as "refundAmount",
       o.refund_requested_at as "refundRequestedAt", o.refund_updated_at as "refundUpdatedAt",
       o.refund_failure_reason as "refundFailureReason", o.due_date_terms as "dueDateTerms",
       to_char(o.effective_due_date, 'YYYY-MM-DD') as "effectiveDueDate",
       to_char(o.last_payable_date, 'YYYY-MM-DD') as "lastPayableDate", o.amount_paid as "amountPaid",
       coalesce((select json_agg(json_build_object('productId', i.product_id, 'name', i.name,
                  'quantity', i.quantity, 'price', i.price, 'lineTotalAmount', i.line_total_amount)
                  order by i.position)
                  from orders.order_items i where i.order_id = o.id), '[]'::json) as items`;
const READ_ORDER = `select ${MIRRORED_COLUMNS} from orders.orders o where o.id = $1`;

type Stamp = 'createdAt' | 'paidAt' | 'refundRequestedAt' | 'refundUpdatedAt';
// The ORM's pool hands timestamps over as text.
const date = (value: string | null) => (value === null ? null : new Date(value));
/** A row of MIRRORED_COLUMNS as the pool hands it over. */
export type MirroredRow = Omit<MirroredOrder, Stamp> & Record<Stamp, string | null>;

/** The order as the mirror reads it, with its items; null when there is none. */
async function readMirroredOrder(query: SqlQuery, orderId: string): Promise<MirroredOrder | null> {
  const [row] = await query<MirroredRow>(READ_ORDER, [orderId]);
  return row ? mirroredOrderOf(row) : null;
}

/** A row of MIRRORED_COLUMNS, its timestamps read. */
export function mirroredOrderOf(row: MirroredRow): MirroredOrder {
  return {
    ...row,
    createdAt: new Date(row.createdAt as string),
    paidAt: date(row.paidAt),
    refundRequestedAt: date(row.refundRequestedAt),
    refundUpdatedAt: date(row.refundUpdatedAt),
  };
}

// Every column the mirror owns is written back as read or as the state changed it: only this write
// changes them (tracking, the one other writer of orders.orders, owns other columns), and it names
// the version read, so nothing written meanwhile can be overwritten.
const WRITE_MIRROR = `update orders.orders set status = $2, paid_at = $3, charge_version = $4, refund_status = $5,
       refund_attempt = $6, refund_amount = $7, refund_requested_at = $8, refund_updated_at = $9,
       refund_failure_reason = $10, fee_amount = $12, net_amount = $13, amount_paid = $14::jsonb
 where id = $1 and charge_version = $11 returning id`;

/**
 * Writes the mirrored order, and its events when it has any, in one statement, if the order still holds
 * `readVersion`; answers whether it did.
 */
async function writeMirror(
  sql: Sql,
  query: SqlQuery,
  readVersion: number,
  order: MirroredOrder,
  events: OutboxMessage[],
): Promise<boolean> {
  const values = [
    order.id,
    order.status,
    order.paidAt,
    order.chargeVersion,
    order.refundStatus,
    order.refundAttempt,
    order.refundAmount,
    order.refundRequestedAt,
    order.refundUpdatedAt,
    order.refundFailureReason,
    readVersion,
    order.feeAmount,
    order.netAmount,
    order.amountPaid === null ? null : JSON.stringify(order.amountPaid),
  ];
  if (events.length === 0) return (await query(WRITE_MIRROR, values)).length > 0;
  const outbox = insertPart(sql, rowsOf(OutboxMessageSchema, events), 15);
  const rows = await query(
    `with u as (${WRITE_MIRROR}), o as (${outbox.text} where exists (select 1 from u)) select id from u`,
    [...values, outbox.value],
  );
  return rows.length > 0;
}
