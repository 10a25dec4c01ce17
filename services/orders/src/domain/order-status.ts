import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { OrderEvents, type ChargeRefund, type ChargeState, type OrderStatus } from '@seller-api/contracts';
import { enqueue } from '@seller-api/service-kit';
import { OrderItemSchema, OrderSchema, type OrderRow } from '../db/entities';
import { orderEventData, orderHeaders } from '../events/payloads';
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

/**
 * The one place where an order's status changes after creation. Payments decides the money state;
 * this mirrors it, from the internal action answer or from the internal event, whichever comes first
 * (the version makes the second a no-op), and emits the public order.* event in the same transaction.
 * A MED rejected back to PAID does not emit order.paid again (docs/orders.md, "Order status"). A newer
 * version may change the refund alone (in progress at the PSP, or failed there), with the same status:
 * the refund is mirrored before the status is compared.
 */
export async function applyChargeState(em: EntityManager, state: ChargeState): Promise<boolean> {
  return em.transactional(async (tx) => {
    const order = await tx.findOne(
      OrderSchema,
      { id: state.order_uuid },
      { lockMode: LockMode.PESSIMISTIC_WRITE },
    );
    if (!order || state.version <= order.chargeVersion) return false;
    const previous = order.status;
    order.chargeVersion = state.version;
    mirrorRefund(order, state.refund);
    if (previous === state.status) return true;
    order.status = state.status;
    if (state.status === 'PAID' && !order.paidAt && state.paid_at) order.paidAt = new Date(state.paid_at);
    const event = EVENT_OF[state.status];
    const repeatOfPaid = state.status === 'PAID' && previous === 'MED';
    if (event && !repeatOfPaid) {
      const items = await tx.find(OrderItemSchema, { orderId: order.id }, { orderBy: { position: 'asc' } });
      enqueue(tx, {
        exchange: EXCHANGE,
        routingKey: event,
        payload: orderEventData(order, items),
        headers: orderHeaders(order),
      });
    }
    return true;
  });
}
