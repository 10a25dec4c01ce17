import {
  PAYMENT_STATUS_OF_ORDER,
  type Affiliate,
  type CreatedOrder,
  type OrderDetail,
  type OrderListItem,
  type OrderRefundDetail,
  type PixCharge,
  type Product,
} from '@seller-api/contracts';
import type { AffiliateRow, OrderItemRow, OrderRow, ProductRow } from '../db/entities';
import type { CreatedOrderResult } from '../domain/create-order';
import { orderDueDate } from '../domain/due-date';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function presentProduct(p: ProductRow): Product {
  return {
    uuid: p.id,
    name: p.name,
    price: p.price,
    images: p.images,
    type: p.type,
    commission_unit_amount: p.commissionUnitAmount,
    producer_name: p.producerName,
    created_at: p.createdAt.toISOString(),
  };
}

export function presentAffiliate(a: AffiliateRow): Affiliate {
  return { uuid: a.id, code: a.code, name: a.name, created_at: a.createdAt.toISOString() };
}

/** The 201 create-order answer (docs/orders.md, "Answer"). */
export function presentCreatedOrder({ order, items, customerId, charge }: CreatedOrderResult): CreatedOrder {
  return {
    uuid: order.id,
    status: order.status,
    gross_amount: order.grossAmount,
    postback_url: order.postbackUrl,
    items: items.map((i) => ({
      product_uuid: i.productId,
      name: i.name,
      quantity: i.quantity,
      line_total_amount: i.lineTotalAmount,
    })),
    customer: { uuid: customerId, name: order.customerName },
    pix: {
      qr_code_id: charge.txid,
      copy_and_paste: charge.copy_and_paste,
      qr_code_image_base64: charge.qr_code_image_base64,
      transaction_uuid: charge.transaction_uuid,
    },
  };
}

/** The order detail (docs/orders.md): parties without data are absent, never null; no internal ids. */
export function presentOrderDetail(order: OrderRow, items: OrderItemRow[], now = new Date()): OrderDetail {
  return {
    uuid: order.id,
    items: items.map((i) => ({
      uuid: i.productId,
      name: i.name,
      images: i.images,
      price: i.price,
      quantity: i.quantity,
      line_total_amount: i.lineTotalAmount,
      commission_unit_amount: i.commissionUnitAmount,
      commission_total_amount: i.commissionTotalAmount,
      tracking_code: i.trackingCode,
      shipping_status: i.shippingStatus,
    })),
    customer: {
      name: order.customerName,
      tax_id: order.customerTaxId,
      tax_id_type: order.customerTaxIdType,
      email: order.customerEmail,
      phone: order.customerPhone,
      address: order.addressText,
    },
    payment: {
      subtotal_amount: order.subtotalAmount,
      shipping_amount: order.shippingAmount,
      discount_amount: order.discountAmount,
      commission_amount: order.commissionAmount,
      gross_amount: order.grossAmount,
      fee_amount: order.feeAmount,
      net_amount: order.netAmount,
      method: order.method,
      status: PAYMENT_STATUS_OF_ORDER[order.status],
      expires_at: order.expiresAt.toISOString(),
      refund: presentRefund(order),
      // The terms and dates of a due-date charge, overdue as of now (docs/pix.md, "Due-date charges").
      due_date: orderDueDate(order, now),
      amount_paid: order.amountPaid ?? null,
    },
    parties: {
      ...(order.producerName ? { producer: { name: order.producerName } } : {}),
      ...(order.sellerName ? { seller: { name: order.sellerName } } : {}),
      ...(order.affiliateName ? { affiliate: { name: order.affiliateName } } : {}),
    },
    timestamps: { created_at: order.createdAt.toISOString(), paid_at: iso(order.paidAt) },
    delivery: {
      estimated_delivery_date: order.estimatedDeliveryDate,
      delivered_at: iso(order.deliveredAt),
      signed_by: order.signedBy,
    },
    pix: presentPix(order, now),
  };
}

/**
 * `pix` of the detail (docs/orders.md, "Read an order"): the charge as the create answer gave it, kept
 * with the order, while it can be paid. An order still PENDING whose expires_at has passed is about
 * to expire (docs/pix.md, "Expiry"): its code is no longer shown.
 */
function presentPix(order: OrderRow, now: Date): PixCharge | null {
  if (order.status !== 'PENDING' || order.expiresAt.getTime() <= now.getTime()) return null;
  return {
    qr_code_id: order.pixTxid,
    copy_and_paste: order.pixCopyAndPaste,
    qr_code_image_base64: order.pixQrCodeImageBase64,
    transaction_uuid: order.transactionId,
  };
}

/**
 * `payment.refund` of the detail (docs/orders.md, "Refund an order"): the latest refund as payments
 * reported it, or null when none was (or a row of the previous release left a column empty).
 */
function presentRefund(order: OrderRow): OrderRefundDetail | null {
  const { refundStatus: status, refundAmount: amount, refundRequestedAt, refundUpdatedAt } = order;
  if (!status || amount === null || !refundRequestedAt || !refundUpdatedAt) return null;
  return {
    status,
    amount,
    requested_at: refundRequestedAt.toISOString(),
    updated_at: refundUpdatedAt.toISOString(),
    failure_reason: status === 'FAILED' ? order.refundFailureReason : null,
  };
}

/** The list record (docs/orders.md, "List orders"), with tracking grouped in `tracking`. */
export type OrderListRow = Pick<
  OrderRow,
  | 'id'
  | 'status'
  | 'createdAt'
  | 'paidAt'
  | 'customerName'
  | 'customerEmail'
  | 'method'
  | 'grossAmount'
  | 'shippingAmount'
  | 'trackingCode'
  | 'shippingStatus'
>;

export function presentOrderListItem(order: OrderListRow): OrderListItem {
  return {
    uuid: order.id,
    status: order.status,
    created_at: order.createdAt.toISOString(),
    paid_at: iso(order.paidAt),
    customer: { name: order.customerName, email: order.customerEmail },
    payment: {
      status: PAYMENT_STATUS_OF_ORDER[order.status],
      method: order.method,
      gross_amount: order.grossAmount,
      shipping_amount: order.shippingAmount,
    },
    tracking: { tracking_code: order.trackingCode, shipping_status: order.shippingStatus },
  };
}
