import { BigIntType, EntitySchema } from '@mikro-orm/core';
import type {
  AddressInput,
  AmountPaid,
  DueDateTermsRecord,
  Environment,
  OrderStatus,
  PaymentMethod,
  ProductType,
  RefundStatus,
  ShippingStatus,
  TaxIdType,
} from '@seller-api/contracts';

// Amounts are integer cents in bigint columns, read as numbers (they stay far below 2^53).
const money = () => ({ type: new BigIntType('number') });
const timestamp = (nullable = false) => ({ type: 'Date', columnType: 'timestamptz(3)', nullable });

export interface ProductRow {
  id: string;
  sellerId: string;
  environment: Environment;
  name: string;
  price: number;
  images: string[];
  type: ProductType;
  commissionUnitAmount: number;
  producerName: string | null;
  createdAt: Date;
}

export const ProductSchema = new EntitySchema<ProductRow>({
  name: 'Product',
  tableName: 'products',
  properties: {
    id: { type: 'uuid', primary: true },
    sellerId: { type: 'uuid' },
    environment: { type: 'string' },
    name: { type: 'string' },
    price: money(),
    images: { type: 'json' },
    type: { type: 'string' },
    commissionUnitAmount: money(),
    producerName: { type: 'string', nullable: true },
    createdAt: timestamp(),
  },
});

export interface AffiliateRow {
  id: string;
  sellerId: string;
  environment: Environment;
  code: string;
  name: string;
  createdAt: Date;
}

export const AffiliateSchema = new EntitySchema<AffiliateRow>({
  name: 'Affiliate',
  tableName: 'affiliates',
  properties: {
    id: { type: 'uuid', primary: true },
    sellerId: { type: 'uuid' },
    environment: { type: 'string' },
    code: { type: 'string' },
    name: { type: 'string' },
    createdAt: timestamp(),
  },
});

export interface OrderRow {
  id: string;
  sellerId: string;
  environment: Environment;
  sellerName: string | null;
  customerId: string;
  customerName: string;
  customerEmail: string;
  customerPhone: string;
  customerTaxId: string;
  customerTaxIdType: TaxIdType;
  address: AddressInput | null;
  addressText: string | null;
  status: OrderStatus;
  method: PaymentMethod | null;
  subtotalAmount: number;
  shippingAmount: number;
  discountAmount: number;
  commissionAmount: number;
  grossAmount: number;
  feeAmount: number;
  netAmount: number;
  postbackUrl: string | null;
  affiliateName: string | null;
  producerName: string | null;
  debtorName: string | null;
  debtorDocument: string | null;
  transactionId: string;
  pixTxid: string;
  pixCopyAndPaste: string;
  /** The PNG of the QR code as payments rendered it at create; null on orders stored before it was kept. */
  pixQrCodeImageBase64: string | null;
  expiresAt: Date;
  createdAt: Date;
  paidAt: Date | null;
  /** The tracking of every item (they always share it), kept here for the list. */
  trackingCode: string | null;
  shippingStatus: ShippingStatus | null;
  estimatedDeliveryDate: string | null;
  deliveredAt: Date | null;
  signedBy: string | null;
  /** The payments version of the status shown here (domain/order-status.ts). */
  chargeVersion: number;
  /** The latest refund as payments reports it (domain/order-status.ts); all null until one is. */
  refundStatus: RefundStatus | null;
  refundAttempt: number | null;
  refundAmount: number | null;
  refundRequestedAt: Date | null;
  refundUpdatedAt: Date | null;
  refundFailureReason: string | null;
  /** The terms of a due-date charge (docs/pix.md, "Due-date charges"); null for an immediate one. */
  dueDateTerms: DueDateTermsRecord | null;
  /** YYYY-MM-DD in São Paulo: the due date, or the next business day; null for an immediate charge. */
  effectiveDueDate: string | null;
  /** YYYY-MM-DD in São Paulo: the last day the charge can be paid; null for an immediate charge. */
  lastPayableDate: string | null;
  /** When order.overdue was queued (jobs/overdue.ts): it is sent once. */
  overdueNotifiedAt: Date | null;
  /** What the payment paid, as payments reported it on PAID; null before (or on older rows). */
  amountPaid: AmountPaid | null;
}

export const OrderSchema = new EntitySchema<OrderRow>({
  name: 'Order',
  tableName: 'orders',
  properties: {
    id: { type: 'uuid', primary: true },
    sellerId: { type: 'uuid' },
    environment: { type: 'string' },
    sellerName: { type: 'string', nullable: true },
    customerId: { type: 'uuid' },
    customerName: { type: 'string' },
    customerEmail: { type: 'string' },
    customerPhone: { type: 'string' },
    customerTaxId: { type: 'string' },
    customerTaxIdType: { type: 'string' },
    address: { type: 'json', nullable: true },
    addressText: { type: 'string', nullable: true },
    status: { type: 'string' },
    method: { type: 'string', nullable: true },
    subtotalAmount: money(),
    shippingAmount: money(),
    discountAmount: money(),
    commissionAmount: money(),
    grossAmount: money(),
    feeAmount: money(),
    netAmount: money(),
    postbackUrl: { type: 'string', nullable: true },
    affiliateName: { type: 'string', nullable: true },
    producerName: { type: 'string', nullable: true },
    debtorName: { type: 'string', nullable: true },
    debtorDocument: { type: 'string', nullable: true },
    transactionId: { type: 'uuid' },
    pixTxid: { type: 'string' },
    pixCopyAndPaste: { type: 'string' },
    pixQrCodeImageBase64: { type: 'string', nullable: true },
    expiresAt: timestamp(),
    createdAt: timestamp(),
    paidAt: timestamp(true),
    trackingCode: { type: 'string', nullable: true },
    shippingStatus: { type: 'string', nullable: true },
    estimatedDeliveryDate: { type: 'string', columnType: 'date', nullable: true },
    deliveredAt: timestamp(true),
    signedBy: { type: 'string', nullable: true },
    chargeVersion: { type: 'integer' },
    refundStatus: { type: 'string', nullable: true },
    refundAttempt: { type: 'integer', nullable: true },
    refundAmount: { ...money(), nullable: true },
    refundRequestedAt: timestamp(true),
    refundUpdatedAt: timestamp(true),
    refundFailureReason: { type: 'string', nullable: true },
    dueDateTerms: { type: 'json', nullable: true },
    effectiveDueDate: { type: 'string', columnType: 'date', nullable: true },
    lastPayableDate: { type: 'string', columnType: 'date', nullable: true },
    overdueNotifiedAt: timestamp(true),
    amountPaid: { type: 'json', nullable: true },
  },
});

export interface OrderItemRow {
  id: string;
  orderId: string;
  position: number;
  productId: string;
  productType: ProductType;
  name: string;
  images: string[];
  price: number;
  quantity: number;
  lineTotalAmount: number;
  commissionUnitAmount: number;
  commissionTotalAmount: number;
  trackingCode: string | null;
  shippingStatus: ShippingStatus | null;
  shippedAt: Date | null;
  deliveredAt: Date | null;
}

export const OrderItemSchema = new EntitySchema<OrderItemRow>({
  name: 'OrderItem',
  tableName: 'order_items',
  properties: {
    id: { type: 'uuid', primary: true },
    orderId: { type: 'uuid' },
    position: { type: 'integer' },
    productId: { type: 'uuid' },
    productType: { type: 'string' },
    name: { type: 'string' },
    images: { type: 'json' },
    price: money(),
    quantity: { type: 'integer' },
    lineTotalAmount: money(),
    commissionUnitAmount: money(),
    commissionTotalAmount: money(),
    trackingCode: { type: 'string', nullable: true },
    shippingStatus: { type: 'string', nullable: true },
    shippedAt: timestamp(true),
    deliveredAt: timestamp(true),
  },
});

export const entities = [ProductSchema, AffiliateSchema, OrderSchema, OrderItemSchema];
