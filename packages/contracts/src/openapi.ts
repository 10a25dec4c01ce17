import { z } from 'zod';
import { ListQuery, MessageResponse } from './common';
import { ErrorBody, ValidationErrorBody } from './errors';
import { EVENT_NAMES, eventEnvelope } from './events';
import {
  BalanceResponse,
  CreateWithdrawalRequest,
  DenyWithdrawalRequest,
  OpsWithdrawalListQuery,
  WithdrawalListQuery,
  WithdrawalListResponse,
  WithdrawalPathParams,
  WithdrawalResponse,
} from './finance';
import {
  CreateOrderRequest,
  CreateOrderResponse,
  MedResolveRequest,
  OrderDetailResponse,
  OrderListQuery,
  OrderListResponse,
  OrderPathParams,
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
  UpdateWebhookRequest,
  WebhookListResponse,
  WebhookPathParams,
  WebhookResponse,
} from './webhooks';

// ---------------------------------------------------------------------------------------------------
// Route registry: the one list of public routes, from which the document (and the docs page) is built.
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
}

export const TAGS: readonly { name: string; description: string }[] = [
  { name: 'Orders', description: 'Create, read, list and track orders; cancel and refund them.' },
  { name: 'Products', description: 'Products sold in orders (extension).' },
  { name: 'Sandbox', description: 'Move test orders as the PSP would. Test keys only: a live key gets 403.' },
  { name: 'Webhooks', description: 'Global webhook registrations, their deliveries and manual re-sends.' },
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

function sandboxRoute(action: string, operationId: string, summary: string, body?: z.ZodType): RouteDoc {
  return {
    method: 'post',
    path: `/sandbox/orders/{uuid}/${action}/`,
    operationId,
    summary,
    tag: 'Sandbox',
    auth: true,
    params: OrderPathParams,
    ...(body ? { body, bodyRequired: true } : {}),
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
  {
    method: 'get',
    path: '/sellers/orders/{uuid}/',
    operationId: 'getOrder',
    summary: 'Read an order',
    tag: 'Orders',
    auth: true,
    params: OrderPathParams,
    responses: { 200: ok(OrderDetailResponse) },
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
      'already withdrawn cannot be refunded. A failed refund gives the reservation back.',
    tag: 'Orders',
    auth: true,
    params: OrderPathParams,
    responses: {
      200: ok(MessageResponse),
      409: {
        description:
          '`conflict`: the order is not PAID (the message names its status); `insufficient_balance`: the ' +
          "available balance does not cover the order's net amount, and nothing was changed; or " +
          '`idempotency_conflict`',
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
    summary: 'Register an affiliate (extension); orders name it with affiliate_code',
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
  sandboxRoute('pay', 'sandboxPayOrder', 'Pay a test order as the PSP would'),
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
    query: ListQuery,
    responses: { 200: ok(WebhookListResponse) },
  },
  {
    method: 'get',
    path: '/config/webhooks/{id}/',
    operationId: 'getWebhook',
    summary: 'Read a webhook',
    tag: 'Webhooks',
    auth: true,
    params: WebhookPathParams,
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
    responses: { 200: ok(WebhookResponse) },
  },
  {
    method: 'delete',
    path: '/config/webhooks/{id}/',
    operationId: 'deleteWebhook',
    summary: 'Delete a webhook',
    tag: 'Webhooks',
    auth: true,
    params: WebhookPathParams,
    responses: { 204: { description: 'Deleted' } },
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
    responses: { 200: ok(MessageResponse) },
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
    responses: { 200: ok(BulkResendResponse) },
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
      'Holds the amount until the withdrawal is paid, denied or failed. Emits withdrawal.requested.',
    tag: 'Finance',
    auth: true,
    body: CreateWithdrawalRequest,
    responses: { 201: ok(WithdrawalResponse, 'Withdrawal requested') },
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
    tag: 'Operations',
    auth: true,
    query: OpsWithdrawalListQuery,
    responses: { 200: ok(WithdrawalListResponse) },
  },
  {
    method: 'get',
    path: '/ops/withdrawals/{uuid}/',
    operationId: 'getWithdrawalForOperators',
    summary: "Read a withdrawal of the operator key's environment, with its environment and seller",
    tag: 'Operations',
    auth: true,
    params: WithdrawalPathParams,
    responses: { 200: ok(WithdrawalResponse) },
  },
  {
    method: 'post',
    path: '/ops/withdrawals/{uuid}/approve/',
    operationId: 'approveWithdrawal',
    summary: 'Approve a pending withdrawal',
    tag: 'Operations',
    auth: true,
    params: WithdrawalPathParams,
    responses: { 200: ok(WithdrawalResponse), 409: { description: 'Not PENDING', schema: ErrorBody } },
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
    responses: { 200: ok(WithdrawalResponse), 409: { description: 'Not PENDING', schema: ErrorBody } },
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
    responses: { 200: ok(PspPixNotificationResponse) },
  },
  // Documentation
  {
    method: 'get',
    path: '/openapi.json',
    operationId: 'getOpenApiDocument',
    summary: 'This OpenAPI 3.1 document',
    tag: 'Documentation',
    auth: false,
    responses: { 200: { description: 'The OpenAPI document' } },
  },
  {
    method: 'get',
    path: '/docs',
    operationId: 'getDocsPage',
    summary: 'This reference as an HTML page',
    tag: 'Documentation',
    auth: false,
    responses: { 200: { description: 'HTML page', contentType: 'text/html' } },
  },
];

/** `/sellers/orders/{uuid}/` → `/sellers/orders/:uuid/`, for Express routers and metric labels. */
export function toExpressPath(path: string): string {
  return path.replace(/\{([A-Za-z0-9_]+)\}/g, ':$1');
}

// ---------------------------------------------------------------------------------------------------
// OpenAPI 3.1 document
// ---------------------------------------------------------------------------------------------------

export type JsonSchema = Record<string, unknown>;

export interface OpenApiRef {
  $ref: string;
}

export interface OpenApiMediaType {
  schema?: JsonSchema;
}

export interface OpenApiResponse {
  description: string;
  headers?: Record<string, OpenApiRef>;
  content?: Record<string, OpenApiMediaType>;
}

export interface OpenApiParameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  description?: string;
  schema: JsonSchema;
}

export interface OpenApiOperation {
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  security: Record<string, string[]>[];
  parameters: OpenApiParameter[];
  requestBody?: { required: boolean; content: Record<string, OpenApiMediaType> };
  responses: Record<string, OpenApiResponse>;
}

export type OpenApiPathItem = Partial<Record<HttpMethod, OpenApiOperation>>;

export interface OpenApiHeader {
  description: string;
  schema: JsonSchema;
}

export interface OpenApiDocument {
  openapi: '3.1.0';
  jsonSchemaDialect: string;
  info: { title: string; version: string; description: string };
  servers: { url: string; description: string }[];
  tags: { name: string; description: string }[];
  paths: Record<string, OpenApiPathItem>;
  webhooks: Record<string, OpenApiPathItem>;
  components: {
    schemas: Record<string, JsonSchema>;
    headers: Record<string, OpenApiHeader>;
    securitySchemes: Record<
      string,
      { type: 'http'; scheme: 'bearer'; bearerFormat: string; description: string }
    >;
  };
}

export const JSON_SCHEMA_DIALECT = 'https://json-schema.org/draft/2020-12/schema';

/**
 * zod → JSON Schema 2020-12, which OpenAPI 3.1 embeds as is. Requests are described as the client
 * writes them (`input`: defaults optional, transforms not applied), responses as the server sends them.
 */
export function toJsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    io,
    unrepresentable: 'any',
  });
  return rest;
}

const ref = (name: string): JsonSchema => ({ $ref: `#/components/schemas/${name}` });

const json = (schema: JsonSchema): Record<string, OpenApiMediaType> => ({ 'application/json': { schema } });

function errorResponse(description: string, schema: JsonSchema = ref('ErrorBody')): OpenApiResponse {
  return {
    description,
    headers: { 'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' } },
    content: json(schema),
  };
}

/** Path or query parameters from the shape of a zod object, one per key. */
function parametersOf(schema: z.ZodObject, location: 'path' | 'query'): OpenApiParameter[] {
  return Object.entries(schema.shape).map(([name, field]: [string, z.ZodType]) => {
    const fieldSchema = toJsonSchema(field, 'input');
    const description = typeof fieldSchema.description === 'string' ? fieldSchema.description : undefined;
    return {
      name,
      in: location,
      // Path parameters are always required in OpenAPI; a query one unless it is optional or defaulted.
      required: location === 'path' || !field.isOptional(),
      ...(description ? { description } : {}),
      schema: fieldSchema,
    };
  });
}

function operationOf(route: RouteDoc): OpenApiOperation {
  const parameters: OpenApiParameter[] = [
    ...(route.params ? parametersOf(route.params, 'path') : []),
    ...(route.query ? parametersOf(route.query, 'query') : []),
  ];
  if (route.method === 'post' && route.auth) {
    parameters.push({
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      description:
        'For 24 hours the same key with the same body returns the first response again; with a different ' +
        'body, or while the first is still running, 409.',
      schema: { type: 'string', minLength: 1, maxLength: 255 },
    });
  }

  const responses: Record<string, OpenApiResponse> = {};
  const headers: Record<string, OpenApiRef> = {
    'X-Request-Id': { $ref: '#/components/headers/X-Request-Id' },
  };
  if (route.auth) {
    for (const name of ['X-RateLimit-Limit', 'X-RateLimit-Remaining', 'X-RateLimit-Reset']) {
      headers[name] = { $ref: `#/components/headers/${name}` };
    }
  }
  for (const [status, doc] of Object.entries(route.responses)) {
    const response: OpenApiResponse = { description: doc.description, headers };
    if (doc.contentType !== undefined) {
      response.content = {
        [doc.contentType]: doc.schema ? { schema: toJsonSchema(doc.schema, 'output') } : {},
      };
    } else if (doc.schema) {
      response.content = json(toJsonSchema(doc.schema, 'output'));
    }
    responses[status] = response;
  }

  const add = (status: string, response: OpenApiResponse): void => {
    responses[status] ??= response;
  };
  if (route.body || route.query || route.params) {
    add(
      '400',
      errorResponse('Invalid body, query or path parameter; or a body that is not JSON', {
        anyOf: [ref('ValidationErrorBody'), ref('ErrorBody')],
      }),
    );
  }
  if (route.auth) {
    add('401', errorResponse('Authorization header missing, malformed, unknown or revoked key'));
    add('403', errorResponse('Valid key without permission over this resource'));
    add('404', errorResponse('Not found (objects of the other environment do not exist for the key)'));
  }
  if (route.method === 'post' && route.auth) {
    add(
      '409',
      errorResponse('Idempotency-Key reused with a different body, or its first request still running'),
    );
  }
  if (route.body) add('413', errorResponse('Body over 1 MiB'));
  if (route.auth) {
    const limited = errorResponse('Over 300 requests per minute for this key');
    limited.headers = { ...limited.headers, 'Retry-After': { $ref: '#/components/headers/Retry-After' } };
    add('429', limited);
  }
  add('5XX', errorResponse('Server-side failure; the body carries request_id and never internals'));

  const operation: OpenApiOperation = {
    operationId: route.operationId,
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    tags: [route.tag],
    security: route.auth ? [{ bearerAuth: [] }] : [],
    parameters,
    responses,
  };
  if (route.body) {
    operation.requestBody = {
      required: route.bodyRequired ?? true,
      content: json(toJsonSchema(route.body, 'input')),
    };
  }
  return operation;
}

/** One `webhooks` entry per event: what a receiver gets POSTed (docs/events.md). */
function webhookOperations(): Record<string, OpenApiPathItem> {
  const webhooks: Record<string, OpenApiPathItem> = {};
  for (const name of EVENT_NAMES) {
    webhooks[name] = {
      post: {
        operationId: `event_${name.replace(/\./g, '_')}`,
        summary: `${name} delivery`,
        description:
          'Headers: X-Webhook-Event, X-Webhook-Event-Id (evt_<id>, the same on every attempt), and for ' +
          'global webhooks X-Webhook-Timestamp and X-Webhook-Signature: sha256=<hex HMAC-SHA256(secret, ' +
          '"<event id>.<timestamp>.<raw body>")>. Any 2xx ends the delivery; anything else is retried, up to 8 attempts.',
        tags: ['Events'],
        security: [],
        parameters: [],
        requestBody: { required: true, content: json(toJsonSchema(eventEnvelope(name), 'output')) },
        responses: { '2XX': { description: 'Received; answer within about 1 second' } },
      },
    };
  }
  return webhooks;
}

const integerHeader = (description: string): OpenApiHeader => ({ description, schema: { type: 'integer' } });

/** The whole API reference, generated from the route registry and the event catalogue. */
export function buildOpenApiDocument(): OpenApiDocument {
  const paths: Record<string, OpenApiPathItem> = {};
  for (const route of routes) {
    const item = (paths[route.path] ??= {});
    item[route.method] = operationOf(route);
  }
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: JSON_SCHEMA_DIALECT,
    info: {
      title: 'Seller API',
      version: '1.0.0',
      description:
        'PIX payments for Brazilian sellers: orders, charges, tracking, webhooks and withdrawals. Amounts ' +
        '(every *_amount field) are integer cents. Datetimes are ISO 8601 UTC with milliseconds; dates YYYY-MM-DD.',
    },
    servers: [{ url: '/api/v1', description: 'This deployment' }],
    tags: [...TAGS, { name: 'Events', description: 'Webhook deliveries the API sends.' }],
    paths,
    webhooks: webhookOperations(),
    components: {
      schemas: {
        ErrorBody: toJsonSchema(ErrorBody, 'output'),
        ValidationErrorBody: toJsonSchema(ValidationErrorBody, 'output'),
      },
      headers: {
        'X-Request-Id': {
          description: 'Request id, echoed when the client sent one',
          schema: { type: 'string' },
        },
        'X-RateLimit-Limit': integerHeader('Requests allowed per rolling minute for this key'),
        'X-RateLimit-Remaining': integerHeader('Requests left in the current window'),
        'X-RateLimit-Reset': integerHeader('Seconds until the window frees a request'),
        'Retry-After': integerHeader('Seconds to wait before retrying'),
      },
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'mk_<env>_<token>',
          description: 'API key from the panel (Settings, API Keys); env is test or live.',
        },
      },
    },
  };
}

// ---------------------------------------------------------------------------------------------------
// HTML reference page
// ---------------------------------------------------------------------------------------------------

export function escapeHtml(value: string): string {
  return value
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

const METHODS: readonly HttpMethod[] = ['get', 'post', 'put', 'patch', 'delete'];

const pre = (value: unknown): string => `<pre>${escapeHtml(JSON.stringify(value, null, 2))}</pre>`;

/** Anchor id: letters, digits and dashes only, so no input can break out of the attribute. */
const anchor = (value: string): string => value.replace(/[^A-Za-z0-9]+/g, '-').replace(/^-|-$/g, '');

function renderOperation(method: HttpMethod, path: string, op: OpenApiOperation): string {
  const parts: string[] = [];
  parts.push(`<section class="op" id="${anchor(op.operationId)}">`);
  parts.push(
    `<h3><span class="method ${method}">${method.toUpperCase()}</span> <code>${escapeHtml(path)}</code>` +
      `${op.security.length > 0 ? ' <span class="auth">API key</span>' : ' <span class="auth open">no key</span>'}</h3>`,
  );
  parts.push(`<p class="summary">${escapeHtml(op.summary)}</p>`);
  if (op.description) parts.push(`<p>${escapeHtml(op.description)}</p>`);
  if (op.parameters.length > 0) {
    parts.push(
      '<h4>Parameters</h4><table><thead><tr><th>Name</th><th>In</th><th>Required</th><th>Schema</th></tr></thead><tbody>',
    );
    for (const p of op.parameters) {
      parts.push(
        `<tr><td><code>${escapeHtml(p.name)}</code>${p.description ? `<br><small>${escapeHtml(p.description)}</small>` : ''}</td>` +
          `<td>${p.in}</td><td>${p.required ? 'yes' : 'no'}</td><td><code>${escapeHtml(JSON.stringify(p.schema))}</code></td></tr>`,
      );
    }
    parts.push('</tbody></table>');
  }
  if (op.requestBody) {
    parts.push(`<h4>Request body${op.requestBody.required ? '' : ' (optional)'}</h4>`);
    for (const [type, media] of Object.entries(op.requestBody.content)) {
      parts.push(`<p><small>${escapeHtml(type)}</small></p>${media.schema ? pre(media.schema) : ''}`);
    }
  }
  parts.push('<h4>Responses</h4>');
  for (const [status, response] of Object.entries(op.responses)) {
    parts.push(
      `<details${status.startsWith('2') ? ' open' : ''}><summary><strong>${escapeHtml(status)}</strong> ${escapeHtml(response.description)}</summary>`,
    );
    for (const [type, media] of Object.entries(response.content ?? {})) {
      parts.push(`<p><small>${escapeHtml(type)}</small></p>${media.schema ? pre(media.schema) : ''}`);
    }
    parts.push('</details>');
  }
  parts.push('</section>');
  return parts.join('\n');
}

const STYLE = `
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:0;color:#1f2328;background:#fff;line-height:1.45}
header{background:#0b3d2e;color:#fff;padding:1.2rem 2rem}header h1{margin:0 0 .3rem}header p{margin:.2rem 0;opacity:.9}
main{display:flex;gap:2rem;padding:1rem 2rem}nav{min-width:15rem;position:sticky;top:0;align-self:flex-start;max-height:100vh;overflow:auto}
nav ul{list-style:none;padding-left:.6rem;margin:.2rem 0 .8rem}nav a{color:#0b5d43;text-decoration:none;font-size:.9rem}
article{flex:1;min-width:0}h2{border-bottom:2px solid #d0d7de;padding-bottom:.3rem;margin-top:2rem}
.op{border:1px solid #d0d7de;border-radius:6px;padding:.6rem 1rem;margin:1rem 0}.op h3{margin:.2rem 0;font-size:1.05rem}
.method{display:inline-block;min-width:4.2rem;text-align:center;border-radius:4px;color:#fff;font-size:.8rem;padding:.15rem .4rem}
.get{background:#1f6feb}.post{background:#2da44e}.patch{background:#bf8700}.put{background:#8250df}.delete{background:#cf222e}
.auth{font-size:.75rem;border:1px solid #8c959f;border-radius:10px;padding:0 .5rem;color:#57606a}.auth.open{border-style:dashed}
.summary{font-weight:600}table{border-collapse:collapse;width:100%;font-size:.85rem}td,th{border:1px solid #d0d7de;padding:.3rem .5rem;text-align:left;vertical-align:top}
pre{background:#f6f8fa;border:1px solid #d0d7de;border-radius:6px;padding:.6rem;overflow:auto;font-size:.8rem;max-height:32rem}
details{margin:.3rem 0}summary{cursor:pointer}code{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace}
`;

/** A self-contained page (inline CSS, no script, nothing fetched) listing every operation by tag. */
export function renderDocsHtml(doc: OpenApiDocument): string {
  const byTag = new Map<string, { method: HttpMethod; path: string; op: OpenApiOperation }[]>();
  for (const tag of doc.tags) byTag.set(tag.name, []);
  const collect = (items: Record<string, OpenApiPathItem>): void => {
    for (const [path, item] of Object.entries(items)) {
      for (const method of METHODS) {
        const op = item[method];
        if (!op) continue;
        const tag = op.tags[0] ?? 'Other';
        const list = byTag.get(tag) ?? [];
        list.push({ method, path, op });
        byTag.set(tag, list);
      }
    }
  };
  collect(doc.paths);
  collect(doc.webhooks);

  const descriptions = new Map(doc.tags.map((tag) => [tag.name, tag.description]));
  const nav: string[] = [];
  const body: string[] = [];
  for (const [tag, ops] of byTag) {
    if (ops.length === 0) continue;
    nav.push(`<li><a href="#tag-${anchor(tag)}"><strong>${escapeHtml(tag)}</strong></a><ul>`);
    body.push(`<h2 id="tag-${anchor(tag)}">${escapeHtml(tag)}</h2>`);
    const description = descriptions.get(tag);
    if (description) body.push(`<p>${escapeHtml(description)}</p>`);
    for (const { method, path, op } of ops) {
      nav.push(
        `<li><a href="#${anchor(op.operationId)}">${method.toUpperCase()} ${escapeHtml(path)}</a></li>`,
      );
      body.push(renderOperation(method, path, op));
    }
    nav.push('</ul></li>');
  }
  body.push('<h2 id="components">Shared schemas</h2>');
  for (const [name, schema] of Object.entries(doc.components.schemas)) {
    body.push(`<h3 id="schema-${anchor(name)}"><code>${escapeHtml(name)}</code></h3>${pre(schema)}`);
  }

  const server = doc.servers[0]?.url ?? '';
  return [
    '<!DOCTYPE html>',
    '<html lang="en"><head><meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeHtml(doc.info.title)} ${escapeHtml(doc.info.version)}</title>`,
    `<style>${STYLE}</style></head><body>`,
    `<header><h1>${escapeHtml(doc.info.title)} <small>${escapeHtml(doc.info.version)}</small></h1>`,
    `<p>${escapeHtml(doc.info.description)}</p>`,
    `<p>Base path <code>${escapeHtml(server)}</code>. Authentication: <code>Authorization: Bearer mk_&lt;env&gt;_&lt;token&gt;</code>. ` +
      'Machine-readable: <a style="color:#fff" href="openapi.json">openapi.json</a>.</p></header>',
    `<main><nav><ul>${nav.join('')}</ul></nav><article>`,
    body.join('\n'),
    '</article></main></body></html>',
  ].join('\n');
}
