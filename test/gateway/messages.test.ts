import net from 'node:net';
import { randomUUID } from 'node:crypto';
import { z } from 'zod';
import {
  CreatedOrder,
  MESSAGES,
  message,
  safeParseRequest,
  zodIssuesToFieldErrors,
} from '@seller-api/contracts';
import { checkTarget, type TargetPolicy } from '@seller-api/service-kit';
import { documentedMessages, isDocumentedMessage, matchesTemplate } from '../../fuzz/verdict';
import { call, requestWithHost } from '../support/system';
import { useSystem } from '../support/use-system';
import { addDays, todayInSaoPaulo } from '@seller-api/due-date';
import { CNPJ, address, createOrder, createProduct, customer, standaloneOrder } from '../orders/fixtures';

// docs/errors.md, "Messages", is the reference list of a validation error's messages. Each one is
// produced here by a real request (through the gateway, for every rule a route has), and every message
// those answers carry is in the list.
const t = useSystem({ seller: true });
let key: string;
let live: string;
let physical: string;
let priceless: string;
let huge: string;
let standalone: string;

beforeAll(async () => {
  ({ key, liveKey: live } = t.seller);
  physical = await createProduct(t.url, key, { price: 5000 });
  priceless = await createProduct(t.url, key, {
    type: 'DIGITAL',
    price: 100,
    commission_unit_amount: 0,
  });
  huge = await createProduct(t.url, key, {
    type: 'DIGITAL',
    price: 999_999_999_999,
    commission_unit_amount: 0,
  });
  standalone = CreatedOrder.parse((await createOrder(t.url, key, standaloneOrder())).body.data).uuid;
});

type Answer = { status: number; body: Record<string, unknown> };

const order = (body: Record<string, unknown>, as = key) => createOrder(t.url, as, body);
const orderWith = (payment: Record<string, unknown>, more: Record<string, unknown> = {}) =>
  order({ customer: customer({ address: address() }), payment, ...more });
const get = (path: string, as = key) => call(`${t.url}${path}`, { key: as });
const send = (method: string, path: string, body: unknown, as = key) =>
  call(`${t.url}${path}`, { method, key: as, body });
const withdraw = (body: Record<string, unknown>) => send('POST', '/finance/withdrawals/', body);
const summary = (query: string) => get(`/sellers/orders/summary/?${query}`);
const days = (n: number) => new Date(Date.now() + n * 86_400_000).toISOString();
// A due date far enough ahead for discount tiers before it, today or later whenever the test runs.
const FUTURE = addDays(todayInSaoPaulo(), 40);
const dueDate = (payment: Record<string, unknown>) =>
  orderWith({
    gross_amount: 5000,
    debtor_name: 'Empresa Compradora Ltda',
    debtor_document: CNPJ,
    due_date: FUTURE,
    ...payment,
  });

/** What node:http answers to bytes that are not HTTP: the server's own 400, read off the socket. */
function rawExchange(bytes: string): Promise<Answer> {
  const { hostname, port } = new URL(t.url);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname, () => socket.write(bytes));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk: Buffer) => chunks.push(chunk));
    socket.on('error', reject);
    socket.on('close', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0);
      resolve({
        status,
        body: JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>,
      });
    });
  });
}

/** One documented message, the field it lands on and a request that breaks its rule. */
type Row = [message: string, field: string, request: () => Promise<Answer>];

const ROWS: Row[] = [
  [MESSAGES.required, 'customer', () => order({ payment: { gross_amount: 100 } })],
  [MESSAGES.unknownField, 'coupon', () => order({ ...standaloneOrder(), coupon: 'X' })],
  [MESSAGES.unknownQueryParameter, 'statuss', () => get('/sellers/orders/?statuss=PAID')],
  [
    MESSAGES.getBody,
    'non_field_errors',
    () =>
      requestWithHost(`${t.url}/sellers/orders/`, new URL(t.url).host, {
        body: '{"status":"PAID"}',
        headers: {
          authorization: `Bearer ${key}`,
          'content-type': 'application/json',
          'content-length': '17',
        },
      }),
  ],
  [
    MESSAGES.amount,
    'payment.gross_amount',
    () => order({ customer: customer(), payment: { gross_amount: '115.00' } }),
  ],
  [MESSAGES.amount, 'payment.shipping_amount', () => orderWith({ gross_amount: 100, shipping_amount: 1.5 })],
  [
    MESSAGES.amount,
    'price',
    () => send('POST', '/sellers/products/', { name: 'Camiseta', price: '50,00', type: 'DIGITAL' }),
  ],
  [MESSAGES.string, 'customer.name', () => order({ ...standaloneOrder(), customer: customer({ name: 5 }) })],
  [MESSAGES.number, 'limit', () => get('/sellers/orders/?limit=abc')],
  [
    MESSAGES.integer,
    'items.0.quantity',
    () => orderWith({}, { items: [{ product_uuid: physical, quantity: 1.5 }] }),
  ],
  [MESSAGES.object, 'customer', () => order({ customer: 'Ana', payment: { gross_amount: 100 } })],
  [MESSAGES.array, 'items', () => orderWith({}, { items: 'shirt' })],
  [
    MESSAGES.notEmpty,
    'customer.name',
    () => order({ ...standaloneOrder(), customer: customer({ name: '  ' }) }),
  ],
  [
    'Must be at most 255 characters.',
    'customer.name',
    () => order({ ...standaloneOrder(), customer: customer({ name: 'x'.repeat(256) }) }),
  ],
  ['Must be at least 1.', 'limit', () => get('/sellers/orders/?limit=0')],
  ['Must be at most 100.', 'limit', () => get('/sellers/orders/?limit=101')],
  [
    'Must have at most 100 items.',
    'items',
    () =>
      orderWith({}, { items: Array.from({ length: 101 }, () => ({ product_uuid: physical, quantity: 1 })) }),
  ],
  [
    'Must be one of: PENDING, PAID, EXPIRED, CANCELLED, REFUNDED, CHARGEBACK, MED.',
    'status',
    () => get('/sellers/orders/?status=LOST'),
  ],
  [MESSAGES.datetime, 'created_gte', () => get('/events/?created_gte=yesterday')],
  [
    MESSAGES.date,
    'estimated_delivery_date',
    () => send('PATCH', `/sellers/orders/${standalone}/tracking/`, { estimated_delivery_date: '28/11/2026' }),
  ],
  [
    MESSAGES.uuid,
    'items.0.product_uuid',
    () => orderWith({}, { items: [{ product_uuid: 'shirt', quantity: 1 }] }),
  ],
  [
    MESSAGES.taxIdLength,
    'customer.tax_id',
    () => order({ ...standaloneOrder(), customer: customer({ tax_id: '123' }) }),
  ],
  [
    'Invalid CPF: a single repeated digit is never issued.',
    'customer.tax_id',
    () => order({ ...standaloneOrder(), customer: customer({ tax_id: '111.111.111-11' }) }),
  ],
  [
    'Invalid CPF: check digits do not match.',
    'customer.tax_id',
    () => order({ ...standaloneOrder(), customer: customer({ tax_id: '529.982.247-26' }) }),
  ],
  [
    'Does not match tax_id, which is a CPF.',
    'customer.tax_id_type',
    () => order({ ...standaloneOrder(), customer: customer({ tax_id_type: 'CNPJ' }) }),
  ],
  [MESSAGES.grossAmountRequired, 'payment.gross_amount', () => order({ customer: customer(), payment: {} })],
  [
    'Must be at least 100 cents.',
    'amount',
    () => withdraw({ amount: 1, pix_key: 'a@b.co', pix_key_type: 'email' }),
  ],
  [
    MESSAGES.email,
    'customer.email',
    () => order({ ...standaloneOrder(), customer: customer({ email: 'nope' }) }),
  ],
  [
    MESSAGES.httpUrl,
    'postback_url',
    () => order({ ...standaloneOrder(), postback_url: 'ftp://example.com/x' }),
  ],
  [MESSAGES.dateRange, 'created_from', () => get('/sellers/orders/?created_from=0000-06-01')],
  [MESSAGES.dateOrDatetime, 'created_from', () => get('/sellers/orders/?created_from=yesterday')],
  [
    MESSAGES.postalCode,
    'customer.address.postal_code',
    () => order({ ...standaloneOrder(), customer: customer({ address: address({ postal_code: '1' }) }) }),
  ],
  [
    MESSAGES.state,
    'customer.address.state',
    () => order({ ...standaloneOrder(), customer: customer({ address: address({ state: 'sp' }) }) }),
  ],
  [
    MESSAGES.country,
    'customer.address.country',
    () => order({ ...standaloneOrder(), customer: customer({ address: address({ country: 'Brasil' }) }) }),
  ],
  [MESSAGES.taxIdSearch, 'customer_tax_id', () => get('/sellers/orders/?customer_tax_id=123')],
  [MESSAGES.affiliateCode, 'code', () => send('POST', '/sellers/affiliates/', { code: 'a b', name: 'Ana' })],
  [MESSAGES.eventId, 'id', () => get('/events/nope/')],
  [MESSAGES.eventNamesEmpty, 'type', () => get('/events/?type=,')],
  ['Unknown event name: order.nope.', 'type', () => get('/events/?type=order.nope')],
  [
    MESSAGES.notBeforeCreatedGte,
    'created_lte',
    () => get('/events/?created_gte=2026-11-02T00:00:00Z&created_lte=2026-11-01T00:00:00Z'),
  ],
  [
    MESSAGES.notBeforeSince,
    'until',
    () =>
      send('POST', `/config/webhooks/${randomUUID()}/deliveries/resend/`, {
        status: 'dead',
        since: '2026-11-02T00:00:00Z',
        until: '2026-11-01T00:00:00Z',
      }),
  ],
  [MESSAGES.toAfterFrom, 'to', () => summary('from=2026-01-02T00:00:00Z&to=2026-01-01T00:00:00Z')],
  [
    'Must be at most 92 days after from with granularity day.',
    'to',
    () => summary('from=2026-01-01T00:00:00Z&to=2026-06-01T00:00:00Z'),
  ],
  [
    MESSAGES.timeZone,
    'time_zone',
    () => summary('from=2026-01-01T00:00:00Z&to=2026-01-02T00:00:00Z&time_zone=a&time_zone=b'),
  ],
  [
    MESSAGES.unknownTimeZone,
    'time_zone',
    () => summary('from=2026-01-01T00:00:00Z&to=2026-01-02T00:00:00Z&time_zone=Mars/Base'),
  ],
  [
    'Must be one or more of PENDING, APPROVED, DENIED, PROCESSING, PAID, FAILED, CANCELED, separated by commas.',
    'status',
    () => get('/finance/withdrawals/?status=LOST'),
  ],
  [MESSAGES.pixKeyCpf, 'pix_key', () => withdraw({ amount: 100, pix_key: '123', pix_key_type: 'cpf' })],
  [MESSAGES.pixKeyPhone, 'pix_key', () => withdraw({ amount: 100, pix_key: '123', pix_key_type: 'phone' })],
  [
    MESSAGES.trackingFieldRequired,
    'non_field_errors',
    () => send('PATCH', `/sellers/orders/${standalone}/tracking/`, {}),
  ],
  [
    MESSAGES.webhookFieldRequired,
    'non_field_errors',
    () => send('PATCH', `/config/webhooks/${randomUUID()}/`, {}),
  ],
  [
    MESSAGES.nul,
    'customer.name',
    () =>
      call(`${t.url}/sellers/orders/`, {
        method: 'POST',
        key,
        rawBody: JSON.stringify({ ...standaloneOrder(), customer: customer({ name: 'A\u0000' }) }),
        headers: { 'content-type': 'application/json' },
      }),
  ],
  [MESSAGES.cursor, 'cursor', () => get('/sellers/orders/?cursor=not-a-cursor')],
  [MESSAGES.percentEncoding, 'path', () => get('/sellers/orders/%ZZ/')],
  [
    MESSAGES.idempotencyKey,
    'Idempotency-Key',
    () => createOrder(t.url, key, standaloneOrder(), { 'idempotency-key': 'k'.repeat(256) }),
  ],
  [
    MESSAGES.malformedRequest,
    'request',
    () => rawExchange('GET /api/v1/sellers/orders/ HTTP/1.1\r\nbroken header\r\n\r\n'),
  ],
  [
    MESSAGES.headersTooLarge,
    'request',
    () => rawExchange(`GET /api/v1/sellers/orders/ HTTP/1.1\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`),
  ],
  [
    MESSAGES.unknownProduct,
    'items.0.product_uuid',
    () => orderWith({}, { items: [{ product_uuid: randomUUID(), quantity: 1 }] }),
  ],
  [
    MESSAGES.addressForPhysical,
    'customer.address',
    () => order({ customer: customer(), items: [{ product_uuid: physical, quantity: 1 }], payment: {} }),
  ],
  [
    MESSAGES.unknownAffiliateCode,
    'affiliate_code',
    () => order({ ...standaloneOrder(), affiliate_code: 'nobody' }),
  ],
  [
    MESSAGES.expirationPast,
    'payment.expiration_date',
    () => orderWith({ gross_amount: 100, expiration_date: '2020-01-01' }),
  ],
  [
    MESSAGES.expirationTooFar,
    'payment.expiration_date',
    () => orderWith({ gross_amount: 100, expiration_date: days(31) }),
  ],
  [
    'Quantity times the unit price exceeds 999999999999 cents.',
    'items.0.quantity',
    () => orderWith({}, { items: [{ product_uuid: huge, quantity: 2 }] }),
  ],
  [
    MESSAGES.discountTooBig,
    'payment.discount_amount',
    () => orderWith({ discount_amount: 6000 }, { items: [{ product_uuid: physical, quantity: 1 }] }),
  ],
  [
    MESSAGES.computedAmountTooSmall,
    'payment.gross_amount',
    () => orderWith({ discount_amount: 100 }, { items: [{ product_uuid: priceless, quantity: 1 }] }),
  ],
  // Due-date charges (docs/pix.md, "Due-date charges").
  [
    message('notWithType', { type: 'fixed' }),
    'payment.fine.rate',
    () => dueDate({ fine: { type: 'fixed', amount: 100, rate: 200 } }),
  ],
  [
    MESSAGES.tierDateAscending,
    'payment.discount.tiers.1.until',
    () =>
      dueDate({
        discount: {
          type: 'fixed_until',
          tiers: [
            { until: addDays(FUTURE, -2), value: 300 },
            { until: addDays(FUTURE, -3), value: 200 },
          ],
        },
      }),
  ],
  [
    MESSAGES.tierValueDescending,
    'payment.discount.tiers.1.value',
    () =>
      dueDate({
        discount: {
          type: 'fixed_until',
          tiers: [
            { until: addDays(FUTURE, -3), value: 200 },
            { until: addDays(FUTURE, -2), value: 300 },
          ],
        },
      }),
  ],
  [
    MESSAGES.tierAfterDueDate,
    'payment.discount.tiers.0.until',
    () => dueDate({ discount: { type: 'fixed_until', tiers: [{ until: addDays(FUTURE, 1), value: 100 }] } }),
  ],
  [
    message('belowAmount', { amount: 5000 }),
    'payment.rebate.amount',
    () => dueDate({ rebate: { type: 'fixed', amount: 5000 } }),
  ],
  [MESSAGES.dueDatePast, 'payment.due_date', () => dueDate({ due_date: '2020-01-02' })],
  [message('dueDateTooFar', { years: 10 }), 'payment.due_date', () => dueDate({ due_date: '9999-12-20' })],
  [
    message('notWithField', { field: 'due_date' }),
    'payment.expiration_date',
    () => dueDate({ expiration_date: days(2) }),
  ],
  [
    message('requiredWithField', { field: 'due_date' }),
    'payment.debtor_document',
    () => dueDate({ debtor_document: undefined }),
  ],
  [
    message('onlyWithField', { field: 'due_date' }),
    'payment.days_after_due',
    () => orderWith({ gross_amount: 5000, days_after_due: 3 }),
  ],
  [
    message('calendarPlace', { problem: 'Unknown state: "XX"' }),
    'payment.calendar',
    () => dueDate({ calendar: { state: 'XX' } }),
  ],
  [
    MESSAGES.trackingNeedsItems,
    'non_field_errors',
    () => send('PATCH', `/sellers/orders/${standalone}/tracking/`, { tracking_code: 'BR1' }),
  ],
  [
    MESSAGES.liveHttps,
    'url',
    () => send('POST', '/config/webhooks/', { url: 'http://example.com/hook', event: 'order.paid' }, live),
  ],
  [
    MESSAGES.targetLive,
    'url',
    () => send('POST', '/config/webhooks/', { url: 'https://127.0.0.1/hook', event: 'order.paid' }, live),
  ],
  [
    // The tests' system opens private addresses to test webhooks (support/env.ts); link-local stays shut.
    message('targetTestOpened', { opened: 'loopback and private addresses' }),
    'url',
    () => send('POST', '/config/webhooks/', { url: 'http://169.254.169.254/hook', event: 'order.paid' }),
  ],
];

/** Target refusals of a system configured otherwise than the tests' one: the rule `checkTarget` applies. */
const TARGET_POLICIES: [message: string, policy: TargetPolicy][] = [
  [MESSAGES.targetDeployed, { environment: 'test', allowPrivate: false }],
  [
    message('targetTestOpened', { opened: 'this machine (127.0.0.1, localhost, [::1])' }),
    { environment: 'test', allowPrivate: false, allowLoopback: true },
  ],
];

/**
 * Rules the error map words that no public route has yet (a boolean, a number bound that excludes its
 * limit...): produced through the same parse every route makes (`safeParseRequest`).
 */
const SCHEMA_ONLY: [message: string, schema: z.ZodType, value: unknown][] = [
  ['Must be at least 3 characters.', z.string().min(3), 'ab'],
  ['Must be greater than 0.', z.number().gt(0), 0],
  ['Must be less than 1.', z.number().lt(1), 1],
  ['Must have at least 2 items.', z.array(z.string()).min(2), ['a']],
  [MESSAGES.boolean, z.boolean(), 'yes'],
  [MESSAGES.wrongType, z.null(), 'x'],
  [MESSAGES.format, z.string().regex(/^a+$/), 'b'],
  [MESSAGES.noForm, z.union([z.string(), z.number()]), true],
  [MESSAGES.invalid, z.string().refine(() => false), 'x'],
];

describe('every documented message, from a request that breaks its rule', () => {
  it.each(ROWS)('%s (on %s)', async (message, field, request) => {
    const res = await request();
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'validation_error' });
    const data = res.body.data as Record<string, string[]>;
    expect({ field, messages: data[field] }).toEqual({ field, messages: expect.arrayContaining([message]) });
    // Whatever else the answer says is in the list too.
    const documented = documentedMessages();
    for (const other of Object.values(data).flat())
      expect({ other, documented: isDocumentedMessage(other, documented) }).toEqual({
        other,
        documented: true,
      });
  });

  it.each(SCHEMA_ONLY)('%s (a rule no route has yet)', (message, schema, value) => {
    const result = safeParseRequest(schema, value);
    expect(result.success ? {} : zodIssuesToFieldErrors(result.error)).toEqual({
      non_field_errors: [message],
    });
  });

  it.each(TARGET_POLICIES)('%s (a target rule of another configuration)', async (text, policy) => {
    expect(await checkTarget('http://10.0.0.1/hook', policy)).toMatchObject({ ok: false, reason: text });
  });

  it('leaves no documented message without its request, and documents every message of the list', () => {
    const produced = [
      ...ROWS.map(([text]) => text),
      ...SCHEMA_ONLY.map(([text]) => text),
      ...TARGET_POLICIES.map(([text]) => text),
    ];
    const documented = documentedMessages();
    const unproduced = documented.filter(
      (template) => !produced.some((text) => matchesTemplate(text, template)),
    );
    expect(unproduced).toEqual([]);
    const undocumented = Object.values(MESSAGES).filter((template) => !documented.includes(template));
    expect(undocumented).toEqual([]);
  });
});
