import { OrderEvents, type ChargeRefund, type ChargeState, type OrderStatus } from '@seller-api/contracts';
import { outboxRow, type OutgoingMessage, type Sql, type SqlQuery } from '@seller-api/service-kit';
import { readMirroredOrder, writeMirror } from '../db/charge-mirror';
import type { OrderRow } from '../db/entities';
import { orderEventData, orderHeaders, type EventItem, type EventOrder } from '../events/payloads';
import { EXCHANGE } from '../events/topology';

/** The public event each status emits when an order reaches it (docs/orders.md); MED has none. */
const EVENT_OF: Partial<Record<OrderStatus, string>> = {
  PAID: OrderEvents.PAID,
  EXPIRED: OrderEvents.EXPIRED,
  CANCELLED: OrderEvents.CANCELLED,
  REFUNDED: OrderEvents.REFUNDED,
  CHARGEBACK: OrderEvents.CHARGEBACK,
};

/** The refund columns of an order. */
export type OrderRefund = Pick<
  OrderRow,
  | 'refundStatus'
  | 'refundAttempt'
  | 'refundAmount'
  | 'refundRequestedAt'
  | 'refundUpdatedAt'
  | 'refundFailureReason'
>;

/**
 * Copies the latest refund payments reports onto the order (docs/orders.md, "Refund an order"). A
 * state without one (`undefined`: a payments of an earlier release) or with none yet (`null`) leaves
 * what the order has: a refund once reported is never forgotten by a message that does not speak of
 * it. `hold_seq` is the ledger's (docs/finance.md, "Refunds"), not kept here.
 */
export function mirrorRefund(order: OrderRefund, refund: ChargeRefund | null | undefined): void {
  if (!refund) return;
  order.refundStatus = refund.status;
  order.refundAttempt = refund.attempt;
  order.refundAmount = refund.amount;
  order.refundRequestedAt = new Date(refund.requested_at);
  order.refundUpdatedAt = new Date(refund.updated_at);
  order.refundFailureReason = refund.failure_reason;
}

/** An order as the mirror of its charge state reads and writes it (db/charge-mirror.ts). */
export type MirroredOrder = EventOrder &
  OrderRefund &
  Pick<OrderRow, 'chargeVersion'> & {
    items: EventItem[];
  };

/**
 * What a charge state makes of the order and the public order.* event it emits: null when its version
 * is not newer than the one the order mirrors (nothing changes). A newer version may change the refund
 * alone (in progress at the PSP, or failed there), with the same status: the refund is mirrored before
 * the status is compared. A MED rejected back to PAID does not emit order.paid again (docs/orders.md,
 * "Order status").
 */
export function mirrorChargeState(
  order: MirroredOrder,
  state: ChargeState,
): { order: MirroredOrder; event: OutgoingMessage | null } | null {
  if (state.version <= order.chargeVersion) return null;
  const next: MirroredOrder = { ...order, chargeVersion: state.version };
  mirrorRefund(next, state.refund);
  if (order.status === state.status) return { order: next, event: null };
  next.status = state.status;
  if (state.status === 'PAID' && !next.paidAt && state.paid_at) next.paidAt = new Date(state.paid_at);
  const event = EVENT_OF[state.status];
  const repeatOfPaid = state.status === 'PAID' && order.status === 'MED';
  if (!event || repeatOfPaid) return { order: next, event: null };
  return {
    order: next,
    event: {
      exchange: EXCHANGE,
      routingKey: event,
      payload: orderEventData(next, next.items),
      headers: orderHeaders(next),
    },
  };
}

/**
 * The one place where an order's status changes after creation. Payments decides the money state;
 * this mirrors it, from the internal action answer or from the internal event, whichever comes first
 * (the version makes the second a no-op), and stores the public order.* event with the change
 * (db/charge-mirror.ts: one statement, written only if the order still holds the version read, read
 * again otherwise). `query` runs the statements: the runtime's own, or a transaction's (the consumer
 * records the message id with the change). Answers whether the state was newer; the caller wakes the
 * outbox relay.
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
    const event = next.event && outboxRow(next.event);
    if (await writeMirror(sql, query, order.chargeVersion, next.order, event)) return true;
  }
  throw new Error(`order ${state.order_uuid}: its charge version kept changing under the mirror`);
}
