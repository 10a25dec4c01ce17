import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { OrderEvents, type ChargeState, type OrderStatus } from '@seller-api/contracts';
import { enqueue } from '@seller-api/service-kit';
import { OrderItemSchema, OrderSchema } from '../db/entities';
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

/**
 * The one place where an order's status changes after creation. Payments decides the money state;
 * this mirrors it, from the internal action answer or from the internal event, whichever comes first
 * (the version makes the second a no-op), and emits the public order.* event in the same transaction.
 * A MED rejected back to PAID does not emit order.paid again (docs/orders.md, "Order status").
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
