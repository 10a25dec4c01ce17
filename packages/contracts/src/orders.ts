import { z } from 'zod';
import { strictInput } from './strict';
import {
  ListQuery,
  MAX_AMOUNT,
  MAX_INT_COLUMN,
  TaxIdType,
  cents,
  dataResponse,
  date,
  dateOrDatetimeInput,
  datetime,
  datetimeInput,
  httpUrl,
  listResponse,
  unlessMissing,
  uuid,
} from './common';
import { OrderStatus } from './order-status';
import { PaymentMethod, PixCharge, RefundStatus } from './payments';
import { MESSAGES, message } from './messages';
import {
  AmountPaid,
  DEFAULT_DAYS_AFTER_DUE,
  DUE_DATE_SIBLINGS,
  DUE_DATE_TERMS_SHAPE,
  OrderDueDateDetail,
  addDueDateTermsIssues,
  dueDateTermsOutput,
  dueDateTermsRecord,
  type DueDateTermsRecord,
} from './due-date';
import { cleanTaxId, isRepeated, isValidCnpj, isValidCpf, taxIdTypeOf } from './taxid';
import { isTimeZone, timeZoneName, timeZoneOffsetMs } from './time-zones';

// ---------------------------------------------------------------------------------------------------
// Statuses
// ---------------------------------------------------------------------------------------------------

export { OrderStatus } from './order-status';

/** `payment.status` of the order detail, detail spelling (CANCELED, one L) (docs/orders.md). */
export const PaymentStatus = z.enum([
  'PROCESSING',
  'PENDING',
  'PAID',
  'REFUSED',
  'REFUNDED',
  'CANCELED',
  'EXPIRED',
  'MED',
  'CHARGEBACK',
]);
export type PaymentStatus = z.infer<typeof PaymentStatus>;

/** The detail's `payment.status` for each order status: the spellings differ only for cancel. */
export const PAYMENT_STATUS_OF_ORDER: { readonly [K in OrderStatus]: PaymentStatus } = {
  PENDING: 'PENDING',
  PAID: 'PAID',
  EXPIRED: 'EXPIRED',
  CANCELLED: 'CANCELED',
  REFUNDED: 'REFUNDED',
  CHARGEBACK: 'CHARGEBACK',
  MED: 'MED',
};

/** Shipping status of items; a tracking update sets it on every item (docs/orders.md). */
export const ShippingStatus = z.enum(['AWAITING_SHIPMENT', 'SHIPPED', 'DELIVERED', 'RETURNED', 'LOST']);
export type ShippingStatus = z.infer<typeof ShippingStatus>;

// ---------------------------------------------------------------------------------------------------
// Create order (docs/orders.md, "Create an order")
// ---------------------------------------------------------------------------------------------------

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const text = z.string().trim().min(1).max(255);

/**
 * A CPF or CNPJ: punctuation removed, then length and check digits verified, so the issue lands on
 * the field itself (`customer.tax_id`, `payment.debtor_document`). The output is the cleaned value.
 */
export const taxIdInput = z
  .string()
  .overwrite(cleanTaxId)
  .superRefine((clean, ctx) => {
    const type = taxIdTypeOf(clean);
    if (type === null) {
      ctx.addIssue({ code: 'custom', message: MESSAGES.taxIdLength });
    } else if (isRepeated(clean)) {
      // Its check digits may well add up: the repetition is the reason, so that is what is said.
      ctx.addIssue({ code: 'custom', message: message('taxIdRepeated', { type }) });
    } else if (!(type === 'CPF' ? isValidCpf(clean) : isValidCnpj(clean))) {
      ctx.addIssue({ code: 'custom', message: message('taxIdCheckDigits', { type }) });
    }
  })
  .meta({ description: 'CPF (11 digits) or CNPJ (14 characters); punctuation is ignored' });

/** `12345678` or `12345-678`; stored and shown as `12345-678` (docs/orders.md). */
const postalCode = z
  .string()
  .regex(/^\d{5}-?\d{3}$/, { error: MESSAGES.postalCode })
  .overwrite((value) => (/^\d{8}$/.test(value) ? `${value.slice(0, 5)}-${value.slice(5)}` : value));

export const AddressInput = z.object({
  street: text,
  number: z.string().trim().min(1).max(20).optional(),
  complement: z.string().trim().max(255).nullable().optional(),
  neighborhood: text,
  city: text,
  state: z.string().regex(/^[A-Z]{2}$/, { error: MESSAGES.state }),
  postal_code: postalCode,
  country: z
    .string()
    .regex(/^[A-Z]{2}$/, { error: MESSAGES.country })
    .default('BR'),
});
export type AddressInput = z.infer<typeof AddressInput>;

/**
 * The single-string address of the detail: `street, number, neighborhood, city, state, postal_code,
 * country`, number `S/N` when absent and the complement kept as `number - complement` (docs/orders.md).
 */
export function formatAddress(address: AddressInput): string {
  const number = address.number ?? 'S/N';
  const complement = address.complement?.trim();
  return [
    address.street,
    complement ? `${number} - ${complement}` : number,
    address.neighborhood,
    address.city,
    address.state,
    address.postal_code,
    address.country,
  ].join(', ');
}

export const CustomerInput = z
  .object({
    name: text,
    tax_id: taxIdInput,
    tax_id_type: TaxIdType.optional(),
    email: z.email({ error: unlessMissing(MESSAGES.email) }).max(254),
    // Shown as "" when none was sent (docs/orders.md).
    phone: z.string().trim().max(40).default(''),
    // Required for physical products, which only the domain can know (docs/orders.md).
    address: AddressInput.nullable().optional(),
  })
  .superRefine(
    (customer, ctx) => {
      const deduced = taxIdTypeOf(cleanTaxId(customer.tax_id));
      if (customer.tax_id_type !== undefined && deduced !== null && customer.tax_id_type !== deduced) {
        ctx.addIssue({
          code: 'custom',
          path: ['tax_id_type'],
          message: message('taxIdTypeMismatch', { type: deduced }),
        });
      }
    },
    // Runs even when other customer fields failed, so every problem is reported at once.
    {
      when: (payload) =>
        isRecord(payload.value) &&
        typeof payload.value.tax_id === 'string' &&
        TaxIdType.safeParse(payload.value.tax_id_type).success,
    },
  )
  // Deduce the type from the length when omitted: downstream code always gets it.
  .transform((customer) => ({
    ...customer,
    tax_id_type: customer.tax_id_type ?? taxIdTypeOf(customer.tax_id) ?? 'CPF',
  }));
export type CustomerInput = z.infer<typeof CustomerInput>;

export const OrderItemInput = z.object({
  product_uuid: uuid,
  // The item's `quantity` column is an int; quantity times the price is bounded by the domain.
  quantity: z.int().min(1).max(MAX_INT_COLUMN),
});
export type OrderItemInput = z.infer<typeof OrderItemInput>;

export const MAX_ORDER_ITEMS = 100;

export const OrderPaymentInput = z.object({
  gross_amount: z.int().min(1).max(MAX_AMOUNT).optional().meta({
    description: 'Cents. Required when items is empty or omitted; when omitted with items, computed',
  }),
  shipping_amount: cents.max(MAX_AMOUNT).default(0),
  discount_amount: cents.max(MAX_AMOUNT).default(0),
  // Future and at most 30 days away are checked by the domain, which knows the clock (docs/orders.md).
  expiration_date: dateOrDatetimeInput.optional(),
  debtor_name: text.optional(),
  debtor_document: taxIdInput.optional(),
  // A due-date charge (docs/pix.md, "Due-date charges"): due_date and its terms, instead of
  // expiration_date; debtor_name and debtor_document required with it (CreateOrderRequest).
  ...DUE_DATE_TERMS_SHAPE,
  due_date: DUE_DATE_TERMS_SHAPE.due_date.optional(),
  days_after_due: DUE_DATE_TERMS_SHAPE.days_after_due.removeDefault().optional().meta({
    description:
      'With due_date: payable for this many days after the effective due date; default 30, at most 365',
  }),
});
export type OrderPaymentInput = z.infer<typeof OrderPaymentInput>;

type IssueSink = Parameters<typeof addDueDateTermsIssues>[1];

/**
 * The rules between a payment's fields for a due-date charge: due_date is not taken with
 * expiration_date (both named), needs debtor_name and debtor_document, and its siblings need it; the
 * terms' own cross-field rules (addDueDateTermsIssues). Reads the raw payment: runs over a body whose
 * other parts failed, so every problem comes back at once.
 */
function addPaymentDueDateIssues(payment: Record<string, unknown>, ctx: IssueSink): void {
  const issue = (field: string, text: string) =>
    ctx.addIssue({ code: 'custom', path: ['payment', field], message: text });
  if (payment.due_date === undefined) {
    for (const field of DUE_DATE_SIBLINGS)
      if (payment[field] !== undefined) issue(field, message('onlyWithField', { field: 'due_date' }));
    return;
  }
  if (payment.expiration_date !== undefined) {
    issue('expiration_date', message('notWithField', { field: 'due_date' }));
    issue('due_date', message('notWithField', { field: 'expiration_date' }));
  }
  for (const field of ['debtor_name', 'debtor_document'])
    if (payment[field] === undefined || payment[field] === null)
      issue(field, message('requiredWithField', { field: 'due_date' }));
  addDueDateTermsIssues(payment, ctx, ['payment']);
}

/** The due-date terms of a checked payment, every field present; null for an immediate charge. */
export function dueDateTermsOfPayment(payment: OrderPaymentInput): DueDateTermsRecord | null {
  if (payment.due_date === undefined) return null;
  return dueDateTermsRecord(
    dueDateTermsOutput({
      ...payment,
      due_date: payment.due_date,
      days_after_due: payment.days_after_due ?? DEFAULT_DAYS_AFTER_DUE,
    }),
  );
}

export const GROSS_AMOUNT_REQUIRED_MESSAGE = MESSAGES.grossAmountRequired;

/**
 * `POST /sellers/orders/` body. Rules that need product data (address for physical products,
 * unknown `product_uuid`, discount above subtotal + shipping) are left to the domain.
 */
export const CreateOrderRequest = strictInput(
  z
    .object({
      customer: CustomerInput,
      items: z
        .array(OrderItemInput)
        .max(MAX_ORDER_ITEMS)
        .default([])
        .meta({ description: 'Omit or send [] for a standalone charge' }),
      payment: OrderPaymentInput,
      postback_url: httpUrl.max(2048).nullable().default(null),
      // Extension: the affiliate link code a sale came through; shown as parties.affiliate.name.
      affiliate_code: z.string().trim().min(1).max(64).optional(),
    })
    .superRefine(
      (body, ctx) => {
        // Read as unknown: with `when`, this also runs over a body whose other parts failed.
        const raw: unknown = body;
        if (!isRecord(raw) || !isRecord(raw.payment)) return;
        const standalone = raw.items === undefined || (Array.isArray(raw.items) && raw.items.length === 0);
        if (standalone && raw.payment.gross_amount === undefined) {
          ctx.addIssue({
            code: 'custom',
            path: ['payment', 'gross_amount'],
            message: GROSS_AMOUNT_REQUIRED_MESSAGE,
          });
        }
        addPaymentDueDateIssues(raw.payment, ctx);
      },
      { when: (payload) => isRecord(payload.value) },
    ),
);
export type CreateOrderRequest = z.infer<typeof CreateOrderRequest>;
export type CreateOrderInput = z.input<typeof CreateOrderRequest>;

/** `data` of the 201 create-order response (docs/orders.md, "Answer"). */
export const CreatedOrder = z.object({
  uuid,
  status: OrderStatus,
  gross_amount: cents,
  postback_url: z.string().nullable(),
  items: z.array(
    z.object({
      product_uuid: uuid.meta({
        description:
          "The product's uuid, as sent in items[].product_uuid; the order detail shows the same value " +
          'as items[].uuid (an item has no id of its own)',
      }),
      name: z.string(),
      quantity: z.int().min(1),
      line_total_amount: cents,
    }),
  ),
  customer: z.object({ uuid, name: z.string() }),
  pix: PixCharge,
});
export type CreatedOrder = z.infer<typeof CreatedOrder>;
export const CreateOrderResponse = dataResponse(CreatedOrder);
export type CreateOrderResponse = z.infer<typeof CreateOrderResponse>;

// ---------------------------------------------------------------------------------------------------
// Order detail (docs/orders.md, "Read an order")
// ---------------------------------------------------------------------------------------------------

export const OrderItemDetail = z.object({
  uuid: uuid.nullable().meta({
    description:
      "The product's uuid: the value create-order took and answered as items[].product_uuid, named " +
      "uuid here as in the product's own record (an item has no id of its own)",
  }),
  name: z.string().nullable(),
  images: z.array(z.string()),
  price: cents,
  quantity: z.int().min(1),
  line_total_amount: cents,
  commission_unit_amount: cents,
  commission_total_amount: cents,
  tracking_code: z.string().nullable(),
  shipping_status: ShippingStatus.nullable(),
});
export type OrderItemDetail = z.infer<typeof OrderItemDetail>;

export const OrderCustomerDetail = z.object({
  name: z.string(),
  tax_id: z.string(),
  tax_id_type: TaxIdType,
  email: z.string(),
  phone: z.string(),
  address: z.string().nullable(),
});
export type OrderCustomerDetail = z.infer<typeof OrderCustomerDetail>;

/**
 * `payment.refund` of the order detail: the latest refund the seller asked, as the PSP has it
 * (docs/orders.md, "Refund an order").
 */
export const OrderRefundDetail = z
  .object({
    status: RefundStatus.meta({
      description:
        'PROCESSING: the PSP accepted the refund and has not finished it (the order stays PAID); ' +
        'REFUNDED: the PSP returned the money (the order is REFUNDED); FAILED: the PSP did not make it ' +
        '(the order stays PAID and may be refunded again)',
    }),
    amount: cents.meta({ description: 'The amount returned to the payer, in cents' }),
    requested_at: datetime.meta({ description: 'When this refund was asked of the PSP' }),
    updated_at: datetime.meta({ description: 'When its status last changed' }),
    failure_reason: z
      .string()
      .nullable()
      .meta({ description: "FAILED only: the PSP's reason, when it gave one; null otherwise" }),
  })
  .meta({
    description: 'The latest refund of the order and where it stands at the PSP.',
  });
export type OrderRefundDetail = z.infer<typeof OrderRefundDetail>;

export const OrderPaymentDetail = z.object({
  subtotal_amount: cents,
  shipping_amount: cents,
  discount_amount: cents,
  commission_amount: cents,
  gross_amount: cents,
  fee_amount: cents,
  net_amount: cents,
  method: PaymentMethod.nullable(),
  status: PaymentStatus,
  // When a PENDING order becomes EXPIRED (an addition to the detail's payment block).
  expires_at: datetime,
  // Always sent; read as null from an orders service of the previous release (rolling upgrades).
  due_date: OrderDueDateDetail.nullable()
    .default(null)
    .meta({
      description:
        'The terms and dates of a due-date charge (docs/pix.md, "Due-date charges"); null for an ' +
        'immediate charge. expires_at is the end of last_payable_date in São Paulo',
    }),
  amount_paid: AmountPaid.nullable()
    .default(null)
    .meta({
      description:
        'What the payment paid, with its components; null until paid. fee_amount and net_amount are ' +
        'of this amount',
    }),
  // Always sent; read as null from an orders service of the previous release (rolling upgrades).
  refund: OrderRefundDetail.nullable()
    .default(null)
    .meta({ description: 'The latest refund, or null when none was asked' }),
});
export type OrderPaymentDetail = z.infer<typeof OrderPaymentDetail>;

export const PartyName = z.object({ name: z.string() });
export type PartyName = z.infer<typeof PartyName>;

/** Sub-objects are absent (not null) when there is no data (docs/orders.md, "Read an order"). */
export const OrderParties = z.object({
  producer: PartyName.optional(),
  seller: PartyName.optional(),
  affiliate: PartyName.optional(),
});
export type OrderParties = z.infer<typeof OrderParties>;

export const OrderTimestamps = z.object({
  created_at: datetime,
  paid_at: datetime.nullable(),
});
export type OrderTimestamps = z.infer<typeof OrderTimestamps>;

export const OrderDelivery = z.object({
  estimated_delivery_date: date.nullable(),
  delivered_at: datetime.nullable(),
  signed_by: z.string().nullable(),
});
export type OrderDelivery = z.infer<typeof OrderDelivery>;

/** `data` of `GET /sellers/orders/{uuid}/`. */
export const OrderDetail = z.object({
  uuid,
  items: z.array(OrderItemDetail),
  customer: OrderCustomerDetail,
  payment: OrderPaymentDetail,
  parties: OrderParties,
  timestamps: OrderTimestamps,
  delivery: OrderDelivery,
  // Always sent; read as null from an orders service of the previous release (rolling upgrades).
  pix: PixCharge.nullable()
    .default(null)
    .meta({
      description:
        'The PIX charge to pay, as the create-order answer gave it (same BR Code and QR image), while ' +
        'it can be paid: the order is PENDING and expires_at has not passed. null otherwise (paid, ' +
        'expired, cancelled, refunded...). qr_code_image_base64 is null for an order created before ' +
        'the image was kept with the order',
    }),
});
export type OrderDetail = z.infer<typeof OrderDetail>;
export const OrderDetailResponse = dataResponse(OrderDetail);
export type OrderDetailResponse = z.infer<typeof OrderDetailResponse>;

// ---------------------------------------------------------------------------------------------------
// Order list (docs/orders.md, "List orders")
// ---------------------------------------------------------------------------------------------------

/**
 * `customer_tax_id` of the list: a CPF (11 digits) or CNPJ (14 characters), punctuation ignored, as
 * orders store it. Check digits are not verified: a search for a wrong one simply finds nothing.
 */
export const customerTaxIdSearch = z
  .string()
  .overwrite(cleanTaxId)
  .refine((clean) => taxIdTypeOf(clean) !== null, {
    error: MESSAGES.taxIdSearch,
  })
  .meta({ description: 'CPF or CNPJ of the customer; punctuation is ignored' });

export const OrderListItem = z.object({
  uuid,
  status: OrderStatus,
  created_at: datetime,
  paid_at: datetime.nullable(),
  customer: z.object({ name: z.string(), email: z.string() }),
  payment: z.object({
    status: PaymentStatus,
    method: PaymentMethod.nullable(),
    gross_amount: cents,
    shipping_amount: cents,
  }),
  tracking: z.object({
    tracking_code: z.string().nullable(),
    shipping_status: ShippingStatus.nullable(),
  }),
});
export type OrderListItem = z.infer<typeof OrderListItem>;

export const OrderList = listResponse(OrderListItem);
export type OrderList = z.infer<typeof OrderList>;
export const OrderListResponse = dataResponse(OrderList);
export type OrderListResponse = z.infer<typeof OrderListResponse>;

/** `GET /sellers/orders/` query; a date alone in `created_from`/`created_to` is read by the domain. */
export const OrderListQuery = strictInput(
  ListQuery.extend({
    status: OrderStatus.optional(),
    shipping_status: ShippingStatus.optional(),
    created_from: dateOrDatetimeInput.optional(),
    created_to: dateOrDatetimeInput.optional(),
    // Searches: an exact match each, combinable with the filters above and the cursor.
    customer_email: z
      .string()
      .trim()
      .min(1)
      .max(254)
      .optional()
      .meta({ description: "The customer's e-mail, exact but case-insensitive" }),
    customer_tax_id: customerTaxIdSearch.optional(),
  }),
);
export type OrderListQuery = z.infer<typeof OrderListQuery>;

/** `{uuid}` path parameter of every order route. */
export const OrderPathParams = z.object({ uuid });
export type OrderPathParams = z.infer<typeof OrderPathParams>;

// ---------------------------------------------------------------------------------------------------
// Tracking update (docs/orders.md, "Update tracking")
// ---------------------------------------------------------------------------------------------------

export const TRACKING_FIELD_REQUIRED_MESSAGE = MESSAGES.trackingFieldRequired;

/** `PATCH /sellers/orders/{uuid}/tracking/` body; an empty body fails on `non_field_errors`. */
export const TrackingUpdateRequest = strictInput(
  z
    .object({
      tracking_code: z.string().trim().min(1).max(100).optional(),
      shipping_status: ShippingStatus.optional(),
      signed_by: z.string().trim().min(1).max(255).nullable().optional(),
      // An addition to the tracking body: fills delivery.estimated_delivery_date; counts for "at least one".
      estimated_delivery_date: date.optional(),
    })
    .refine((body) => Object.values(body).some((value) => value !== undefined), {
      error: TRACKING_FIELD_REQUIRED_MESSAGE,
      path: [],
    }),
);
export type TrackingUpdateRequest = z.infer<typeof TrackingUpdateRequest>;

// ---------------------------------------------------------------------------------------------------
// Sandbox (docs/pix.md, "Sandbox")
// ---------------------------------------------------------------------------------------------------

/** `POST /sandbox/orders/{uuid}/med/resolve/` body: who the MED was decided for. */
export const MedResolveRequest = strictInput(z.object({ outcome: z.enum(['refunded', 'rejected']) }));
export type MedResolveRequest = z.infer<typeof MedResolveRequest>;

// ---------------------------------------------------------------------------------------------------
// Summary (docs/orders.md, "Summary")
// ---------------------------------------------------------------------------------------------------

export const SummaryGranularity = z.enum(['hour', 'day']);
export type SummaryGranularity = z.infer<typeof SummaryGranularity>;

/** Longest range of a summary per granularity, in days of its time zone's clock (docs/limits.md). */
export const SUMMARY_MAX_DAYS: { readonly [K in SummaryGranularity]: number } = { hour: 7, day: 92 };

const DAY_MS = 86_400_000;

/**
 * `GET /sellers/orders/summary/` query: `from` inclusive, `to` exclusive. The range is measured on the
 * time zone's clock, so that a range of whole local days across a daylight-saving change still counts
 * as that many days.
 */
export const OrderSummaryQuery = strictInput(
  z
    .object({
      from: datetimeInput.meta({ description: 'First instant of the range (inclusive)' }),
      to: datetimeInput.meta({ description: 'End of the range (exclusive)' }),
      granularity: SummaryGranularity.default('day'),
      time_zone: timeZoneName.default('UTC'),
    })
    .superRefine((query, ctx) => {
      const from = Date.parse(query.from);
      const to = Date.parse(query.to);
      const days = SUMMARY_MAX_DAYS[query.granularity] as number | undefined;
      // A field that failed its own check is reported on its own; the range needs all of them.
      if (Number.isNaN(from) || Number.isNaN(to) || days === undefined || !isTimeZone(query.time_zone))
        return;
      if (to <= from) {
        ctx.addIssue({ code: 'custom', path: ['to'], message: MESSAGES.toAfterFrom });
        return;
      }
      const span =
        to + timeZoneOffsetMs(to, query.time_zone) - (from + timeZoneOffsetMs(from, query.time_zone));
      if (span > days * DAY_MS) {
        ctx.addIssue({
          code: 'custom',
          path: ['to'],
          message: message('summaryRange', { days, granularity: query.granularity }),
        });
      }
    }),
);
export type OrderSummaryQuery = z.infer<typeof OrderSummaryQuery>;

/** Counts and amounts of one bucket: what was created and what was paid in it. */
export const OrderSummaryBucket = z.object({
  start: datetime.meta({ description: "The bucket's first instant: an hour or a day of the time zone" }),
  orders_created: z.int().min(0),
  orders_paid: z.int().min(0),
  amount_paid: cents.meta({
    description:
      'What the orders paid in the bucket paid: their gross amounts, or for a due-date charge its amount paid',
  }),
  fees: cents,
  net: cents,
});
export type OrderSummaryBucket = z.infer<typeof OrderSummaryBucket>;

export const OrderSummaryTotals = z.object({
  orders_created: z.int().min(0),
  orders_paid: z.int().min(0),
  orders_expired: z
    .int()
    .min(0)
    .meta({ description: 'Of the orders created in the range, those EXPIRED now' }),
  orders_refunded: z.int().min(0),
  orders_canceled: z.int().min(0),
  amount_paid: cents,
  fees: cents,
  net: cents,
});
export type OrderSummaryTotals = z.infer<typeof OrderSummaryTotals>;

/** `data` of `GET /sellers/orders/summary/`: every bucket of the range, those without orders included. */
export const OrderSummary = z.object({
  from: datetime,
  to: datetime,
  granularity: SummaryGranularity,
  time_zone: z.string(),
  totals: OrderSummaryTotals,
  buckets: z.array(OrderSummaryBucket),
});
export type OrderSummary = z.infer<typeof OrderSummary>;
export const OrderSummaryResponse = dataResponse(OrderSummary);
export type OrderSummaryResponse = z.infer<typeof OrderSummaryResponse>;
