import { randomUUID } from 'node:crypto';
import {
  MESSAGES,
  CreateOrderRequest,
  DUE_DATE_SIBLINGS,
  DUE_DATE_TERMS_SHAPE,
  OrderEvents,
  OrderPaymentInput,
  dueDateAmountIssues,
  dueDateClockIssues,
  dueDateTermsOfPayment,
  formatAddress,
  message,
  safeParseRequest,
  zodIssuesToFieldErrors,
  type AddressInput,
  type Charge,
  type CreateChargeRequest,
  type DueDateTermsRecord,
  type Environment,
  type TaxIdType,
} from '@seller-api/contracts';
import { calendarPlaceProblem, isIsoDate, todayInSaoPaulo, type CalendarPlace } from '@seller-api/due-date';
import {
  badRequest,
  checkTarget,
  outboxRow,
  type OutboxMessage,
  type Scope,
  type TargetPolicy,
} from '@seller-api/service-kit';
import type { AffiliateRow, OrderItemRow, OrderRow, ProductRow } from '../db/entities';
import { EXCHANGE } from '../events/topology';
import { orderEventData, orderHeaders } from '../events/payloads';
import { resolveExpiration } from './dates';
import { dueDatesOf } from './due-date';
import { priceOrder, type FieldErrors, type OrderAmounts, type PricedLine } from './pricing';

/** What a new order's rules read of the seller's records (db/products.ts sellerRecords). */
export interface SellerRecords {
  /** The seller's products among `ids`, in the scope's environment; unknown ids are absent. */
  products(scope: Scope, ids: string[]): Promise<Map<string, ProductRow>>;
  affiliateByCode(scope: Scope, code: string): Promise<AffiliateRow | null>;
}

/** What preparing an order needs besides the seller's records: everything but the write. */
export interface PrepareDeps {
  /** Asks payments for the PIX charge; throws a 503 when payments cannot answer. */
  requestCharge(request: CreateChargeRequest): Promise<Charge>;
  /** postback_url follows the webhooks' target rules (docs/webhooks.md, "Target rules"). */
  targets: Omit<TargetPolicy, 'environment'>;
  now?: () => Date;
  /**
   * The order's id; a keyed request's is derived from its key (the kit's keyedId), so its retries and
   * duplicates ask payments for the same charge. A new random one otherwise.
   */
  orderId?: string;
}

export interface CustomerContact {
  sellerId: string;
  environment: Environment;
  taxId: string;
  taxIdType: TaxIdType;
  name: string;
  email: string;
  phone: string;
  address: AddressInput | null;
  at: Date;
}

/** What storing an order writes (db/order-writes.ts). */
export interface NewOrder {
  /** The buyer, upserted in the order's statement; the order row takes its id from there. */
  contact: CustomerContact;
  order: Omit<OrderRow, 'customerId'>;
  items: OrderItemRow[];
  event: OutboxMessage;
}

export interface CreatedOrderResult {
  order: OrderRow;
  items: OrderItemRow[];
  customerId: string;
  charge: Charge;
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function addError(errors: FieldErrors, field: string, message: string): void {
  const list = (errors[field] ??= []);
  if (!list.includes(message)) list.push(message);
}

/**
 * The rules that need the seller's data or the clock (unknown products, address for physical
 * products, affiliate code, expiration). They read the raw body, so they are reported together with
 * the schema's violations: every problem of a request comes back at once.
 */
async function checkAgainstData(
  records: SellerRecords,
  scope: Scope,
  body: unknown,
  errors: FieldErrors,
  now: Date,
  deps: PrepareDeps,
) {
  const raw = isRecord(body) ? body : {};
  if (typeof raw.postback_url === 'string' && !errors.postback_url && URL.canParse(raw.postback_url)) {
    const verdict = await checkTarget(raw.postback_url, { ...deps.targets, environment: scope.environment });
    if (!verdict.ok) addError(errors, 'postback_url', verdict.reason);
  }
  const items = Array.isArray(raw.items) ? raw.items : [];
  const ids = items.map((item) =>
    isRecord(item) && typeof item.product_uuid === 'string' && UUID.test(item.product_uuid)
      ? item.product_uuid
      : null,
  );
  const products = await records.products(
    scope,
    ids.filter((id): id is string => id !== null),
  );
  ids.forEach((id, i) => {
    if (id !== null && !products.has(id))
      addError(errors, `items.${i}.product_uuid`, MESSAGES.unknownProduct);
  });
  const customer = isRecord(raw.customer) ? raw.customer : null;
  const physical = [...products.values()].some((p) => p.type === 'PHYSICAL');
  if (physical && customer && (customer.address === undefined || customer.address === null)) {
    addError(errors, 'customer.address', MESSAGES.addressForPhysical);
  }
  let affiliateName: string | null = null;
  if (typeof raw.affiliate_code === 'string' && raw.affiliate_code.trim()) {
    const affiliate = await records.affiliateByCode(scope, raw.affiliate_code.trim());
    if (!affiliate) addError(errors, 'affiliate_code', MESSAGES.unknownAffiliateCode);
    affiliateName = affiliate?.name ?? null;
  }
  const payment = isRecord(raw.payment) ? raw.payment : {};
  let expiresAt: Date | null = null;
  // A due-date charge's end comes from its terms (validateOrder); its clock and place rules are here.
  if (payment.due_date !== undefined) checkDueDateAgainstClock(payment, errors, now);
  else if (!errors['payment.expiration_date']) {
    const expiration = resolveExpiration(
      typeof payment.expiration_date === 'string' ? payment.expiration_date : undefined,
      now,
    );
    if ('error' in expiration) addError(errors, 'payment.expiration_date', expiration.error);
    else expiresAt = expiration.expiresAt;
  }
  return { products, affiliateName, expiresAt };
}

/**
 * The rules of due-date terms that need the clock or the holiday data (docs/pix.md, "Due-date
 * charges"): the due date is today or later in São Paulo, and the calendar's place exists. Each runs
 * only over a field the schema found well formed, so a field gets one message per problem.
 */
function checkDueDateAgainstClock(payment: Record<string, unknown>, errors: FieldErrors, now: Date): void {
  const due = payment.due_date;
  if (typeof due === 'string' && isIsoDate(due))
    for (const issue of dueDateClockIssues({ due_date: due }, todayInSaoPaulo(now)))
      addError(errors, ['payment', ...issue.path].join('.'), issue.message);
  const place = payment.calendar;
  const placeChecked = Object.keys(errors).some((field) => field.startsWith('payment.calendar'));
  if (isRecord(place) && !placeChecked) {
    const problem = calendarPlaceProblem(place as CalendarPlace);
    if (problem) addError(errors, 'payment.calendar', message('calendarPlace', { problem }));
  }
}

/**
 * The due-date terms of a request's payment as far as they are well formed, whatever else of the body
 * failed: each term its own schema refuses is left out (its problems are the schema's to report), so
 * the amount rules still check the others. null for an immediate charge or a malformed due date.
 */
function dueDateTermsOfBody(body: unknown): DueDateTermsRecord | null {
  const payment = isRecord(body) ? body.payment : undefined;
  if (!isRecord(payment) || payment.due_date === undefined) return null;
  const terms: Record<string, unknown> = { due_date: payment.due_date };
  for (const field of DUE_DATE_SIBLINGS)
    if (DUE_DATE_TERMS_SHAPE[field].safeParse(payment[field]).success) terms[field] = payment[field];
  const parsed = OrderPaymentInput.safeParse(terms);
  return parsed.success ? dueDateTermsOfPayment(parsed.data) : null;
}

/** The rules of the terms against the charge's amount (a rebate or discount below it), on `payment.`. */
function addAmountIssues(errors: FieldErrors, terms: DueDateTermsRecord | null, amount: unknown): void {
  if (!terms || typeof amount !== 'number' || !Number.isSafeInteger(amount) || amount < 1) return;
  for (const issue of dueDateAmountIssues(terms, amount))
    addError(errors, ['payment', ...issue.path].join('.'), issue.message);
}

/** An order checked, priced and charged, ready to be stored (db/order-writes.ts storeOrder). */
export interface PreparedOrder {
  write: NewOrder;
  charge: Charge;
}

/** A request that passed every rule, with what the rules read and its prices. */
interface ValidOrder {
  input: CreateOrderRequest;
  affiliateName: string | null;
  expiresAt: Date;
  /** A due-date charge's terms and the dates they give; null for an immediate charge. */
  dueDate: { terms: DueDateTermsRecord; effectiveDueDate: string; lastPayableDate: string } | null;
  lines: PricedLine[];
  amounts: OrderAmounts;
}

/**
 * Validates and prices the order and obtains its PIX charge from payments; stores nothing. `records`
 * answers what the rules read of the seller's data.
 */
export async function prepareOrder(
  records: SellerRecords,
  scope: Scope,
  body: unknown,
  deps: PrepareDeps,
): Promise<PreparedOrder> {
  const now = deps.now?.() ?? new Date();
  const valid = await validateOrder(records, scope, body, now, deps);
  const orderId = deps.orderId ?? randomUUID();
  const { payment } = valid.input;
  const charge = await deps.requestCharge({
    order_uuid: orderId,
    gross_amount: valid.amounts.grossAmount,
    expires_at: valid.expiresAt.toISOString(),
    seller_name: scope.sellerName,
    debtor_name: payment.debtor_name ?? null,
    debtor_document: payment.debtor_document ?? null,
    // Sent only for a due-date charge: an immediate one's request is as it always was.
    ...(valid.dueDate ? { due_date: valid.dueDate.terms } : {}),
  });
  const order = orderRow(scope, orderId, valid, charge, now);
  return {
    write: newOrderWrite(scope, valid.input.customer, order, orderItems(orderId, valid.lines), now),
    charge,
  };
}

/** Every rule of a new order, the schema's and those of the seller's data; a 400 with all that fail. */
async function validateOrder(
  records: SellerRecords,
  scope: Scope,
  body: unknown,
  now: Date,
  deps: PrepareDeps,
): Promise<ValidOrder> {
  const parsed = safeParseRequest(CreateOrderRequest, body);
  const errors: FieldErrors = parsed.success ? {} : zodIssuesToFieldErrors(parsed.error);
  const data = await checkAgainstData(records, scope, body, errors, now, deps);
  const terms = dueDateTermsOfBody(body);
  const payment = isRecord(body) && isRecord(body.payment) ? body.payment : {};
  if (!parsed.success || Object.keys(errors).length > 0 || (!terms && !data.expiresAt)) {
    // The amount rules too when the amount is known without pricing (a standalone charge's).
    addAmountIssues(errors, terms, payment.gross_amount);
    throw badRequest('Invalid order.', errors);
  }
  const input = parsed.data;
  const priced = priceOrder({
    lines: input.items.map((item) => ({
      product: data.products.get(item.product_uuid) as ProductRow,
      quantity: item.quantity,
    })),
    grossAmount: input.payment.gross_amount,
    shippingAmount: input.payment.shipping_amount,
    discountAmount: input.payment.discount_amount,
  });
  if ('errors' in priced) {
    addAmountIssues(priced.errors, terms, payment.gross_amount);
    throw badRequest('Invalid order.', priced.errors);
  }
  // The terms as the whole request's schema gave them (the same as `terms` once every rule passed).
  const checked = dueDateTermsOfPayment(input.payment);
  if (!checked) {
    return {
      input,
      affiliateName: data.affiliateName,
      expiresAt: data.expiresAt as Date,
      dueDate: null,
      ...priced,
    };
  }
  const amountErrors: FieldErrors = {};
  addAmountIssues(amountErrors, checked, priced.amounts.grossAmount);
  if (Object.keys(amountErrors).length > 0) throw badRequest('Invalid order.', amountErrors);
  // The charge stays payable to the end of its last payable day in São Paulo (docs/pix.md).
  const { expiresAt, ...dates } = dueDatesOf(checked);
  return {
    input,
    affiliateName: data.affiliateName,
    expiresAt,
    dueDate: { terms: checked, ...dates },
    ...priced,
  };
}

/** The order's row; its customer's id comes from the customer's upsert, in the order's own statement. */
function orderRow(
  scope: Scope,
  orderId: string,
  { input, affiliateName, lines, amounts, dueDate }: ValidOrder,
  charge: Charge,
  now: Date,
): Omit<OrderRow, 'customerId'> {
  const { customer, payment } = input;
  const address = customer.address ?? null;
  return {
    id: orderId,
    sellerId: scope.sellerId,
    environment: scope.environment,
    sellerName: scope.sellerName,
    customerName: customer.name,
    customerEmail: customer.email,
    customerPhone: customer.phone,
    customerTaxId: customer.tax_id,
    customerTaxIdType: customer.tax_id_type,
    address,
    addressText: address ? formatAddress(address) : null,
    status: 'PENDING',
    method: charge.method,
    ...amounts,
    feeAmount: charge.fee_amount,
    netAmount: charge.net_amount,
    postbackUrl: input.postback_url,
    affiliateName,
    producerName: lines.find((l) => l.product.producerName)?.product.producerName ?? null,
    debtorName: payment.debtor_name ?? null,
    debtorDocument: payment.debtor_document ?? null,
    transactionId: charge.transaction_uuid,
    pixTxid: charge.txid,
    pixCopyAndPaste: charge.copy_and_paste,
    pixQrCodeImageBase64: charge.qr_code_image_base64,
    expiresAt: new Date(charge.expires_at),
    createdAt: now,
    paidAt: null,
    trackingCode: null,
    shippingStatus: lines.some((l) => l.product.type === 'PHYSICAL') ? 'AWAITING_SHIPMENT' : null,
    estimatedDeliveryDate: null,
    deliveredAt: null,
    signedBy: null,
    chargeVersion: 0,
    refundStatus: null,
    refundAttempt: null,
    refundAmount: null,
    refundRequestedAt: null,
    refundUpdatedAt: null,
    refundFailureReason: null,
    dueDateTerms: dueDate?.terms ?? null,
    effectiveDueDate: dueDate?.effectiveDueDate ?? null,
    lastPayableDate: dueDate?.lastPayableDate ?? null,
    overdueNotifiedAt: null,
    amountPaid: null,
  };
}

function orderItems(orderId: string, lines: PricedLine[]): OrderItemRow[] {
  return lines.map((line) => ({
    id: randomUUID(),
    orderId,
    position: line.position,
    productId: line.product.id,
    productType: line.product.type,
    name: line.product.name,
    images: line.product.images,
    price: line.product.price,
    quantity: line.quantity,
    lineTotalAmount: line.lineTotalAmount,
    commissionUnitAmount: line.product.commissionUnitAmount,
    commissionTotalAmount: line.commissionTotalAmount,
    trackingCode: null,
    // Physical items wait for shipment; digital ones have no shipping.
    shippingStatus: line.product.type === 'PHYSICAL' ? 'AWAITING_SHIPMENT' : null,
    shippedAt: null,
    deliveredAt: null,
  }));
}

/** What storing the order writes: its customer's contact data, the order, its items and order.created. */
function newOrderWrite(
  scope: Scope,
  customer: CreateOrderRequest['customer'],
  order: Omit<OrderRow, 'customerId'>,
  items: OrderItemRow[],
  now: Date,
): NewOrder {
  return {
    contact: {
      sellerId: scope.sellerId,
      environment: scope.environment,
      taxId: customer.tax_id,
      taxIdType: customer.tax_id_type,
      name: customer.name,
      email: customer.email,
      phone: customer.phone,
      address: customer.address ?? null,
      at: now,
    },
    order,
    items,
    event: outboxRow({
      exchange: EXCHANGE,
      routingKey: OrderEvents.CREATED,
      payload: orderEventData(order, items),
      headers: orderHeaders(order),
    }),
  };
}
