// One fuzzed HTTP request per draw, for any route of the contracts' registry (docs/fuzz.md): a new
// route in `routes` (packages/contracts/src/route-registry.ts) is fuzzed without a change here.
import fc from 'fast-check';
import {
  CreateOrderRequest,
  CreateWithdrawalRequest,
  EVENT_NAMES,
  EventTypeFilter,
  ListQuery,
  OrderItemInput,
  OrderListQuery,
  OrderPaymentInput,
  OrderSummaryQuery,
  PixKeyType,
  WithdrawalStatus,
  WithdrawalStatusFilter,
  customerTaxIdSearch,
  dateOrDatetimeInput,
  routes as registry,
  strictInput,
  taxIdInput,
  timeZoneName,
  type RouteDoc,
} from '@seller-api/contracts';
import type { z } from 'zod';
import { arbitraryOf, type Overrides } from './arbitraries';
import { mutationOf, rawBody } from './mutations';

/** The keys and ids the fuzzer aims at, made by the setup (setup.ts) before the run. */
export interface FuzzContext {
  keys: { seller: string; live: string | null; operator: string | null };
  /** Secret of the PSP's notifications (`Authorization: Bearer <secret>`), when known. */
  pspSecret: string | null;
  ids: {
    orders: string[];
    products: string[];
    webhooks: string[];
    deliveries: string[];
    withdrawals: string[];
    /** Affiliate codes, for `affiliate_code`. */
    affiliates: string[];
    /** Event ids (`evt_...`) of the Events API. */
    events: string[];
  };
}

export interface FuzzRequest {
  /** `METHOD /path/{template}/`, as the registry has it. */
  route: string;
  method: string;
  /** Path and query, relative to the API base (`/sellers/orders/?limit=5`). */
  path: string;
  headers: Record<string, string>;
  body?: string | Buffer;
  /** What was generated: `valid`, `replace items.0.quantity`, `raw`, `no key`... */
  notes: string[];
}

// ---------------------------------------------------------------------------------------------------
// Values that need more than the schema: valid tax ids, PIX keys and dates, and the ids that exist.

const digits = (n: number) => fc.array(fc.integer({ min: 0, max: 9 }), { minLength: n, maxLength: n });

function checkDigit(numbers: number[], weights: number[]): number {
  const sum = numbers.reduce((total, n, i) => total + n * (weights[i] as number), 0);
  const rest = sum % 11;
  return rest < 2 ? 0 : 11 - rest;
}

/** A CPF with valid check digits, bare or punctuated. */
export const cpf = digits(9)
  .filter((d) => new Set(d).size > 1)
  .map((d) => {
    const first = checkDigit(d, [10, 9, 8, 7, 6, 5, 4, 3, 2]);
    const second = checkDigit([...d, first], [11, 10, 9, 8, 7, 6, 5, 4, 3, 2]);
    return [...d, first, second].join('');
  });

/** A numeric CNPJ with valid check digits. */
export const cnpj = digits(12)
  .filter((d) => new Set(d).size > 1)
  .map((d) => {
    const first = checkDigit(d, [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]);
    const second = checkDigit([...d, first], [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]);
    return [...d, first, second].join('');
  });

const punctuated = (clean: string) =>
  clean.length === 11
    ? `${clean.slice(0, 3)}.${clean.slice(3, 6)}.${clean.slice(6, 9)}-${clean.slice(9)}`
    : `${clean.slice(0, 2)}.${clean.slice(2, 5)}.${clean.slice(5, 8)}/${clean.slice(8, 12)}-${clean.slice(12)}`;

const taxId = fc
  .tuple(fc.oneof(cpf, cnpj), fc.boolean())
  .map(([clean, punctuate]) => (punctuate ? punctuated(clean) : clean));

const DAY_MS = 86_400_000;
/** Mostly within the 30 days an expiration may be; sometimes past or beyond. */
const nearDate = fc
  .tuple(
    fc.oneof(
      { weight: 4, arbitrary: fc.integer({ min: 2 * 3_600_000, max: 29 * DAY_MS }) },
      { weight: 1, arbitrary: fc.integer({ min: -400 * DAY_MS, max: 400 * DAY_MS }) },
    ),
    fc.boolean(),
  )
  .map(([offset, dateOnly]) => {
    const iso = new Date(Date.now() + offset).toISOString();
    return dateOnly ? iso.slice(0, 10) : iso;
  });

/** Time zones with whole, half and quarter-hour offsets and daylight saving; sometimes any string. */
const timeZone = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.constantFrom(
      'UTC',
      'America/Sao_Paulo',
      'America/New_York',
      'Asia/Kolkata',
      'Asia/Kathmandu',
      'Australia/Lord_Howe',
      'Pacific/Chatham',
      'Etc/GMT+12',
    ),
  },
  { weight: 1, arbitrary: arbitraryOf(timeZoneName) },
);

/** A summary's range: mostly within its limits (up to 7 or 92 days), sometimes over or reversed. */
const summaryQuery = fc
  .tuple(
    fc.integer({ min: -400 * DAY_MS, max: 40 * DAY_MS }),
    fc.oneof(
      { weight: 4, arbitrary: fc.integer({ min: 1, max: 7 * DAY_MS }) },
      { weight: 2, arbitrary: fc.integer({ min: 1, max: 92 * DAY_MS }) },
      { weight: 1, arbitrary: fc.integer({ min: -DAY_MS, max: 200 * DAY_MS }) },
    ),
    fc.option(fc.constantFrom('hour', 'day'), { nil: undefined }),
    fc.option(timeZone, { nil: undefined }),
  )
  .map(([offset, span, granularity, time_zone]) => {
    const from = Date.now() + offset;
    return {
      from: new Date(from).toISOString(),
      to: new Date(from + span).toISOString(),
      ...(granularity ? { granularity } : {}),
      ...(time_zone !== undefined ? { time_zone } : {}),
    };
  });

/** A withdrawal list's `status`: one or several statuses, comma-separated, sometimes anything. */
const withdrawalStatuses = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .subarray([...WithdrawalStatus.options], { minLength: 1 })
      .map((statuses) => statuses.join(',')),
  },
  { weight: 1, arbitrary: arbitraryOf(WithdrawalStatusFilter) },
);

const pixKeyOf: Record<PixKeyType, fc.Arbitrary<string>> = {
  email: fc.stringMatching(/^[a-z]{1,10}@example\.com$/),
  cpf,
  phone: fc.stringMatching(/^\+55\d{11}$/),
  random: fc.uuid(),
};

/**
 * A list's `cursor`: opaque to clients, but a client can decode and forge one, so some are well-formed
 * (`<datetime>|<id>` in base64url) with a time or an id PostgreSQL may not hold.
 */
const cursor = fc.oneof(
  fc.string({ minLength: 1, maxLength: 40 }),
  fc
    .tuple(
      fc.constantFrom(
        new Date().toISOString(),
        '1',
        '0000-01-01T00:00:00.000Z',
        '-271821-04-20T00:00:00.000Z',
        '+275760-09-13T00:00:00.000Z',
        'NaN',
      ),
      fc.oneof(fc.uuid(), fc.constantFrom('-'.repeat(36), 'f'.repeat(36), '0'.repeat(36))),
    )
    .map(([at, id]) => Buffer.from(`${at}|${id}`).toString('base64url')),
);

/** The schemas this file generates by hand, for a context's known ids. */
function overridesFor(context: FuzzContext): Overrides {
  // Mostly ids that exist, so that requests get past the lookup to the code behind it.
  const known = (ids: string[]) =>
    ids.length
      ? fc.oneof({ weight: 9, arbitrary: fc.constantFrom(...ids) }, { weight: 1, arbitrary: fc.uuid() })
      : fc.uuid();
  // Amounts that fit the order they are in (a discount within its subtotal), and sometimes any amount.
  const smallOr = (schema: z.ZodType, max: number) =>
    fc.oneof(
      { weight: 4, arbitrary: fc.integer({ min: 0, max }) },
      { weight: 1, arbitrary: arbitraryOf(schema) },
    );
  return new Map<z.ZodType, fc.Arbitrary<unknown>>([
    [taxIdInput, taxId],
    [customerTaxIdSearch, taxId],
    // The setup's orders are of this customer: a search finds them in any case.
    [
      OrderListQuery.shape.customer_email,
      fc.oneof(
        fc.constantFrom('fuzz.buyer@example.com', 'FUZZ.Buyer@Example.COM'),
        arbitraryOf(OrderListQuery.shape.customer_email),
      ),
    ],
    [WithdrawalStatusFilter, withdrawalStatuses],
    [timeZoneName, timeZone],
    [OrderSummaryQuery, summaryQuery],
    [ListQuery.shape.cursor, cursor],
    [
      CreateOrderRequest.shape.affiliate_code,
      fc.oneof(
        {
          weight: 3,
          arbitrary: context.ids.affiliates.length
            ? fc.constantFrom(...context.ids.affiliates)
            : fc.constant(undefined),
        },
        { weight: 1, arbitrary: arbitraryOf(CreateOrderRequest.shape.affiliate_code) },
      ),
    ],
    // A postback URL is checked against DNS, which a random host name fails: mostly none.
    [
      CreateOrderRequest.shape.postback_url,
      fc.oneof(
        { weight: 4, arbitrary: fc.constant(null) },
        { weight: 1, arbitrary: arbitraryOf(CreateOrderRequest.shape.postback_url) },
      ),
    ],
    [OrderPaymentInput.shape.discount_amount, smallOr(OrderPaymentInput.shape.discount_amount, 500)],
    [OrderPaymentInput.shape.shipping_amount, smallOr(OrderPaymentInput.shape.shipping_amount, 3_000)],
    [dateOrDatetimeInput, nearDate],
    // Event names as a client writes them: one, several comma-separated, or repeated.
    [
      EventTypeFilter,
      fc.oneof(
        fc.constantFrom(...EVENT_NAMES),
        fc
          .uniqueArray(fc.constantFrom(...EVENT_NAMES), { minLength: 1, maxLength: 4 })
          .map((n) => n.join(',')),
        fc.uniqueArray(fc.constantFrom(...EVENT_NAMES), { minLength: 1, maxLength: 4 }),
      ),
    ],
    // The copy the strict order body holds (contracts strict.ts): the one a request is drawn from.
    [
      strictInput(OrderItemInput),
      fc.record({
        product_uuid: known(context.ids.products),
        quantity: fc.oneof(
          { weight: 5, arbitrary: fc.integer({ min: 1, max: 5 }) },
          fc.integer({ min: 1, max: 2 ** 31 - 1 }),
        ),
      }),
    ],
    [
      CreateWithdrawalRequest,
      fc
        .tuple(
          fc.oneof(
            { weight: 4, arbitrary: fc.integer({ min: 100, max: 600 }) },
            fc.integer({ min: 1, max: 2_000_000 }),
          ),
          fc.constantFrom(...PixKeyType.options),
        )
        .chain(([amount, type]) =>
          pixKeyOf[type].map((pix_key) => ({ amount, pix_key, pix_key_type: type })),
        ),
    ],
  ]);
}

// ---------------------------------------------------------------------------------------------------
// Path, query, headers and body of a route.

/** Which known ids a path parameter takes, from the route's path. */
function idsFor(route: RouteDoc, param: string, context: FuzzContext): string[] {
  if (param === 'delivery_id') return context.ids.deliveries;
  if (route.path.startsWith('/events/')) return context.ids.events;
  if (route.path.startsWith('/config/webhooks/')) return context.ids.webhooks;
  if (route.path.startsWith('/sellers/products/')) return context.ids.products;
  if (route.path.includes('/withdrawals/')) return context.ids.withdrawals;
  return context.ids.orders;
}

const badSegment = fc.oneof(
  fc.constantFrom(
    'not-a-uuid',
    '00000000-0000-0000-0000-000000000000',
    '%ZZ',
    '%00',
    '..',
    'ÿ',
    '%F0%9F%98%80',
    ' ',
  ),
  fc.uuid().map((id) => id.toUpperCase()),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }).map(encodeURIComponent),
  fc.constant('a'.repeat(3000)),
);

function pathArbitrary(
  route: RouteDoc,
  context: FuzzContext,
): fc.Arbitrary<{ path: string; notes: string[] }> {
  const names = [...route.path.matchAll(/\{([A-Za-z0-9_]+)\}/g)].map((m) => m[1] as string);
  if (names.length === 0) return fc.constant({ path: route.path, notes: [] });
  const segment = (name: string) => {
    const ids = idsFor(route, name, context);
    return fc.oneof(
      {
        weight: 6,
        arbitrary: ids.length
          ? fc.constantFrom(...ids).map((v) => ({ v, bad: false }))
          : fc.uuid().map((v) => ({ v, bad: false })),
      },
      { weight: 2, arbitrary: fc.uuid().map((v) => ({ v, bad: false })) },
      { weight: 2, arbitrary: badSegment.map((v) => ({ v, bad: true })) },
    );
  };
  return fc.tuple(...names.map(segment)).map((values) => {
    let path = route.path;
    const notes: string[] = [];
    names.forEach((name, i) => {
      const { v, bad } = values[i] as { v: string; bad: boolean };
      path = path.replace(`{${name}}`, v);
      if (bad) notes.push(`bad {${name}}`);
    });
    return { path, notes };
  });
}

const queryValue = (value: unknown): string =>
  typeof value === 'string'
    ? value
    : value === undefined
      ? ''
      : typeof value === 'object'
        ? JSON.stringify(value)
        : String(value);

function queryArbitrary(
  route: RouteDoc,
  overrides: Overrides,
): fc.Arbitrary<{ query: string; notes: string[] }> {
  const valid = route.query ? arbitraryOf(route.query, overrides) : fc.constant({});
  const pairs = valid.map((value) =>
    Object.entries((value ?? {}) as Record<string, unknown>).map(([k, v]): [string, string] => [
      k,
      queryValue(v),
    ]),
  );
  const keys = route.query ? Object.keys(route.query.shape) : ['limit'];
  const mutated = fc
    .tuple(
      pairs,
      fc.constantFrom(...keys, 'unknown', '__proto__', 'limit[]', 'a[b]'),
      fc.oneof(
        fc.constantFrom(
          '',
          '-1',
          '0',
          '101',
          '1e2',
          '2147483648',
          '99999999999999999999',
          'NaN',
          'Infinity',
          '0x10',
          ' 5',
          'null',
          '%',
          '%ZZ',
          '%00',
          'ç',
          '😀',
        ),
        fc.string({ unit: 'grapheme', maxLength: 30 }),
        fc.constant('x'.repeat(5000)),
      ),
      fc.constantFrom('set', 'repeat', 'raw'),
    )
    .map(([list, key, value, how]) => {
      if (how === 'raw')
        return {
          query: [...list.map(([k, v]) => `${k}=${encodeURIComponent(v)}`), `${key}=${value}`].join('&'),
          notes: [`query raw ${key}`],
        };
      const next = how === 'set' ? list.filter(([k]) => k !== key) : list;
      next.push([key, value]);
      if (how === 'repeat') next.push([key, value]);
      return { query: new URLSearchParams(next).toString(), notes: [`query ${how} ${key}`] };
    });
  return fc.oneof(
    {
      weight: 6,
      arbitrary: pairs.map((list) => ({
        query: new URLSearchParams(list).toString(),
        notes: [] as string[],
      })),
    },
    { weight: 4, arbitrary: mutated },
  );
}

const CONTENT_TYPES = [
  'application/json; charset=utf-8',
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/json; charset=latin1',
  'application/vnd.api+json',
  'application/xml',
  '',
  'application/json; charset=utf-16',
  'APPLICATION/JSON',
];

function bodyArbitrary(
  route: RouteDoc,
  overrides: Overrides,
): fc.Arbitrary<{ body?: string | Buffer; contentType?: string; notes: string[] }> {
  const json = (value: unknown) => (value === undefined ? '' : JSON.stringify(value));
  const valid = route.body ? arbitraryOf(route.body, overrides) : fc.constant({});
  const choices = [
    { weight: route.body ? 4 : 1, arbitrary: valid.map((v) => ({ body: json(v), notes: ['valid'] })) },
    {
      weight: route.body ? 4 : 1,
      arbitrary: mutationOf(valid).map((m) => ({ body: json(m.value), notes: [m.note] })),
    },
    { weight: 1, arbitrary: rawBody.map((r) => ({ body: r.body, notes: [r.note] })) },
    {
      weight: route.body ? 1 : 6,
      arbitrary: fc.constant({ body: undefined as string | undefined, notes: ['no body'] as string[] }),
    },
  ];
  return fc
    .tuple(
      fc.oneof(...choices),
      fc.oneof(
        { weight: 8, arbitrary: fc.constant('application/json') },
        { weight: 2, arbitrary: fc.constantFrom(...CONTENT_TYPES) },
      ),
    )
    .map(([{ body, notes }, contentType]) =>
      body === undefined
        ? { notes }
        : {
            body,
            contentType,
            notes:
              contentType === 'application/json'
                ? notes
                : [...notes, `content-type ${contentType || '(empty)'}`],
          },
    );
}

const IDEMPOTENCY_KEYS = fc.oneof(
  { weight: 6, arbitrary: fc.constant(undefined) },
  { weight: 2, arbitrary: fc.uuid() },
  { weight: 1, arbitrary: fc.constantFrom('fuzz-reused-key', 'fuzz-reused-key-2') },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '',
      ' ',
      'k'.repeat(255),
      'k'.repeat(256),
      'k'.repeat(5000),
      'ç-latin1',
      'a b',
      'a\tb',
      '"quoted"',
      '%00',
    ),
  },
);

function authArbitrary(
  route: RouteDoc,
  context: FuzzContext,
): fc.Arbitrary<{ authorization?: string; note?: string }> {
  const { seller, live, operator } = context.keys;
  const withKey = (key: string | null, note?: string) =>
    key ? [fc.constant({ authorization: `Bearer ${key}`, note })] : [];
  const bad = fc
    .constantFrom(
      '',
      'Bearer',
      'Bearer ',
      `bearer ${seller}`,
      `Bearer ${seller} extra`,
      `Basic ${Buffer.from('user:pass').toString('base64')}`,
      `Bearer mk_test_${'A'.repeat(32)}`,
      `Bearer mk_live_${'0'.repeat(40)}`,
      `Bearer ${seller.slice(0, -1)}`,
      'Bearer mk_test_short',
    )
    .map((authorization) => ({ authorization, note: 'bad key' }));
  const ops = route.path.startsWith('/ops/');
  const primary = ops && operator ? operator : seller;
  if (!route.auth) {
    const psp = context.pspSecret;
    return fc.oneof(
      { weight: psp ? 6 : 0, arbitrary: fc.constant({ authorization: psp ? `Bearer ${psp}` : undefined }) },
      { weight: 2, arbitrary: fc.constant({}) },
      { weight: 2, arbitrary: bad },
    );
  }
  return fc.oneof(
    { weight: 14, arbitrary: fc.constant({ authorization: `Bearer ${primary}` }) },
    {
      weight: 2,
      arbitrary: fc.oneof(
        ...withKey(ops ? seller : live, ops ? 'seller key' : 'live key'),
        ...withKey(operator, 'operator key'),
        fc.constant({ authorization: `Bearer ${seller}` }),
      ),
    },
    { weight: 1, arbitrary: fc.constant({ note: 'no key' }) },
    { weight: 1, arbitrary: bad },
  );
}

const EXTRA_HEADERS = fc.oneof(
  { weight: 12, arbitrary: fc.constant<[string, string] | null>(null) },
  {
    weight: 3,
    arbitrary: fc.constantFrom<[string, string]>(
      ['content-encoding', 'gzip'],
      ['content-encoding', 'br'],
      ['content-encoding', 'identity'],
      ['x-request-id', 'r'.repeat(3000)],
      ['x-request-id', 'ç\u00ff'],
      ['x-forwarded-for', 'not-an-ip, 999.1.1.1'],
      ['x-idempotency-route', '/sellers/orders/'],
      ['x-identity', 'forged'],
      ['accept', 'text/html'],
      ['expect', '100-continue'],
    ),
  },
);

/** Requests of one route: path, query, headers and body drawn together. */
function routeArbitrary(
  route: RouteDoc,
  context: FuzzContext,
  overrides: Overrides,
): fc.Arbitrary<FuzzRequest> {
  const method = route.method.toUpperCase();
  const post = method === 'POST';
  return fc
    .record({
      path: pathArbitrary(route, context),
      query: route.query
        ? queryArbitrary(route, overrides)
        : fc.oneof(
            { weight: 9, arbitrary: fc.constant({ query: '', notes: [] as string[] }) },
            { weight: 1, arbitrary: fc.constant({ query: 'unexpected=1', notes: ['query unexpected'] }) },
          ),
      body:
        method === 'GET' || method === 'DELETE'
          ? fc.oneof(
              { weight: 19, arbitrary: fc.constant({ notes: [] as string[] }) },
              { weight: 1, arbitrary: bodyArbitrary(route, overrides) },
            )
          : bodyArbitrary(route, overrides),
      auth: authArbitrary(route, context),
      idempotencyKey: post ? IDEMPOTENCY_KEYS : fc.constant(undefined),
      extra: EXTRA_HEADERS,
    })
    .map(({ path, query, body, auth, idempotencyKey, extra }): FuzzRequest => {
      const headers: Record<string, string> = {};
      const notes = [...path.notes, ...query.notes, ...body.notes];
      if (auth.authorization !== undefined) headers.authorization = auth.authorization;
      if (auth.note) notes.push(auth.note);
      if ('contentType' in body && body.contentType) headers['content-type'] = body.contentType;
      if (idempotencyKey !== undefined) {
        headers['idempotency-key'] = idempotencyKey;
        notes.push(
          `idempotency-key ${idempotencyKey.length > 40 ? `${idempotencyKey.length} chars` : JSON.stringify(idempotencyKey)}`,
        );
      }
      if (extra) {
        headers[extra[0]] = extra[1];
        notes.push(`header ${extra[0]}`);
      }
      return {
        route: `${method} ${route.path}`,
        method,
        path: query.query ? `${path.path}?${query.query}` : path.path,
        headers,
        ...('body' in body && body.body !== undefined ? { body: body.body } : {}),
        notes,
      };
    });
}

/** Every route of the registry, each as likely as the others. */
export function requestArbitrary(
  context: FuzzContext,
  routes: readonly RouteDoc[] = registry,
): fc.Arbitrary<FuzzRequest> {
  const overrides = overridesFor(context);
  return fc.oneof(...routes.map((route) => routeArbitrary(route, context, overrides)));
}

/** Request `index` of the run `seed`: the same pair always draws the same request. */
export function requestAt(arbitrary: fc.Arbitrary<FuzzRequest>, seed: number, index: number): FuzzRequest {
  const [request] = fc.sample(arbitrary, { seed: (seed + Math.imul(index, 0x9e3779b1)) | 0, numRuns: 1 });
  if (!request) throw new Error('fast-check drew no request');
  return request;
}
