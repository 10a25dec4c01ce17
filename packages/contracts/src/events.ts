import { z } from 'zod';
import { PixKeyType, TaxIdType, cents, datetime, uuid } from './common';
import { OrderStatus, ShippingStatus } from './orders';
import { PaymentMethod, TransactionStatus } from './payments';
import { WithdrawalStatus } from './finance';
import { AmountPaid, AmountDueComponents, OrderDueDateDetail } from './due-date';

// ---------------------------------------------------------------------------------------------------
// Names (docs/events.md, "Catalogue")
// ---------------------------------------------------------------------------------------------------

export const OrderEvents = {
  CREATED: 'order.created',
  PAID: 'order.paid',
  EXPIRED: 'order.expired',
  CANCELLED: 'order.cancelled',
  REFUNDED: 'order.refunded',
  CHARGEBACK: 'order.chargeback',
  // A due-date charge not paid by its effective due date: sent once, the day after (docs/events.md).
  OVERDUE: 'order.overdue',
} as const;

export const OrderItemEvents = {
  SHIPPED: 'order_item.shipped',
  DELIVERED: 'order_item.delivered',
} as const;

export const PaymentEvents = {
  PIX_QR_CODE_CREATED: 'payment.pix_qr_code_created',
  APPROVED: 'payment.approved',
  REFUNDED: 'payment.refunded',
  REFUND_FAILED: 'payment.refund_failed',
} as const;

export const WithdrawalEvents = {
  REQUESTED: 'withdrawal.requested',
  APPROVED: 'withdrawal.approved',
  DENIED: 'withdrawal.denied',
  PROCESSING: 'withdrawal.processing',
  PAID: 'withdrawal.paid',
  FAILED: 'withdrawal.failed',
  CANCELED: 'withdrawal.canceled',
} as const;

/** The 20 public events, in catalogue order. */
export const EVENT_NAMES = [
  OrderEvents.CREATED,
  OrderEvents.PAID,
  OrderEvents.EXPIRED,
  OrderEvents.CANCELLED,
  OrderEvents.REFUNDED,
  OrderEvents.CHARGEBACK,
  OrderEvents.OVERDUE,
  OrderItemEvents.SHIPPED,
  OrderItemEvents.DELIVERED,
  PaymentEvents.PIX_QR_CODE_CREATED,
  PaymentEvents.APPROVED,
  PaymentEvents.REFUNDED,
  PaymentEvents.REFUND_FAILED,
  WithdrawalEvents.REQUESTED,
  WithdrawalEvents.APPROVED,
  WithdrawalEvents.DENIED,
  WithdrawalEvents.PROCESSING,
  WithdrawalEvents.PAID,
  WithdrawalEvents.FAILED,
  WithdrawalEvents.CANCELED,
] as const;
export const EventName = z.enum(EVENT_NAMES);
export type EventName = z.infer<typeof EventName>;

/** The 9 order events a per-order `postback_url` receives (docs/webhooks.md). */
export const POSTBACK_EVENTS = [
  OrderEvents.CREATED,
  OrderEvents.PAID,
  OrderEvents.EXPIRED,
  OrderEvents.CANCELLED,
  OrderEvents.REFUNDED,
  OrderEvents.CHARGEBACK,
  OrderEvents.OVERDUE,
  OrderItemEvents.SHIPPED,
  OrderItemEvents.DELIVERED,
] as const;
export type PostbackEventName = (typeof POSTBACK_EVENTS)[number];

export function isPostbackEvent(name: string): name is PostbackEventName {
  return (POSTBACK_EVENTS as readonly string[]).includes(name);
}

// ---------------------------------------------------------------------------------------------------
// Payloads (docs/events.md). Personal data masked, and no internal ids: only public uuids and names.
// ---------------------------------------------------------------------------------------------------

const SellerRef = z.object({ name: z.string() });
const OrderRef = z.object({ uuid, status: OrderStatus });

/** order.paid as docs/events.md shows it; every other order.* event carries the same shape. */
export const OrderEventData = z.object({
  order: z.object({
    uuid,
    status: OrderStatus,
    method: PaymentMethod.nullable(),
    gross_amount: cents,
    shipping_amount: cents,
    discount_amount: cents,
    fee_amount: cents,
    net_amount: cents,
    created_at: datetime,
    paid_at: datetime.nullable(),
    // Absent from an orders service of an earlier release; null for an immediate charge.
    due_date: OrderDueDateDetail.nullable().optional().meta({
      description: "A due-date charge's terms and dates; null for an immediate charge",
    }),
    // Absent from an orders service of an earlier release; null until paid.
    amount_paid: AmountPaid.nullable().optional().meta({
      description: 'What the payment paid, with its components; fee_amount and net_amount are of it',
    }),
  }),
  seller: SellerRef,
  // Absent when the sale did not come through an affiliate, as parties.affiliate (docs/orders.md).
  affiliate: z.object({ name: z.string() }).optional(),
  customer: z.object({
    name: z.string(),
    tax_id: z.string().meta({ description: 'Masked: 123.***.***-00 or 12.3**.***/****-00' }),
    tax_id_type: TaxIdType,
    email: z.string().meta({ description: 'Masked: first three characters of the local part kept' }),
  }),
  items: z.array(
    z.object({
      product_uuid: uuid,
      product_name: z.string(),
      quantity: z.int().min(1),
      unit_amount: cents,
      line_total_amount: cents,
    }),
  ),
});
export type OrderEventData = z.infer<typeof OrderEventData>;

const OrderItemEventItem = z.object({
  product_uuid: uuid,
  product_name: z.string(),
  quantity: z.int().min(1),
  shipping_status: ShippingStatus,
  tracking_code: z.string(),
  shipped_at: datetime,
  delivered_at: datetime.nullable(),
});

/** order_item.shipped as docs/events.md shows it (SHIPPED with a tracking code). */
export const OrderItemShippedData = z.object({
  order: OrderRef,
  item: OrderItemEventItem,
  seller: SellerRef,
});
export type OrderItemShippedData = z.infer<typeof OrderItemShippedData>;

/** order_item.delivered: same shape; an item may be delivered without a code or a recorded shipment. */
export const OrderItemDeliveredData = z.object({
  order: OrderRef,
  item: OrderItemEventItem.extend({
    tracking_code: z.string().nullable(),
    shipped_at: datetime.nullable(),
    delivered_at: datetime,
  }),
  seller: SellerRef,
});
export type OrderItemDeliveredData = z.infer<typeof OrderItemDeliveredData>;

const TransactionBase = z.object({
  id: uuid,
  method: PaymentMethod,
  status: TransactionStatus,
  gross_amount: cents,
  fee_amount: cents,
  net_amount: cents,
});

/** payment.pix_qr_code_created: the transaction as created, with its expiry. */
export const PaymentPixQrCodeCreatedData = z.object({
  transaction: TransactionBase.extend({ created_at: datetime, expires_at: datetime }),
  order: OrderRef,
  seller: SellerRef,
});
export type PaymentPixQrCodeCreatedData = z.infer<typeof PaymentPixQrCodeCreatedData>;

/**
 * payment.approved as docs/events.md shows it. gross_amount is the amount paid, which for a due-date
 * charge is the order's amount with its rebate, discount, fine and interest (`components`).
 */
export const PaymentApprovedData = z.object({
  transaction: TransactionBase.extend({
    approved_at: datetime,
    // Absent from a payments service of an earlier release.
    components: AmountDueComponents.optional().meta({
      description: 'What gross_amount is made of: original - rebate - discount + fine + interest',
    }),
  }),
  order: OrderRef,
  seller: SellerRef,
});
export type PaymentApprovedData = z.infer<typeof PaymentApprovedData>;

/** payment.refunded: payment.approved plus when it was refunded. */
export const PaymentRefundedData = z.object({
  transaction: TransactionBase.extend({ approved_at: datetime.nullable(), refunded_at: datetime }),
  order: OrderRef,
  seller: SellerRef,
});
export type PaymentRefundedData = z.infer<typeof PaymentRefundedData>;

/**
 * payment.refund_failed: the PSP did not make a seller's refund (API Pix `NAO_REALIZADO`). The order
 * stays PAID, its net is back in the available balance, and the refund may be asked again.
 */
export const PaymentRefundFailedData = z.object({
  transaction: TransactionBase.extend({ approved_at: datetime.nullable() }),
  order: OrderRef,
  refund: z.object({
    amount: cents,
    requested_at: datetime,
    failed_at: datetime,
    reason: z.string().nullable().meta({ description: "The PSP's reason, when it gave one" }),
  }),
  seller: SellerRef,
});
export type PaymentRefundFailedData = z.infer<typeof PaymentRefundFailedData>;

const WithdrawalEventWithdrawal = z.object({
  uuid,
  status: WithdrawalStatus,
  gross_amount: cents,
  requested_at: datetime,
  // Null until an operator approves or denies it (withdrawal.requested).
  decided_at: datetime.nullable(),
});
const BankData = z.object({
  pix_key: z.string().meta({ description: 'Masked according to pix_key_type' }),
  pix_key_type: PixKeyType,
});

/** withdrawal.paid as docs/events.md shows it; requested, approved and processing share it. */
export const WithdrawalEventData = z.object({
  withdrawal: WithdrawalEventWithdrawal,
  bank_data: BankData,
  seller: SellerRef,
});
export type WithdrawalEventData = z.infer<typeof WithdrawalEventData>;

/**
 * withdrawal.denied, withdrawal.failed and withdrawal.canceled: the same plus why (deny reason, payout
 * failure or the operator's reason for canceling).
 */
export const WithdrawalReasonEventData = z.object({
  withdrawal: WithdrawalEventWithdrawal.extend({ reason: z.string().nullable() }),
  bank_data: BankData,
  seller: SellerRef,
});
export type WithdrawalReasonEventData = z.infer<typeof WithdrawalReasonEventData>;

/** The `data` schema of each event, so a producer can validate a payload by name. */
export const EVENT_PAYLOADS = {
  'order.created': OrderEventData,
  'order.paid': OrderEventData,
  'order.expired': OrderEventData,
  'order.cancelled': OrderEventData,
  'order.refunded': OrderEventData,
  'order.chargeback': OrderEventData,
  'order.overdue': OrderEventData,
  'order_item.shipped': OrderItemShippedData,
  'order_item.delivered': OrderItemDeliveredData,
  'payment.pix_qr_code_created': PaymentPixQrCodeCreatedData,
  'payment.approved': PaymentApprovedData,
  'payment.refunded': PaymentRefundedData,
  'payment.refund_failed': PaymentRefundFailedData,
  'withdrawal.requested': WithdrawalEventData,
  'withdrawal.approved': WithdrawalEventData,
  'withdrawal.denied': WithdrawalReasonEventData,
  'withdrawal.processing': WithdrawalEventData,
  'withdrawal.paid': WithdrawalEventData,
  'withdrawal.failed': WithdrawalReasonEventData,
  'withdrawal.canceled': WithdrawalReasonEventData,
} as const satisfies { [K in EventName]: z.ZodType };

/** The `data` type of event `K`. */
export type EventPayload<K extends EventName> = z.infer<(typeof EVENT_PAYLOADS)[K]>;

// ---------------------------------------------------------------------------------------------------
// Envelope (docs/webhooks.md, "Envelope")
// ---------------------------------------------------------------------------------------------------

/** Body of every webhook delivery; `data` checked per event with `EVENT_PAYLOADS` or `eventEnvelope`. */
export const EventEnvelope = z.object({
  event: EventName,
  occurred_at: datetime,
  delivery_attempt: z.int().min(1),
  data: z.record(z.string(), z.unknown()),
});
export type EventEnvelope = z.infer<typeof EventEnvelope>;

/** Envelope of one event with its typed `data`. */
export function eventEnvelope<K extends EventName>(name: K) {
  return z.object({
    event: z.literal(name),
    occurred_at: datetime,
    delivery_attempt: z.int().min(1),
    data: EVENT_PAYLOADS[name],
  });
}
export type TypedEventEnvelope<K extends EventName> = {
  event: K;
  occurred_at: string;
  delivery_attempt: number;
  data: EventPayload<K>;
};

/** Validates `data` for event `name`; throws a ZodError naming every bad field. */
export function parseEventPayload<K extends EventName>(name: K, data: unknown): EventPayload<K> {
  // TypeScript cannot tie the schema picked by `name` to `K` (a correlated union), hence the cast.
  return EVENT_PAYLOADS[name].parse(data) as EventPayload<K>;
}

/** Delivery headers (docs/webhooks.md, "Headers"); the signature pair only for global webhooks. */
export const WEBHOOK_HEADERS = {
  EVENT: 'X-Webhook-Event',
  EVENT_ID: 'X-Webhook-Event-Id',
  SIGNATURE: 'X-Webhook-Signature',
  TIMESTAMP: 'X-Webhook-Timestamp',
} as const;
/**
 * The Standard Webhooks headers (standardwebhooks.com) a signed delivery also carries, beside
 * WEBHOOK_HEADERS: `webhook-id` is the event id, `webhook-timestamp` the same unix seconds as
 * X-Webhook-Timestamp, `webhook-signature` `v1,` and the base64 HMAC-SHA256 keyed by the secret's bytes.
 */
export const STANDARD_WEBHOOK_HEADERS = {
  ID: 'webhook-id',
  TIMESTAMP: 'webhook-timestamp',
  SIGNATURE: 'webhook-signature',
} as const;
export const WEBHOOK_USER_AGENT = 'Webhooks/1.0';
