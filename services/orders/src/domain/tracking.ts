import {
  MESSAGES,
  OrderItemEvents,
  type ShippingStatus,
  type TrackingUpdateRequest,
} from '@seller-api/contracts';
import { badRequest, type OutgoingMessage } from '@seller-api/service-kit';
import type { OrderItemRow, OrderRow } from '../db/entities';
import { EXCHANGE } from '../events/topology';
import { itemEventData, orderHeaders, type ItemEventName } from '../events/payloads';

export interface ItemChange {
  item: OrderItemRow;
  events: ItemEventName[];
}

/**
 * The shipping rules (docs/orders.md, "Update tracking") as a pure function: the code and status sent
 * apply to every item; SHIPPED with a code emits order_item.shipped unless nothing changed; the first
 * DELIVERED of an item emits order_item.delivered and fills the order's delivered_at; an order without
 * items cannot be tracked (400). Mutates and reports.
 */
export function applyTracking(
  order: OrderRow,
  items: OrderItemRow[],
  update: TrackingUpdateRequest,
  now: Date,
): ItemChange[] {
  if (items.length === 0) {
    throw badRequest('This order has no items to track.', {
      non_field_errors: [MESSAGES.trackingNeedsItems],
    });
  }
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

/** The order_item.* events of the changes, item by item, in the order applyTracking reported them. */
export function trackingEvents(order: OrderRow, changes: ItemChange[]): OutgoingMessage[] {
  return changes.flatMap(({ item, events }) =>
    events.map((name) => ({
      exchange: EXCHANGE,
      routingKey: name,
      payload: itemEventData(name, order, item),
      headers: orderHeaders(order),
    })),
  );
}
