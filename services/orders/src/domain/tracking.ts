import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import {
  MESSAGES,
  OrderItemEvents,
  type ShippingStatus,
  type TrackingUpdateRequest,
} from '@seller-api/contracts';
import { badRequest, enqueue } from '@seller-api/service-kit';
import { OrderItemSchema, OrderSchema, type OrderItemRow, type OrderRow } from '../db/entities';
import { EXCHANGE } from '../events/topology';
import { itemEventData, orderHeaders, type ItemEventName } from '../events/payloads';
import { assertOwned, type Scope } from '@seller-api/service-kit';

export interface ItemChange {
  item: OrderItemRow;
  events: ItemEventName[];
}

/**
 * The shipping rules (docs/orders.md, "Update tracking") as a pure function: the code and status sent
 * apply to every item; SHIPPED with a code emits order_item.shipped unless nothing changed; the first
 * DELIVERED of an item emits order_item.delivered and fills the order's delivered_at. Mutates and reports.
 */
export function applyTracking(
  order: OrderRow,
  items: OrderItemRow[],
  update: TrackingUpdateRequest,
  now: Date,
): ItemChange[] {
  const changes = items.map((item) => {
    const events: ItemEventName[] = [];
    const code = update.tracking_code ?? item.trackingCode;
    const status: ShippingStatus | null = update.shipping_status ?? item.shippingStatus;
    const shippedNow =
      status === 'SHIPPED' &&
      code !== null &&
      (item.shippingStatus !== 'SHIPPED' || item.trackingCode !== code);
    const deliveredNow = status === 'DELIVERED' && item.shippingStatus !== 'DELIVERED';
    item.trackingCode = code;
    item.shippingStatus = status;
    if (shippedNow) {
      item.shippedAt = now;
      events.push(OrderItemEvents.SHIPPED);
    }
    if (deliveredNow) {
      item.deliveredAt ??= now;
      events.push(OrderItemEvents.DELIVERED);
    }
    return { item, events };
  });
  const first = items[0];
  order.trackingCode = first?.trackingCode ?? null;
  order.shippingStatus = first?.shippingStatus ?? null;
  if (update.shipping_status === 'DELIVERED') order.deliveredAt ??= now;
  if (update.signed_by !== undefined) order.signedBy = update.signed_by;
  if (update.estimated_delivery_date !== undefined)
    order.estimatedDeliveryDate = update.estimated_delivery_date;
  return changes;
}

/** `PATCH /sellers/orders/{uuid}/tracking/`: one transaction, the order row locked against a concurrent update. */
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
    if (items.length === 0) {
      throw badRequest('This order has no items to track.', {
        non_field_errors: [MESSAGES.trackingNeedsItems],
      });
    }
    const changes = applyTracking(order, items, update, new Date());
    for (const { item, events } of changes) {
      for (const name of events) {
        enqueue(tx, {
          exchange: EXCHANGE,
          routingKey: name,
          payload: itemEventData(name, order, item),
          headers: orderHeaders(order),
        });
      }
    }
  });
}
