import {
  OrderEventData,
  OrderItemDeliveredData,
  OrderItemShippedData,
  maskEmail,
  maskTaxId,
  type OrderItemEvents,
} from '@seller-api/contracts';
import type { OrderItemRow, OrderRow } from '../db/entities';
import { orderDueDate } from '../domain/due-date';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** What an order.* event says of the order (orderEventData, orderHeaders). */
export type EventOrder = Pick<
  OrderRow,
  | 'id'
  | 'sellerId'
  | 'environment'
  | 'sellerName'
  | 'status'
  | 'method'
  | 'grossAmount'
  | 'shippingAmount'
  | 'discountAmount'
  | 'feeAmount'
  | 'netAmount'
  | 'createdAt'
  | 'paidAt'
  | 'affiliateName'
  | 'customerName'
  | 'customerTaxId'
  | 'customerTaxIdType'
  | 'customerEmail'
  | 'postbackUrl'
  | 'dueDateTerms'
  | 'effectiveDueDate'
  | 'lastPayableDate'
  | 'amountPaid'
>;

/** What an order.* event says of each item. */
export type EventItem = Pick<OrderItemRow, 'productId' | 'name' | 'quantity' | 'price' | 'lineTotalAmount'>;

/**
 * The `data` of every order.* event (docs/events.md): what the webhook body will carry, masked, with
 * no internal ids. Parsed with the contract so a drift fails here, not at a receiver.
 */
export function orderEventData(order: EventOrder, items: EventItem[], now = new Date()): OrderEventData {
  return OrderEventData.parse({
    order: {
      uuid: order.id,
      status: order.status,
      method: order.method,
      gross_amount: order.grossAmount,
      shipping_amount: order.shippingAmount,
      discount_amount: order.discountAmount,
      fee_amount: order.feeAmount,
      net_amount: order.netAmount,
      created_at: order.createdAt.toISOString(),
      paid_at: iso(order.paidAt),
      // Always sent, null when not applicable (an immediate charge; not paid yet).
      due_date: orderDueDate(order, now),
      amount_paid: order.amountPaid ?? null,
    },
    seller: { name: order.sellerName ?? '' },
    ...(order.affiliateName ? { affiliate: { name: order.affiliateName } } : {}),
    customer: {
      name: order.customerName,
      tax_id: maskTaxId(order.customerTaxId),
      tax_id_type: order.customerTaxIdType,
      email: maskEmail(order.customerEmail),
    },
    items: items.map((item) => ({
      product_uuid: item.productId,
      product_name: item.name,
      quantity: item.quantity,
      unit_amount: item.price,
      line_total_amount: item.lineTotalAmount,
    })),
  });
}

export type ItemEventName = (typeof OrderItemEvents)[keyof typeof OrderItemEvents];

export function itemEventData(
  name: ItemEventName,
  order: OrderRow,
  item: OrderItemRow,
): OrderItemShippedData | OrderItemDeliveredData {
  const data = {
    order: { uuid: order.id, status: order.status },
    item: {
      product_uuid: item.productId,
      product_name: item.name,
      quantity: item.quantity,
      shipping_status: item.shippingStatus,
      tracking_code: item.trackingCode,
      shipped_at: iso(item.shippedAt),
      delivered_at: iso(item.deliveredAt),
    },
    seller: { name: order.sellerName ?? '' },
  };
  return name === 'order_item.shipped'
    ? OrderItemShippedData.parse(data)
    : OrderItemDeliveredData.parse(data);
}

/** AMQP headers of every message about an order; the dispatcher keeps the postback URL from them. */
export function orderHeaders(
  order: Pick<OrderRow, 'id' | 'sellerId' | 'environment' | 'postbackUrl'>,
): Record<string, string> {
  return {
    'x-seller-id': order.sellerId,
    'x-environment': order.environment,
    'x-order-uuid': order.id,
    ...(order.postbackUrl ? { 'x-postback-url': order.postbackUrl } : {}),
  };
}
