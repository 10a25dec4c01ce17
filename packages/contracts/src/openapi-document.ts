import { z } from 'zod';
import { ErrorBody, type ErrorCode, ValidationErrorBody } from './errors';
import { EVENT_NAMES, eventEnvelope } from './events';
import { type HttpMethod, type RouteDoc, routes, TAGS } from './route-registry';

// ---------------------------------------------------------------------------------------------------
// OpenAPI 3.1 document, built from the route registry and the event catalogue. The gateway serves it
// as /api/v1/openapi.json and renders it on /api/v1/docs.
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

/** An error body whose `code` is the one given. */
function errorBodyWithCode(code: ErrorCode): JsonSchema {
  return { allOf: [ref('ErrorBody'), { properties: { code: { const: code } } }] };
}

const RETRY_ADVICE =
  'Retry with a growing delay; retry a POST with the same Idempotency-Key, which replays the first ' +
  'answer if it was carried out (docs/errors.md, "502, 503 and 504").';

/**
 * What the gateway answers when the hop to the service behind it fails (docs/errors.md): unreachable
 * (503, never carried out), an answer that broke off or could not be read (502) and no complete answer
 * within the upstream timeout (504), both of which may have been carried out.
 */
function upstreamFailures(): Record<'502' | '503' | '504', OpenApiResponse> {
  const unavailable = errorResponse(
    'service_unavailable: the service behind the gateway could not be reached (or its database, or the ' +
      `PSP, for the routes that need them); nothing was carried out unless stated. ${RETRY_ADVICE}`,
    errorBodyWithCode('service_unavailable'),
  );
  unavailable.headers = {
    ...unavailable.headers,
    'Retry-After': { $ref: '#/components/headers/Retry-After' },
  };
  return {
    '502': errorResponse(
      'bad_gateway: the service behind the gateway was reached, but its answer broke off or could not be ' +
        `read; the request may have been carried out. ${RETRY_ADVICE}`,
      errorBodyWithCode('bad_gateway'),
    ),
    '503': unavailable,
    '504': errorResponse(
      'gateway_timeout: the service behind the gateway gave no complete answer within the upstream ' +
        `timeout (10 s by default); the request may have been carried out. ${RETRY_ADVICE}`,
      errorBodyWithCode('gateway_timeout'),
    ),
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
  if (!route.servedByGateway) {
    for (const [status, response] of Object.entries(upstreamFailures())) add(status, response);
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
          '"<event id>.<timestamp>.<raw body>")>, and the Standard Webhooks webhook-id (the event id), ' +
          "webhook-timestamp and webhook-signature: v1,<base64 HMAC-SHA256 keyed by the secret's base64 " +
          'bytes after whsec_>. Any 2xx ends the delivery; anything else is retried, up to 8 attempts.',
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
  // No jsonSchemaDialect: the schemas are JSON Schema 2020-12, which OpenAPI 3.1's default dialect
  // extends, and renderers (Swagger UI) warn on any other value.
  return {
    openapi: '3.1.0',
    info: {
      title: 'Seller API',
      version: '1.0.0',
      description:
        'PIX payments for Brazilian sellers: orders, charges, tracking, webhooks and withdrawals. Amounts ' +
        '(every *_amount field) are integer cents. Datetimes are ISO 8601 UTC with milliseconds; dates YYYY-MM-DD.',
    },
    servers: [{ url: '/api/v1', description: 'This deployment' }],
    // One tag per name: the webhook deliveries share the Events tag, whose description covers both.
    tags: [...TAGS],
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
