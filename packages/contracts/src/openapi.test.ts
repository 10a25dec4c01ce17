import { EVENT_NAMES } from './events';
import { type OpenApiDocument, buildOpenApiDocument, routes, toExpressPath } from './openapi';

/** Every public route of the table in docs/api.md, written out independently of the registry. */
const EXPECTED = [
  'POST /sellers/orders/',
  'GET /sellers/orders/',
  'GET /sellers/orders/summary/',
  'GET /sellers/orders/{uuid}/',
  'GET /sellers/orders/{uuid}/amount-due/',
  'PATCH /sellers/orders/{uuid}/tracking/',
  'POST /sellers/orders/{uuid}/cancel/',
  'POST /sellers/orders/{uuid}/refund/',
  'GET /sellers/orders/{uuid}/postback-deliveries/',
  'POST /sellers/orders/{uuid}/postback-deliveries/{delivery_id}/resend/',
  'POST /sellers/products/',
  'GET /sellers/products/',
  'GET /sellers/products/{uuid}/',
  'POST /sellers/affiliates/',
  'GET /sellers/affiliates/',
  'GET /ops/withdrawals/',
  'POST /sandbox/orders/{uuid}/pay/',
  'POST /sandbox/orders/{uuid}/expire/',
  'POST /sandbox/orders/{uuid}/med/',
  'POST /sandbox/orders/{uuid}/med/resolve/',
  'POST /sandbox/orders/{uuid}/chargeback/',
  'POST /config/webhooks/',
  'GET /config/webhooks/',
  'GET /config/webhooks/health/',
  'GET /config/webhooks/{id}/',
  'PATCH /config/webhooks/{id}/',
  'DELETE /config/webhooks/{id}/',
  'GET /config/webhooks/{id}/deliveries/',
  'POST /config/webhooks/{id}/deliveries/{delivery_id}/resend/',
  'POST /config/webhooks/{id}/deliveries/resend/',
  'GET /events/',
  'GET /events/{id}/',
  'GET /finance/balance/',
  'POST /finance/withdrawals/',
  'GET /finance/withdrawals/',
  'GET /finance/withdrawals/{uuid}/',
  'GET /ops/withdrawals/{uuid}/',
  'POST /ops/withdrawals/{uuid}/approve/',
  'POST /ops/withdrawals/{uuid}/deny/',
  'POST /ops/withdrawals/{uuid}/cancel/',
  'GET /ops/withdrawals/suspensions/',
  'POST /ops/withdrawals/sellers/{seller_id}/suspend/',
  'POST /ops/withdrawals/sellers/{seller_id}/unsuspend/',
  'POST /psp/webhook/pix',
  'GET /openapi.json',
  'GET /docs',
];

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

function operations(doc: OpenApiDocument) {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    METHODS.flatMap((method) => {
      const op = item[method];
      return op ? [{ key: `${method.toUpperCase()} ${path}`, path, op }] : [];
    }),
  );
}

/** Every `$ref` string anywhere in a JSON value. */
function refsIn(value: unknown): string[] {
  if (Array.isArray(value)) return value.flatMap(refsIn);
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([key, inner]) =>
    key === '$ref' && typeof inner === 'string' ? [inner] : refsIn(inner),
  );
}

interface JsonObject {
  properties: Record<string, unknown>;
  required?: string[];
  items?: unknown;
}

/** Every summary, description and tag text anywhere in the document. */
function* textsIn(value: unknown): Generator<string> {
  if (Array.isArray(value)) {
    for (const inner of value) yield* textsIn(inner);
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  for (const [key, inner] of Object.entries(value)) {
    if (['summary', 'description', 'name'].includes(key) && typeof inner === 'string') yield inner;
    else if (key === 'tags' && Array.isArray(inner)) yield* inner.filter((t) => typeof t === 'string');
    yield* textsIn(inner);
  }
}

function resolve(doc: OpenApiDocument, ref: string): unknown {
  return ref
    .replace(/^#\//, '')
    .split('/')
    .reduce<unknown>(
      (node, part) =>
        typeof node === 'object' && node !== null ? (node as Record<string, unknown>)[part] : undefined,
      doc,
    );
}

describe('buildOpenApiDocument', () => {
  const doc = buildOpenApiDocument();

  it('is an OpenAPI 3.1.0 document served under /api/v1 with bearer API keys', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.servers[0]?.url).toBe('/api/v1');
    expect(doc.components.securitySchemes.bearerAuth).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(doc.info.title).toBeTruthy();
    // The default dialect (JSON Schema 2020-12 with OpenAPI's vocabulary): renderers warn on another.
    expect(doc).not.toHaveProperty('jsonSchemaDialect');
  });

  it('has every public route and nothing else', () => {
    expect(
      operations(doc)
        .map((o) => o.key)
        .sort(),
    ).toEqual([...EXPECTED].sort());
    expect(routes).toHaveLength(EXPECTED.length);
  });

  it('gives each operation a unique id, a summary and a 2xx response', () => {
    const ops = operations(doc);
    expect(new Set(ops.map((o) => o.op.operationId)).size).toBe(ops.length);
    for (const { key, op } of ops) {
      expect({ key, summary: op.summary.length > 0 }).toEqual({ key, summary: true });
      expect({ key, ok: Object.keys(op.responses).some((status) => status.startsWith('2')) }).toEqual({
        key,
        ok: true,
      });
    }
  });

  it('documents 401, 403, 404 and 429 on authenticated routes, and 429 on the PSP route limited per address', () => {
    for (const { key, op } of operations(doc)) {
      const statuses = ['401', '403', '404', '429'].filter((status) => status in op.responses);
      const unauthenticated = key === 'POST /psp/webhook/pix' ? ['429'] : [];
      const expected = op.security.length > 0 ? ['401', '403', '404', '429'] : unauthenticated;
      expect({ key, statuses }).toEqual({ key, statuses: expected });
    }
    expect(doc.paths['/psp/webhook/pix']?.post?.security).toEqual([]);
    expect(doc.paths['/psp/webhook/pix']?.post?.responses['413']?.description).toContain('64 KiB');
    expect(doc.paths['/sellers/orders/']?.post?.security).toEqual([{ bearerAuth: [] }]);
  });

  it('lists bad_gateway and gateway_timeout among the error codes', () => {
    const code = (doc.components.schemas.ErrorBody?.properties as Record<string, { enum?: string[] }>).code;
    expect(code?.enum).toEqual(
      expect.arrayContaining(['service_unavailable', 'bad_gateway', 'gateway_timeout']),
    );
  });

  it('documents 502, 503 and 504 with their codes on every route the gateway forwards', () => {
    const expected = { '502': 'bad_gateway', '503': 'service_unavailable', '504': 'gateway_timeout' };
    for (const { key, op } of operations(doc)) {
      const served = key === 'GET /openapi.json' || key === 'GET /docs';
      const codes = Object.fromEntries(
        Object.keys(expected)
          .filter((status) => status in op.responses)
          .map((status) => {
            const schema = op.responses[status]?.content?.['application/json']?.schema as {
              allOf?: { properties?: { code?: { const?: string } } }[];
            };
            return [status, schema.allOf?.[1]?.properties?.code?.const];
          }),
      );
      expect({ key, codes }).toEqual({ key, codes: served ? {} : expected });
      if (!served) {
        expect(refsIn(op.responses['502'])).toContain('#/components/schemas/ErrorBody');
        expect(op.responses['504']?.description).toMatch(/Idempotency-Key/);
        expect(Object.keys(op.responses['503']?.headers ?? {})).toContain('Retry-After');
      }
      expect(op.responses['5XX']).toBeDefined();
    }
  });

  it('describes validation errors with ValidationErrorBody on routes that take input', () => {
    const create = doc.paths['/sellers/orders/']?.post;
    expect(refsIn(create?.responses['400'])).toContain('#/components/schemas/ValidationErrorBody');
    expect(refsIn(create?.responses['401'])).toContain('#/components/schemas/ErrorBody');
  });

  it('declares path parameters from the path template, all required', () => {
    for (const { key, path, op } of operations(doc)) {
      const inPath = [...path.matchAll(/\{([a-z_]+)\}/g)].map((m) => m[1]).sort();
      const declared = op.parameters.filter((p) => p.in === 'path');
      expect({ key, names: declared.map((p) => p.name).sort() }).toEqual({ key, names: inPath });
      expect(declared.every((p) => p.required)).toBe(true);
    }
  });

  it('converts the create-order body from the zod schema, input side', () => {
    const schema = doc.paths['/sellers/orders/']?.post?.requestBody?.content['application/json']?.schema;
    expect(schema).toMatchObject({ type: 'object', required: ['customer', 'payment'] });
    expect(Object.keys((schema?.properties ?? {}) as object)).toEqual(
      expect.arrayContaining(['customer', 'items', 'payment', 'postback_url']),
    );
    const limit = doc.paths['/sellers/orders/']?.get?.parameters.find((p) => p.name === 'limit');
    expect(limit).toMatchObject({
      in: 'query',
      required: false,
      schema: { type: 'integer', default: 20, maximum: 100 },
    });
  });

  it('resolves every $ref inside the document and embeds no $defs or $schema', () => {
    const refs = refsIn(doc);
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of new Set(refs))
      expect({ ref, found: resolve(doc, ref) !== undefined }).toEqual({ ref, found: true });
    const text = JSON.stringify(doc);
    expect(text).not.toContain('"$defs"');
    expect(text).not.toContain('"$schema"');
    expect(JSON.parse(text)).toEqual(doc);
  });

  it('names each tag once and keeps internal wording out of tags, summaries and descriptions', () => {
    const names = doc.tags.map((t) => t.name);
    expect(new Set(names).size).toBe(names.length);
    const used = new Set(
      [...operations(doc), ...Object.values(doc.webhooks).map((w) => ({ op: w.post }))].flatMap(
        ({ op }) => op?.tags ?? [],
      ),
    );
    expect([...used].filter((tag) => !names.includes(tag))).toEqual([]);
    const texts = [...textsIn(doc)];
    expect(texts.length).toBeGreaterThan(100);
    expect(texts.filter((text) => /extension|\(internal\)|TODO/i.test(text))).toEqual([]);
  });

  it('shows the order detail with its pix charge and says how its item ids relate to create', () => {
    const detail = doc.paths['/sellers/orders/{uuid}/']?.get?.responses['200']?.content?.['application/json']
      ?.schema as unknown as JsonObject;
    const data = detail.properties.data as JsonObject;
    expect(data.required).toContain('pix');
    expect(JSON.stringify(data.properties.pix)).toContain('copy_and_paste');
    expect((data.properties.pix as { description: string }).description).toMatch(/PENDING/);
    const itemId = ((data.properties.items as JsonObject).items as JsonObject).properties.uuid;
    expect((itemId as { description: string }).description).toContain('product_uuid');
    const created = doc.paths['/sellers/orders/']?.post?.responses['201']?.content?.['application/json']
      ?.schema as unknown as JsonObject;
    const createdItems = ((created.properties.data as JsonObject).properties.items as JsonObject)
      .items as JsonObject;
    expect((createdItems.properties.product_uuid as { description: string }).description).toContain(
      'items[].uuid',
    );
  });

  it('shows every public request body, nested objects and array items included, as strict', () => {
    // Every object schema of a JSON schema, with where it sits.
    const objectsIn = (schema: unknown, at: string): { at: string; node: Record<string, unknown> }[] => {
      if (schema === null || typeof schema !== 'object') return [];
      const node = schema as Record<string, unknown>;
      const own = node.type === 'object' || node.properties ? [{ at, node }] : [];
      return [
        ...own,
        ...Object.entries(node).flatMap(([key, value]) =>
          Array.isArray(value)
            ? value.flatMap((item, index) => objectsIn(item, `${at}.${key}.${index}`))
            : objectsIn(value, `${at}.${key}`),
        ),
      ];
    };
    const bodies = operations(doc).filter(({ op }) => op.requestBody && !op.tags.includes('PSP'));
    expect(bodies.length).toBeGreaterThan(10);
    for (const { key, op } of bodies) {
      const schema = op.requestBody?.content['application/json']?.schema;
      const objects = objectsIn(schema, key);
      expect(objects.length).toBeGreaterThan(0);
      for (const { at, node } of objects)
        expect({ at, additionalProperties: node.additionalProperties }).toEqual({
          at,
          additionalProperties: false,
        });
    }
    const order = doc.paths['/sellers/orders/']?.post?.requestBody?.content['application/json']?.schema;
    expect(order).toMatchObject({
      additionalProperties: false,
      properties: {
        customer: { additionalProperties: false, properties: { address: expect.anything() } },
        items: { items: { additionalProperties: false } },
        payment: { additionalProperties: false },
      },
    });
  });

  it('answers a withdrawal the balance does not cover with 409, as a refund', () => {
    for (const path of ['/finance/withdrawals/', '/sellers/orders/{uuid}/refund/']) {
      const conflict = doc.paths[path]?.post?.responses['409'];
      expect({ path, description: conflict?.description }).toEqual({
        path,
        description: expect.stringContaining('`insufficient_balance`'),
      });
    }
  });

  it('keeps the PSP notification tolerant: PSPs add fields', () => {
    const body = doc.paths['/psp/webhook/pix']?.post?.requestBody?.content['application/json']?.schema;
    expect(body).toMatchObject({ type: 'object' });
    expect(body?.additionalProperties).not.toBe(false);
  });

  it('documents the delivery of every event under webhooks', () => {
    expect(Object.keys(doc.webhooks).sort()).toEqual([...EVENT_NAMES].sort());
    const body = doc.webhooks['order.paid']?.post?.requestBody?.content['application/json']?.schema;
    expect(body).toMatchObject({
      required: expect.arrayContaining(['event', 'occurred_at', 'delivery_attempt', 'data']),
    });
  });
});

describe('toExpressPath', () => {
  it('turns {param} into :param', () => {
    expect(toExpressPath('/config/webhooks/{id}/deliveries/{delivery_id}/resend/')).toBe(
      '/config/webhooks/:id/deliveries/:delivery_id/resend/',
    );
  });
});
