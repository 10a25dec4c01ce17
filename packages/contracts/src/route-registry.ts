import { z } from 'zod';
import { MessageResponse } from './common';
import { ErrorBody } from './errors';
import { EventListQuery, EventListResponse, EventPathParams, EventRecordResponse } from './event-log';
import {
  BalanceResponse,
  CancelWithdrawalRequest,
  CreateWithdrawalRequest,
  DenyWithdrawalRequest,
  OpsWithdrawalListQuery,
  SellerPathParams,
  SuspensionListQuery,
  SuspensionRequest,
  WithdrawalListQuery,
  WithdrawalListResponse,
  WithdrawalPathParams,
  WithdrawalResponse,
  WithdrawalSuspensionListResponse,
  WithdrawalSuspensionResponse,
} from './finance';
import { OperatorWithdrawalListResponse, OperatorWithdrawalResponse } from './panel';
import { AmountDueQuery, AmountDueResponse, SandboxPayRequest } from './due-date';
import {
  CreateOrderRequest,
  CreateOrderResponse,
  MedResolveRequest,
  OrderDetailResponse,
  OrderListQuery,
  OrderListResponse,
  OrderPathParams,
  OrderSummaryQuery,
  OrderSummaryResponse,
  TrackingUpdateRequest,
} from './orders';
import { PspPixNotification, PspPixNotificationResponse } from './payments';
import { CreateProductRequest, ProductListQuery, ProductListResponse, ProductResponse } from './products';
import {
  AffiliateListQuery,
  AffiliateListResponse,
  CreateAffiliateRequest,
  AffiliateResponse,
} from './affiliates';
import {
  BulkResendRequest,
  BulkResendResponse,
  CreateWebhookRequest,
  CreateWebhookResponse,
  DeliveryListQuery,
  DeliveryListResponse,
  DeliveryPathParams,
  PostbackDeliveryPathParams,
  UpdateWebhookRequest,
  WebhookListQuery,
  WebhookListResponse,
  WebhookPathParams,
  WebhookResponse,
  WebhooksHealthResponse,
} from './webhooks';

// ---------------------------------------------------------------------------------------------------
// Route registry: the one list of public routes, from which the OpenAPI document is built
// (openapi-document.ts) and the gateway routes and labels its calls.
// ---------------------------------------------------------------------------------------------------

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

export interface ResponseDoc {
  description: string;
  schema?: z.ZodType;
  /** Defaults to application/json. */
  contentType?: string;
}

export interface RouteDoc {
  method: HttpMethod;
  /** OpenAPI style, relative to the `/api/v1` server: `/sellers/orders/{uuid}/`. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tag: string;
  /** Needs `Authorization: Bearer mk_<env>_<token>`. */
  auth: boolean;
  body?: z.ZodType;
  /** False for action routes, which accept an empty body (docs/api.md, "Requests"). */
  bodyRequired?: boolean;
  query?: z.ZodObject;
  params?: z.ZodObject;
  /** Success responses and route-specific errors; the common errors are added by the builder. */
  responses: Record<number, ResponseDoc>;
  /** Answered by the gateway itself, not forwarded to a service: no 502, 503 or 504 from that hop. */
  servedByGateway?: boolean;
}

export const TAGS: readonly { name: string; description: string }[] = [
  { name: 'Orders', description: 'Create, read, list and track orders; cancel and refund them.' },
  {
    name: 'Products',
    description: 'Products sold in orders, and the affiliates whose links sales come through.',
  },
  { name: 'Sandbox', description: 'Move test orders as the PSP would. Test keys only: a live key gets 403.' },
  { name: 'Webhooks', description: 'Global webhook registrations, their deliveries and manual re-sends.' },
  {
    name: 'Events',
    description:
      'The events of the last 30 days and their deliveries, to catch up on missed webhooks; under ' +
      'webhooks, each event as the API delivers it.',
  },
  { name: 'Finance', description: 'Balance and withdrawals of the seller.' },
  { name: 'Operations', description: 'Platform operator routes. Operator keys only.' },
  { name: 'PSP', description: 'Notifications from the payment service provider (Central Bank "API Pix").' },
  { name: 'Documentation', description: 'This reference, as JSON and HTML.' },
];

const ok = (schema: z.ZodType, description = 'OK'): ResponseDoc => ({ description, schema });
const conflict: ResponseDoc = {
  description: 'The order is not in a state that allows this',
  schema: ErrorBody,
};

function sandboxRoute(
  action: string,
  operationId: string,
  summary: string,
  body?: z.ZodType,
  extra: Pick<RouteDoc, 'description' | 'bodyRequired'> = {},
): RouteDoc {
  return {
    method: 'post',
    path: `/sandbox/orders/{uuid}/${action}/`,
    operationId,
    summary,
    tag: 'Sandbox',
    auth: true,
    params: OrderPathParams,
    ...(body ? { body, bodyRequired: true } : {}),
    ...extra,
    responses: { 200: ok(MessageResponse), 409: conflict },
  };
}

export const routes: RouteDoc[] = [
  // Orders
  {
    method: 'post',
    path: '/sellers/orders/',
    operationId: 'createOrder',
    summary: 'Create an order',
    description:
      'With products (items) or as a standalone charge (no items, payment.gross_amount required). ' +
      'Answers with the PIX QR code data. Emits order.created.',
    tag: 'Orders',
    auth: true,
    body: CreateOrderRequest,
    responses: { 201: ok(CreateOrderResponse, 'Order created') },
  },
  {
    method: 'get',
    path: '/sellers/orders/',
    operationId: 'listOrders',
    summary: 'List orders, newest first',
    tag: 'Orders',
    auth: true,
    query: OrderListQuery,
    responses: { 200: ok(OrderListResponse) },
  },
  // Before `{uuid}`: the first documented route a path matches labels it (gateway routing.ts).
  {
    method: 'get',
    path: '/sellers/orders/summary/',
    operationId: 'getOrderSummary',
    summary: 'Counts and amounts of orders over a time range, in hour or day buckets',
    description:
      '`from` inclusive, `to` exclusive; buckets are the hours or days of `time_zone` (default UTC), every ' +
      'one of the range present, zeros included. Created counts by creation time, paid counts and ' +
      'amounts by payment time; expired, refunded and canceled count the orders created in the range ' +
      'that have that status now. At most 92 days with granularity day, 7 days with hour.',
    tag: 'Orders',
    auth: true,
    query: OrderSummaryQuery,
    responses: { 200: ok(OrderSummaryResponse) },
  },
  {
    method: 'get',
    path: '/sellers/orders/{uuid}/',
    operationId: 'getOrder',
    summary: 'Read an order',
    description:
      'The order with its items, customer, money, parties and delivery. While the order is PENDING and ' +
      'its expires_at has not passed, pix holds its PIX charge as the create answer gave it (BR Code and ' +
      'QR image), to show the payer again; null otherwise. items[].uuid is the product uuid that ' +
      'create-order takes and answers as items[].product_uuid.',
    tag: 'Orders',
    auth: true,
    params: OrderPathParams,
    responses: { 200: ok(OrderDetailResponse) },
  },
  {
    method: 'get',
    path: '/sellers/orders/{uuid}/amount-due/',
    operationId: 'getOrderAmountDue',
    summary: 'What a due-date charge costs on a day',
    description:
      'For an order with a due-date charge: its effective due date, last payable date, whether `date` ' +
      '(default today in São Paulo) is payable, and each component of what is owed that day. A date ' +
      'after the last payable date answers 200 with payable false. The same computation decides what a ' +
      'payment must be (docs/pix.md, "Due-date charges"). An order paid by an immediate charge answers ' +
      '409.',
    tag: 'Orders',
    auth: true,
    params: OrderPathParams,
    query: AmountDueQuery,
    responses: {
      200: ok(AmountDueResponse),
      409: { description: 'The order has no due-date charge', schema: ErrorBody },
    },
  },
  {
    method: 'patch',
    path: '/sellers/orders/{uuid}/tracking/',
    operationId: 'updateOrderTracking',
    summary: 'Update the shipping tracking of all items of an order',
    description:
      'At least one field. tracking_code and shipping_status apply to every item; DELIVERED fills ' +
      'delivery.delivered_at. SHIPPED with a code emits order_item.shipped.',
    tag: 'Orders',
    auth: true,
    params: OrderPathParams,
    body: TrackingUpdateRequest,
    responses: { 200: ok(MessageResponse) },
  },
  {
    method: 'post',
    path: '/sellers/orders/{uuid}/cancel/',
    operationId: 'cancelOrder',
    summary: 'Cancel a pending order',
    tag: 'Orders',
    auth: true,
    params: OrderPathParams,
    responses: { 200: ok(MessageResponse), 409: conflict },
  },
  {
    method: 'post',
    path: '/sellers/orders/{uuid}/refund/',
    operationId: 'refundOrder',
    summary: 'Refund a paid order in full',
    description:
      "The refund returns the order's gross to the payer and takes its net amount from the seller's " +
      'available balance, which must cover it: the net is reserved before the PSP is asked, so money ' +
      'already withdrawn cannot be refunded. The order becomes REFUNDED when the PSP says the money went ' +
      'back: at once, or later, when the PSP is still processing it (the 200 says so; the order stays ' +
      'PAID with `payment.refund.status` PROCESSING until the end, then `order.refunded`). A refund the ' +
      'PSP does not make leaves the order PAID with its refund FAILED and the reason, gives the ' +
      'reservation back and emits `payment.refund_failed`; it may be asked again.',
    tag: 'Orders',
    auth: true,
    params: OrderPathParams,
    responses: {
      200: ok(MessageResponse),
      409: {
        description:
          '`conflict`: the order is not PAID (the message names its status), or a refund of it is already ' +
          'in progress; `insufficient_balance`: the ' +
          "available balance does not cover the order's net amount, and nothing was changed; or " +
          '`idempotency_conflict`',
        schema: ErrorBody,
      },
    },
  },
  {
    method: 'get',
    path: '/sellers/orders/{uuid}/postback-deliveries/',
    operationId: 'listOrderPostbackDeliveries',
    summary: "List the deliveries to an order's postback_url with their attempts",
    description:
      "Newest first, as a webhook's deliveries are listed. An order without postback deliveries (no " +
      'postback_url, or none sent yet) gives an empty list; one of another seller or environment a 404.',
    tag: 'Orders',
    auth: true,
    params: OrderPathParams,
    query: DeliveryListQuery,
    responses: {
      200: ok(DeliveryListResponse),
      404: { description: "The order's postback deliveries are not in the key's scope", schema: ErrorBody },
    },
  },
  {
    method: 'post',
    path: '/sellers/orders/{uuid}/postback-deliveries/{delivery_id}/resend/',
    operationId: 'resendOrderPostbackDelivery',
    summary: 'Re-queue one postback delivery of an order',
    description: 'One more attempt now, with the same event id, as for a webhook delivery.',
    tag: 'Orders',
    auth: true,
    params: PostbackDeliveryPathParams,
    responses: {
      200: ok(MessageResponse),
      404: { description: "No such postback delivery of this order in the key's scope", schema: ErrorBody },
      409: {
        description: '`conflict`: the delivery is being attempted right now; or `idempotency_conflict`',
        schema: ErrorBody,
      },
    },
  },
  // Products
  {
    method: 'post',
    path: '/sellers/products/',
    operationId: 'createProduct',
    summary: 'Create a product',
    tag: 'Products',
    auth: true,
    body: CreateProductRequest,
    responses: { 201: ok(ProductResponse, 'Product created') },
  },
  {
    method: 'get',
    path: '/sellers/products/',
    operationId: 'listProducts',
    summary: 'List products, newest first',
    tag: 'Products',
    auth: true,
    query: ProductListQuery,
    responses: { 200: ok(ProductListResponse) },
  },
  {
    method: 'get',
    path: '/sellers/products/{uuid}/',
    operationId: 'getProduct',
    summary: 'Read one product',
    tag: 'Products',
    auth: true,
    params: OrderPathParams,
    responses: { 200: ok(ProductResponse) },
  },
  {
    method: 'post',
    path: '/sellers/affiliates/',
    operationId: 'createAffiliate',
    summary: 'Register an affiliate; orders name it with affiliate_code',
    tag: 'Products',
    auth: true,
    body: CreateAffiliateRequest,
    responses: { 201: ok(AffiliateResponse, 'Affiliate registered') },
  },
  {
    method: 'get',
    path: '/sellers/affiliates/',
    operationId: 'listAffiliates',
    summary: 'List affiliates, newest first',
    tag: 'Products',
    auth: true,
    query: AffiliateListQuery,
    responses: { 200: ok(AffiliateListResponse) },
  },
  // Sandbox
  sandboxRoute('pay', 'sandboxPayOrder', 'Pay a test order as the PSP would', SandboxPayRequest, {
    bodyRequired: false,
    description:
      'Pays the order as a payer would, by default today and the amount owed. For a due-date charge, ' +
      '`date` pays as if on that day (a late payment with its fine and interest, an early one with its ' +
      'discount); an `amount` other than what is owed that day, or a date the charge cannot be paid on, ' +
      'is refused as the PSP would refuse it (409) and the order stays as it was.',
  }),
  sandboxRoute('expire', 'sandboxExpireOrder', 'Expire a pending test order'),
  sandboxRoute('med', 'sandboxOpenMed', 'Open a PIX special return (MED) on a paid test order'),
  sandboxRoute('med/resolve', 'sandboxResolveMed', 'Decide an open MED', MedResolveRequest),
  sandboxRoute('chargeback', 'sandboxChargeback', 'Open a chargeback on a paid test order'),
  // Webhooks
  {
    method: 'post',
    path: '/config/webhooks/',
    operationId: 'createWebhook',
    summary: 'Register a global webhook for one event',
    description:
      'The secret is shown in this answer only. Registering the same (url, event) again retires the old ' +
      'webhook and its secret. At most 50 webhooks (active or paused) per seller and environment; a ' +
      'rotation does not count twice.',
    tag: 'Webhooks',
    auth: true,
    body: CreateWebhookRequest,
    responses: {
      201: ok(CreateWebhookResponse, 'Webhook registered'),
      409: {
        description:
          '`limit_reached`: the seller already has 50 webhooks (active or paused) in this environment and ' +
          'this is not a rotation; or `idempotency_conflict`: Idempotency-Key reused with a different ' +
          'body, or its first request still running',
        schema: ErrorBody,
      },
    },
  },
  {
    method: 'get',
    path: '/config/webhooks/',
    operationId: 'listWebhooks',
    summary: 'List webhooks',
    tag: 'Webhooks',
    auth: true,
    query: WebhookListQuery,
    description: 'The live registrations (ACTIVE or DISABLED): a retired or deleted webhook is not listed.',
    responses: { 200: ok(WebhookListResponse) },
  },
  {
    method: 'get',
    path: '/config/webhooks/health/',
    operationId: 'getWebhooksHealth',
    summary: 'Deliveries of the last 24 hours by state, per webhook and for postbacks',
    description:
      'Counts the deliveries created in the last 24 hours: delivered, retrying (pending after at least ' +
      'one attempt) and dead, for every active or paused webhook (zeros included) and for the ' +
      "orders' postback_url deliveries together.",
    tag: 'Webhooks',
    auth: true,
    responses: { 200: ok(WebhooksHealthResponse) },
  },
  {
    method: 'get',
    path: '/config/webhooks/{id}/',
    operationId: 'getWebhook',
    summary: 'Read a webhook',
    tag: 'Webhooks',
    auth: true,
    params: WebhookPathParams,
    description:
      'A webhook retired by a rotation (the same url and event registered again) is still read, with ' +
      'status RETIRED; a deleted one is a 404.',
    responses: { 200: ok(WebhookResponse) },
  },
  {
    method: 'patch',
    path: '/config/webhooks/{id}/',
    operationId: 'updateWebhook',
    summary: 'Pause, resume or change a webhook',
    tag: 'Webhooks',
    auth: true,
    params: WebhookPathParams,
    body: UpdateWebhookRequest,
    responses: {
      200: ok(WebhookResponse),
      409: {
        description:
          '`conflict`: the webhook was retired by a newer registration of its URL and event; or ' +
          'another webhook of the same event already has that URL',
        schema: ErrorBody,
      },
    },
  },
  {
    method: 'delete',
    path: '/config/webhooks/{id}/',
    operationId: 'deleteWebhook',
    summary: 'Delete a webhook',
    tag: 'Webhooks',
    auth: true,
    params: WebhookPathParams,
    responses: {
      204: { description: 'Deleted' },
      409: {
        description: '`conflict`: the webhook was retired by a newer registration of its URL and event',
        schema: ErrorBody,
      },
    },
  },
  {
    method: 'get',
    path: '/config/webhooks/{id}/deliveries/',
    operationId: 'listWebhookDeliveries',
    summary: 'List the deliveries of a webhook with their attempts',
    tag: 'Webhooks',
    auth: true,
    params: WebhookPathParams,
    query: DeliveryListQuery,
    description:
      "A retired webhook's list keeps its delivered history: its pending and dead deliveries moved " +
      'to the webhook that replaced it.',
    responses: { 200: ok(DeliveryListResponse) },
  },
  {
    method: 'post',
    path: '/config/webhooks/{id}/deliveries/{delivery_id}/resend/',
    operationId: 'resendWebhookDelivery',
    summary: 'Re-queue one delivery',
    tag: 'Webhooks',
    auth: true,
    params: DeliveryPathParams,
    responses: {
      200: ok(MessageResponse),
      409: {
        description:
          '`conflict`: the webhook was retired by a newer registration of its URL and event; the ' +
          'delivery is being attempted right now; or `idempotency_conflict`',
        schema: ErrorBody,
      },
    },
  },
  {
    method: 'post',
    path: '/config/webhooks/{id}/deliveries/resend/',
    operationId: 'resendDeadWebhookDeliveries',
    summary: 'Re-queue every dead delivery of a webhook, optionally within a time window',
    tag: 'Webhooks',
    auth: true,
    params: WebhookPathParams,
    body: BulkResendRequest,
    responses: {
      200: ok(BulkResendResponse),
      409: {
        description:
          '`conflict`: the webhook was retired by a newer registration of its URL and event; or ' +
          '`idempotency_conflict`',
        schema: ErrorBody,
      },
    },
  },
  // Events
  {
    method: 'get',
    path: '/events/',
    operationId: 'listEvents',
    summary: 'List events, newest first',
    description:
      "The events of the last 30 days in the key's environment, by when they occurred, with the " +
      'deliveries made of each. Filters combine: `type` (one or several names), `created_gte` and ' +
      '`created_lte` (on occurred_at), `order_uuid`.',
    tag: 'Events',
    auth: true,
    query: EventListQuery,
    responses: { 200: ok(EventListResponse) },
  },
  {
    method: 'get',
    path: '/events/{id}/',
    operationId: 'getEvent',
    summary: 'Read an event with its deliveries',
    tag: 'Events',
    auth: true,
    params: EventPathParams,
    responses: { 200: ok(EventRecordResponse) },
  },
  // Finance
  {
    method: 'get',
    path: '/finance/balance/',
    operationId: 'getBalance',
    summary: 'Read the balance',
    tag: 'Finance',
    auth: true,
    responses: { 200: ok(BalanceResponse) },
  },
  {
    method: 'post',
    path: '/finance/withdrawals/',
    operationId: 'createWithdrawal',
    summary: 'Request a withdrawal to a PIX key',
    description:
      'Holds the amount until the withdrawal is paid, denied, failed or canceled. Emits ' +
      'withdrawal.requested. It is approved automatically when below the automatic approval limit, ' +
      "within the seller's rolling 24 h caps and, when so configured, to a PIX key already paid to; " +
      'otherwise it waits for an operator.',
    tag: 'Finance',
    auth: true,
    body: CreateWithdrawalRequest,
    responses: {
      201: ok(WithdrawalResponse, 'Withdrawal requested'),
      409: {
        description:
          '`insufficient_balance`: the available balance does not cover the amount (the message states ' +
          'it), and nothing was held; or `idempotency_conflict`',
        schema: ErrorBody,
      },
      403: {
        description:
          "`withdrawals_suspended`: an operator suspended the seller's withdrawals in this environment; " +
          'nothing was held',
        schema: ErrorBody,
      },
    },
  },
  {
    method: 'get',
    path: '/finance/withdrawals/',
    operationId: 'listWithdrawals',
    summary: 'List withdrawals, newest first',
    tag: 'Finance',
    auth: true,
    query: WithdrawalListQuery,
    responses: { 200: ok(WithdrawalListResponse) },
  },
  {
    method: 'get',
    path: '/finance/withdrawals/{uuid}/',
    operationId: 'getWithdrawal',
    summary: 'Read a withdrawal',
    tag: 'Finance',
    auth: true,
    params: WithdrawalPathParams,
    responses: { 200: ok(WithdrawalResponse) },
  },
  // Operations
  {
    method: 'get',
    path: '/ops/withdrawals/',
    operationId: 'listWithdrawalsForOperators',
    summary:
      "Withdrawals across sellers of the operator key's environment (PENDING by default); answers add " +
      'environment and seller. `environment` naming the other one is a 403.',
    description:
      'Each withdrawal adds `review_reasons` (why it waits for an operator; empty when cleared for the ' +
      "automatic approval) and `seller.suspension` (the seller's withdrawal suspension in force, or null).",
    tag: 'Operations',
    auth: true,
    query: OpsWithdrawalListQuery,
    responses: { 200: ok(OperatorWithdrawalListResponse) },
  },
  // Before `{uuid}`: the first documented route a path matches labels it (gateway routing.ts).
  {
    method: 'get',
    path: '/ops/withdrawals/suspensions/',
    operationId: 'listWithdrawalSuspensions',
    summary: "Sellers whose withdrawals are suspended in the operator key's environment, newest first",
    description:
      '`active=false` lists lifted suspensions too (the history); `seller_id` narrows to one seller.',
    tag: 'Operations',
    auth: true,
    query: SuspensionListQuery,
    responses: { 200: ok(WithdrawalSuspensionListResponse) },
  },
  {
    method: 'post',
    path: '/ops/withdrawals/sellers/{seller_id}/suspend/',
    operationId: 'suspendSellerWithdrawals',
    summary: "Suspend a seller's withdrawals in the operator key's environment",
    description:
      'The seller can request no withdrawal (403 `withdrawals_suspended`); its PENDING withdrawals are ' +
      'not approved (automatically or by an operator) and its APPROVED ones are not sent to the PSP until ' +
      'the suspension is lifted; they may still be denied or canceled. A payout already at the PSP ' +
      '(PROCESSING) finishes. The reason, the operator and the time are kept.',
    tag: 'Operations',
    auth: true,
    params: SellerPathParams,
    body: SuspensionRequest,
    responses: {
      200: ok(WithdrawalSuspensionResponse),
      409: { description: 'The seller is already suspended in this environment', schema: ErrorBody },
    },
  },
  {
    method: 'post',
    path: '/ops/withdrawals/sellers/{seller_id}/unsuspend/',
    operationId: 'unsuspendSellerWithdrawals',
    summary: "Lift the suspension of a seller's withdrawals in the operator key's environment",
    description:
      'Held withdrawals go on: PENDING ones cleared for the automatic approval are approved by the next ' +
      'run, APPROVED ones are sent. The reason, the operator and the time are kept with the suspension.',
    tag: 'Operations',
    auth: true,
    params: SellerPathParams,
    body: SuspensionRequest,
    responses: {
      200: ok(WithdrawalSuspensionResponse),
      409: { description: 'The seller is not suspended in this environment', schema: ErrorBody },
    },
  },
  {
    method: 'get',
    path: '/ops/withdrawals/{uuid}/',
    operationId: 'getWithdrawalForOperators',
    summary: "Read a withdrawal of the operator key's environment, with its environment and seller",
    tag: 'Operations',
    auth: true,
    params: WithdrawalPathParams,
    responses: { 200: ok(OperatorWithdrawalResponse) },
  },
  {
    method: 'post',
    path: '/ops/withdrawals/{uuid}/approve/',
    operationId: 'approveWithdrawal',
    summary: 'Approve a pending withdrawal',
    tag: 'Operations',
    auth: true,
    params: WithdrawalPathParams,
    responses: {
      200: ok(OperatorWithdrawalResponse),
      409: {
        description: "Not PENDING (the message names its status), or the seller's withdrawals are suspended",
        schema: ErrorBody,
      },
    },
  },
  {
    method: 'post',
    path: '/ops/withdrawals/{uuid}/deny/',
    operationId: 'denyWithdrawal',
    summary: 'Deny a pending withdrawal',
    tag: 'Operations',
    auth: true,
    params: WithdrawalPathParams,
    body: DenyWithdrawalRequest,
    bodyRequired: false,
    responses: {
      200: ok(OperatorWithdrawalResponse),
      409: { description: 'Not PENDING', schema: ErrorBody },
    },
  },
  {
    method: 'post',
    path: '/ops/withdrawals/{uuid}/cancel/',
    operationId: 'cancelWithdrawal',
    summary: 'Cancel an approved withdrawal not sent to the PSP yet',
    description:
      'APPROVED to CANCELED: the hold returns to the available balance and `withdrawal.canceled` is ' +
      'emitted, in one transaction. A withdrawal the payout worker already sent (PROCESSING, PAID, ' +
      'FAILED) or that is not APPROVED is a 409 naming its status; deny a PENDING one instead.',
    tag: 'Operations',
    auth: true,
    params: WithdrawalPathParams,
    body: CancelWithdrawalRequest,
    bodyRequired: false,
    responses: {
      200: ok(OperatorWithdrawalResponse),
      409: { description: 'Not APPROVED (already sent to the PSP, or not approved)', schema: ErrorBody },
    },
  },
  // PSP
  {
    method: 'post',
    path: '/psp/webhook/pix',
    operationId: 'receivePspPixNotification',
    summary: 'PIX payment notification from the PSP (API Pix standard)',
    description:
      'The PSP appends /pix to the registered URL .../api/v1/psp/webhook. A repeat changes nothing.',
    tag: 'PSP',
    auth: false,
    body: PspPixNotification,
    // No key: the gateway limits the PSP routes per client address and caps their bodies (docs/limits.md).
    responses: {
      200: ok(PspPixNotificationResponse),
      413: { description: 'Body over 64 KiB (PSP_NOTIFICATION_MAX_BYTES)', schema: ErrorBody },
      429: {
        description:
          'Over 1200 notifications per minute from this address (PSP_RATE_LIMIT_PER_MINUTE); Retry-After says when to send again',
        schema: ErrorBody,
      },
    },
  },
  // Documentation
  {
    method: 'get',
    path: '/openapi.json',
    operationId: 'getOpenApiDocument',
    summary: 'This OpenAPI 3.1 document',
    tag: 'Documentation',
    auth: false,
    servedByGateway: true,
    responses: { 200: { description: 'The OpenAPI document' } },
  },
  {
    method: 'get',
    path: '/docs',
    operationId: 'getDocsPage',
    summary: 'This reference as an HTML page (Swagger UI, served from this origin)',
    tag: 'Documentation',
    auth: false,
    servedByGateway: true,
    responses: { 200: { description: 'HTML page', contentType: 'text/html' } },
  },
];

/** `/sellers/orders/{uuid}/` → `/sellers/orders/:uuid/`, for Express routers and metric labels. */
export function toExpressPath(path: string): string {
  return path.replace(/\{([A-Za-z0-9_]+)\}/g, ':$1');
}
