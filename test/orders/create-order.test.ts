import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { CreatedOrder, OrderEventData, type OrderDetail } from '@seller-api/contracts';
import { captureEvents } from '../support/events';
import { waitFor } from '../support/wait';
import { hostPort, TcpProxy } from '../support/tcp-proxy';
import { checkBrCode, decodeQrPng } from '../support/pix';
import { call } from '../support/system';
import { useSystem } from '../support/use-system';
import type { Sql } from '@seller-api/service-kit';
import {
  OrderWrites,
  createOrder as createOrderInDomain,
  type CreateOrderDeps,
} from '../../services/orders/src/db/order-writes';
import { ProductLookup } from '../../services/orders/src/db/products';
import { CNPJ, CPF, address, createOrder, createProduct, customer, standaloneOrder } from './fixtures';

let paymentsProxy: TcpProxy;
// Orders reaches payments through a proxy a test can cut.
const t = useSystem({
  wrapPayments: async (url) => {
    const { host, port } = hostPort(url, 80);
    paymentsProxy = new TcpProxy(host, port);
    return `http://127.0.0.1:${await paymentsProxy.start()}`;
  },
  seller: true,
});
afterAll(() => paymentsProxy?.stop());
let key: string;
beforeAll(() => {
  key = t.seller.key;
});

const detail = async (uuid: string, k = key) =>
  (await call(`${t.url}/sellers/orders/${uuid}/`, { key: k })).body.data as OrderDetail;

describe('create order: standalone charge', () => {
  it('answers 201 with exactly the documented body, a valid BR Code and a QR image of it', async () => {
    const res = await createOrder(
      t.url,
      key,
      standaloneOrder({ postback_url: 'https://example.com/hook?token=abc' }),
    );
    expect(res.status).toBe(201);
    expect(res.body.message).toEqual(expect.any(String));
    const data = CreatedOrder.strict().parse(res.body.data);
    expect(data).toMatchObject({
      status: 'PENDING',
      gross_amount: 15000,
      postback_url: 'https://example.com/hook?token=abc',
      items: [],
      customer: { name: 'Maria Silva' },
    });
    expect(data.pix.transaction_uuid).toMatch(/^[0-9a-f-]{36}$/);
    expect(data.pix.qr_code_id).toMatch(/^[A-Za-z0-9]{1,25}$/);
    const { ours, theirs } = checkBrCode(data.pix.copy_and_paste);
    expect(ours.valid).toBe(true);
    expect(ours.fields['54']).toBe('150.00');
    expect(theirs.type).toBe('STATIC');
    expect('transactionAmount' in theirs && theirs.transactionAmount).toBe(150);
    expect(data.pix.qr_code_image_base64).not.toMatch(/^data:/);
    expect(decodeQrPng(data.pix.qr_code_image_base64 as string)).toBe(data.pix.copy_and_paste);
  });

  it('requires gross_amount when there are no items', async () => {
    const res = await createOrder(t.url, key, { customer: customer(), payment: {} });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('validation_error');
    expect(res.body.data).toHaveProperty(['payment.gross_amount']);
  });

  it('needs no address for a charge without products, and shows the phone as "" when none was sent', async () => {
    const res = await createOrder(t.url, key, standaloneOrder({ customer: customer({ phone: undefined }) }));
    expect(res.status).toBe(201);
    const order = await detail((res.body.data as { uuid: string }).uuid);
    expect(order.customer).toMatchObject({ address: null, phone: '' });
    expect(order.items).toEqual([]);
  });
});

describe('create order: with products', () => {
  it('computes gross from the items, shipping and discount, and lists the items', async () => {
    const shirt = await createProduct(t.url, key, { price: 5000, commission_unit_amount: 500 });
    const ebook = await createProduct(t.url, key, {
      name: 'E-book',
      price: 1990,
      type: 'DIGITAL',
      commission_unit_amount: 0,
      producer_name: null,
    });
    const res = await createOrder(t.url, key, {
      customer: customer({ address: address() }),
      items: [
        { product_uuid: shirt, quantity: 2 },
        { product_uuid: ebook, quantity: 1 },
      ],
      payment: { shipping_amount: 1500, discount_amount: 490 },
    });
    expect(res.status).toBe(201);
    const data = CreatedOrder.parse(res.body.data);
    expect(data.gross_amount).toBe(10000 + 1990 + 1500 - 490);
    expect(data.items).toEqual([
      { product_uuid: shirt, name: 'Camiseta', quantity: 2, line_total_amount: 10000 },
      { product_uuid: ebook, name: 'E-book', quantity: 1, line_total_amount: 1990 },
    ]);
    const order = await detail(data.uuid);
    expect(order.payment).toMatchObject({
      subtotal_amount: 11990,
      shipping_amount: 1500,
      discount_amount: 490,
      commission_amount: 1000,
      gross_amount: 13000,
    });
  });

  it('uses gross_amount as sent when it is sent', async () => {
    const shirt = await createProduct(t.url, key);
    const res = await createOrder(t.url, key, {
      customer: customer({ address: address() }),
      items: [{ product_uuid: shirt, quantity: 1 }],
      payment: { gross_amount: 4242 },
    });
    expect(CreatedOrder.parse(res.body.data).gross_amount).toBe(4242);
  });

  it('requires an address when a product is physical, not when all are digital', async () => {
    const shirt = await createProduct(t.url, key);
    const ebook = await createProduct(t.url, key, { type: 'DIGITAL' });
    const physical = await createOrder(t.url, key, {
      customer: customer(),
      items: [{ product_uuid: shirt, quantity: 1 }],
      payment: {},
    });
    expect(physical.status).toBe(400);
    expect(physical.body.data).toEqual({ 'customer.address': [expect.any(String)] });
    const digital = await createOrder(t.url, key, {
      customer: customer(),
      items: [{ product_uuid: ebook, quantity: 1 }],
      payment: {},
    });
    expect(digital.status).toBe(201);
  });

  it('reports every violation of a body at once, with field paths', async () => {
    const shirt = await createProduct(t.url, key);
    const res = await createOrder(t.url, key, {
      customer: {
        name: 'Ana',
        tax_id: '123',
        email: 'not-an-email',
        address: address({ state: 'sp', postal_code: '1234' }),
      },
      items: [
        { product_uuid: shirt, quantity: 0 },
        { product_uuid: randomUUID(), quantity: 1 },
      ],
      payment: { gross_amount: -5, expiration_date: '2020-01-01' },
    });
    expect(res.status).toBe(400);
    expect(Object.keys(res.body.data as object).sort()).toEqual(
      [
        'customer.tax_id',
        'customer.email',
        'customer.address.state',
        'customer.address.postal_code',
        'items.0.quantity',
        'items.1.product_uuid',
        'payment.gross_amount',
        'payment.expiration_date',
      ].sort(),
    );
    for (const messages of Object.values(res.body.data as Record<string, unknown>))
      expect(messages).toEqual([expect.any(String)]);
  });

  it('refuses a discount above subtotal plus shipping, more than 100 items and a product of another seller', async () => {
    const shirt = await createProduct(t.url, key, { price: 1000 });
    const discount = await createOrder(t.url, key, {
      customer: customer({ address: address() }),
      items: [{ product_uuid: shirt, quantity: 1 }],
      payment: { shipping_amount: 100, discount_amount: 1101 },
    });
    expect(discount.body.data).toEqual({ 'payment.discount_amount': [expect.any(String)] });
    const many = await createOrder(t.url, key, {
      customer: customer({ address: address() }),
      items: Array.from({ length: 101 }, () => ({ product_uuid: shirt, quantity: 1 })),
      payment: {},
    });
    expect(many.status).toBe(400);
    expect(many.body.data).toHaveProperty(['items']);
    const other = await t.newKey();
    const foreign = await createOrder(t.url, other.key, {
      customer: customer({ address: address() }),
      items: [{ product_uuid: shirt, quantity: 1 }],
      payment: {},
    });
    expect(foreign.body.data).toEqual({ 'items.0.product_uuid': [expect.any(String)] });
  });
});

describe('create order: customer data', () => {
  it('cleans the tax id, deduces its type and keeps the canonical address string', async () => {
    const res = await createOrder(
      t.url,
      key,
      standaloneOrder({
        customer: customer({ tax_id: CNPJ, address: address({ complement: 'Apto 4', number: undefined }) }),
      }),
    );
    const order = await detail((res.body.data as { uuid: string }).uuid);
    expect(order.customer).toMatchObject({
      tax_id: '11222333000181',
      tax_id_type: 'CNPJ',
      address: 'Rua das Flores, S/N - Apto 4, Centro, São Paulo, SP, 01001-000, BR',
    });
  });

  it('accepts the alphanumeric CNPJ and refuses wrong check digits, repeated digits and a contradicting type', async () => {
    expect(
      (
        await createOrder(
          t.url,
          key,
          standaloneOrder({ customer: customer({ tax_id: '12.ABC.345/01DE-35' }) }),
        )
      ).status,
    ).toBe(201);
    const wrong = await createOrder(
      t.url,
      key,
      standaloneOrder({ customer: customer({ tax_id: '529.982.247-26' }) }),
    );
    expect(wrong.body.data).toEqual({ 'customer.tax_id': [expect.any(String)] });
    const repeated = await createOrder(
      t.url,
      key,
      standaloneOrder({ customer: customer({ tax_id: '111.111.111-11' }) }),
    );
    expect(repeated.body.data).toEqual({ 'customer.tax_id': [expect.any(String)] });
    const contradiction = await createOrder(
      t.url,
      key,
      standaloneOrder({ customer: customer({ tax_id: CPF, tax_id_type: 'CNPJ' }) }),
    );
    expect(contradiction.body.data).toEqual({ 'customer.tax_id_type': [expect.any(String)] });
  });

  it('reuses the customer of the same tax id for the same seller', async () => {
    const first = CreatedOrder.parse((await createOrder(t.url, key, standaloneOrder())).body.data);
    const second = CreatedOrder.parse(
      (
        await createOrder(
          t.url,
          key,
          standaloneOrder({ customer: customer({ tax_id: '52998224725', name: 'Maria S.' }) }),
        )
      ).body.data,
    );
    expect(second.customer.uuid).toBe(first.customer.uuid);
    expect(second.customer.name).toBe('Maria S.');
    const other = await t.newKey();
    const third = CreatedOrder.parse((await createOrder(t.url, other.key, standaloneOrder())).body.data);
    expect(third.customer.uuid).not.toBe(first.customer.uuid);
  });

  it('writes a returning customer only when the order changes its data', async () => {
    const seller = await t.newKey();
    const customerRow = async (id: string | undefined) =>
      (
        await t.system.orders.runtime.sql.query<{
          xmin: string;
          name: string;
          address: { city: string } | null;
        }>('select xmin::text, name, address from orders.customers where id = $1', [id])
      )[0];
    const order = async (overrides: Record<string, unknown>) =>
      CreatedOrder.parse(
        (await createOrder(t.url, seller.key, standaloneOrder({ customer: customer(overrides) }))).body.data,
      ).customer.uuid;
    const id = await order({ address: address() });
    const stored = await customerRow(id);
    // The same data again, and no address (the stored one stays): the row is not rewritten.
    expect(await order({ address: address() })).toBe(id);
    expect(await order({})).toBe(id);
    expect(await customerRow(id)).toEqual(stored);
    // A new address or name is written.
    expect(await order({ address: address({ city: 'Campinas' }) })).toBe(id);
    const moved = await customerRow(id);
    expect(moved?.xmin).not.toBe(stored?.xmin);
    expect(moved?.address?.city).toBe('Campinas');
    expect(await order({ name: 'Maria S.' })).toBe(id);
    expect(await customerRow(id)).toMatchObject({ name: 'Maria S.', address: { city: 'Campinas' } });
  });

  it('makes one customer of concurrent orders with one tax id', async () => {
    // Orders that arrive together are written in one batch, where a customer may be upserted once.
    const seller = await t.newKey();
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        createOrder(t.url, seller.key, standaloneOrder({ customer: customer({ name: `Maria ${i}` }) })),
      ),
    );
    const created = answers.map((a) => CreatedOrder.parse(a.body.data));
    expect(new Set(created.map((o) => o.customer.uuid)).size).toBe(1);
    const rows = await t.system.orders.runtime.sql.query<{ name: string }>(
      'select name from orders.customers where id = $1',
      [created[0]?.customer.uuid],
    );
    expect(rows).toHaveLength(1);
    expect(created.map((o) => `${o.customer.name}`)).toContain(rows[0]?.name);
  });

  /** The domain's create with payments stubbed: creates of the same turn reach the write together. */
  const stubbedDeps = (writes: OrderWrites): CreateOrderDeps => ({
    requestCharge: async (request) => ({
      transaction_uuid: randomUUID(),
      order_uuid: request.order_uuid,
      status: 'CREATED',
      method: 'PIX',
      txid: randomUUID().replaceAll('-', ''),
      copy_and_paste: '000201',
      qr_code_image_base64: null,
      gross_amount: request.gross_amount,
      fee_amount: 0,
      net_amount: request.gross_amount,
      expires_at: request.expires_at,
      created_at: new Date().toISOString(),
    }),
    targets: { allowPrivate: true },
    products: new ProductLookup(),
    writes,
  });

  it('leaves a customer written twice in one batch as two orders one after another would', async () => {
    const scope = { sellerId: randomUUID(), environment: 'test' as const, sellerName: 'Loja' };
    // Both creates reach the write in the same turn, so they share one statement.
    const deps = stubbedDeps(new OrderWrites(t.system.orders.runtime.sql));
    const given = address();
    const em = t.system.orders.runtime.orm.em.fork();
    const [first, second] = await Promise.all([
      createOrderInDomain(
        em,
        scope,
        standaloneOrder({ customer: customer({ name: 'First', address: given }) }),
        deps,
      ),
      createOrderInDomain(em, scope, standaloneOrder({ customer: customer({ name: 'Second' }) }), deps),
    ]);
    expect(first.customerId).toBe(second.customerId);
    expect(first.order.customerId).toBe(first.customerId);
    const [row] = await t.system.orders.runtime.sql.query<{ name: string; address: { city: string } }>(
      'select name, address from orders.customers where id = $1',
      [first.customerId],
    );
    // The second has no address, so the first's stays; the last contact data wins.
    expect(row).toEqual({ name: 'Second', address: expect.objectContaining({ city: given.city }) });
    const orders = await t.system.orders.runtime.sql.query<{ customer_id: string }>(
      'select customer_id from orders.orders where id = any($1::uuid[])',
      [[first.order.id, second.order.id]],
    );
    expect(orders).toEqual([{ customer_id: first.customerId }, { customer_id: first.customerId }]);
  });

  it('locks the customers of a batch in one order, so two batches in flight never deadlock', async () => {
    // Two batches change the same two customers, listed in opposite orders. A third transaction holds
    // the row that sorts last; in the order of arrival, the batch that lists it first would wait for
    // it while the other holds the first row and waits for the same one, and on its release the two
    // would lock crosswise. A deadlock would be retried one order at a time, unseen by the caller, so
    // the statements' errors are watched.
    const failures: Array<{ code?: string }> = [];
    const base = t.system.orders.runtime.sql;
    const watched: Sql = {
      ...base,
      query: <R extends object>(text: string, values?: unknown[]) =>
        base.query<R>(text, values).catch((err: unknown) => {
          failures.push(err as { code?: string });
          throw err;
        }),
    };
    const deps = stubbedDeps(new OrderWrites(watched));
    const scope = { sellerId: randomUUID(), environment: 'test' as const, sellerName: 'Loja' };
    const em = t.system.orders.runtime.orm.em.fork();
    const [first, last] = ['111.444.777-35', CPF]; // in the order of their keys
    const create = (taxId: string, name: string) =>
      createOrderInDomain(em, scope, standaloneOrder({ customer: customer({ name, tax_id: taxId }) }), deps);
    await create(first, 'Before');
    await create(last, 'Before');
    const holder = new Client({ connectionString: t.env.DATABASE_URL });
    await holder.connect();
    try {
      await holder.query('begin');
      await holder.query(`select 1 from orders.customers where seller_id = $1 and tax_id = $2 for update`, [
        scope.sellerId,
        last.replace(/\D/g, ''),
      ]);
      // Read outside the holder's transaction, which would see one snapshot of pg_stat_activity.
      const waiting = () =>
        base
          .query<{ n: number }>(
            `select count(*)::int as n from pg_stat_activity
              where wait_event_type = 'Lock' and query like '%orders.customers%'`,
          )
          .then((rows) => rows[0]?.n ?? 0);
      const lastFirst = Promise.all([create(last, 'Batch one'), create(first, 'Batch one')]);
      await waitFor(async () => (await waiting()) >= 1, { what: 'the first batch waiting' });
      const firstFirst = Promise.all([create(first, 'Batch two'), create(last, 'Batch two')]);
      await waitFor(async () => (await waiting()) >= 2, { what: 'both batches waiting' });
      await holder.query('commit');
      const created = [...(await lastFirst), ...(await firstFirst)];
      expect(new Set(created.map((c) => c.customerId)).size).toBe(2);
    } finally {
      await holder.end();
    }
    expect(failures.map((f) => f.code)).toEqual([]);
  });

  it('checks the debtor document', async () => {
    const res = await createOrder(
      t.url,
      key,
      standaloneOrder({ payment: { gross_amount: 100, debtor_document: '000.000.000-01' } }),
    );
    expect(res.body.data).toEqual({ 'payment.debtor_document': [expect.any(String)] });
  });
});

describe('create order: expiration', () => {
  it('defaults to 24 hours and reads a date alone as the end of that day in São Paulo', async () => {
    const before = Date.now();
    const plain = await detail(
      CreatedOrder.parse((await createOrder(t.url, key, standaloneOrder())).body.data).uuid,
    );
    const expires = new Date(plain.payment.expires_at).getTime();
    expect(expires - before).toBeGreaterThanOrEqual(24 * 3600_000 - 5_000);
    expect(expires - before).toBeLessThanOrEqual(24 * 3600_000 + 5_000);

    const day = new Date(Date.now() + 3 * 86400_000).toISOString().slice(0, 10);
    const dated = await detail(
      CreatedOrder.parse(
        (
          await createOrder(
            t.url,
            key,
            standaloneOrder({ payment: { gross_amount: 100, expiration_date: day } }),
          )
        ).body.data,
      ).uuid,
    );
    const next = new Date(`${day}T00:00:00Z`);
    next.setUTCDate(next.getUTCDate() + 1);
    expect(dated.payment.expires_at).toBe(`${next.toISOString().slice(0, 10)}T02:59:59.999Z`);
  });

  it('refuses an expiration in the past or more than 30 days away', async () => {
    const past = await createOrder(
      t.url,
      key,
      standaloneOrder({
        payment: { gross_amount: 100, expiration_date: new Date(Date.now() - 60_000).toISOString() },
      }),
    );
    expect(past.body.data).toEqual({ 'payment.expiration_date': [expect.stringMatching(/future/)] });
    const far = await createOrder(
      t.url,
      key,
      standaloneOrder({
        payment: { gross_amount: 100, expiration_date: new Date(Date.now() + 31 * 86400_000).toISOString() },
      }),
    );
    expect(far.body.data).toEqual({ 'payment.expiration_date': [expect.stringMatching(/30 days/)] });
  });
});

describe('create order: callers', () => {
  it('refuses a caller without the gateway identity, with a JSON body, a broken one or a query string', async () => {
    // Served on plain node:http first (kit plain-route.ts), then by express for other shapes: both
    // answer 401 in the documented shape before the body is looked at.
    const post = (path: string, body: string) =>
      fetch(`${t.system.services.orders}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body,
      });
    for (const res of [
      await post('/sellers/orders/', JSON.stringify(standaloneOrder())),
      await post('/sellers/orders/', '{not json'),
      await post('/sellers/orders/?x=1', JSON.stringify(standaloneOrder())),
      await post('/sellers/orders/?x=1', '{not json'),
    ]) {
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ code: 'unauthorized', message: expect.any(String) });
    }
  });
});

describe('create order: events and failures', () => {
  it('publishes order.created and payment.pix_qr_code_created through the outboxes', async () => {
    const orders = await captureEvents(
      t.env.AMQP_URL as string,
      t.env.AMQP_NAMESPACE as string,
      'orders.events',
      'order.*',
    );
    const payments = await captureEvents(
      t.env.AMQP_URL as string,
      t.env.AMQP_NAMESPACE as string,
      'payments.events',
      'payment.*',
    );
    try {
      const created = CreatedOrder.parse(
        (await createOrder(t.url, key, standaloneOrder({ postback_url: 'https://example.com/p' }))).body.data,
      );
      const [event] = await orders.waitFor(
        (m) =>
          m.routingKey === 'order.created' && (m.payload.order as { uuid: string }).uuid === created.uuid,
      );
      const data = OrderEventData.parse(event?.payload);
      expect(data.order).toMatchObject({
        status: 'PENDING',
        gross_amount: 15000,
        method: 'PIX',
        paid_at: null,
      });
      expect(data.customer).toEqual({
        name: 'Maria Silva',
        tax_id: '529.***.***-25',
        tax_id_type: 'CPF',
        email: 'mar********@example.com',
      });
      expect(event?.headers).toMatchObject({
        'x-environment': 'test',
        'x-postback-url': 'https://example.com/p',
      });
      const [charge] = await payments.waitFor(
        (m) => (m.payload.order as { uuid: string } | undefined)?.uuid === created.uuid,
      );
      expect(charge?.routingKey).toBe('payment.pix_qr_code_created');
    } finally {
      await orders.close();
      await payments.close();
    }
  });

  it('answers 503 and stores nothing when payments cannot answer; a retry with the same Idempotency-Key succeeds once', async () => {
    const k = await t.newKey();
    const idem = randomUUID();
    await paymentsProxy.cut();
    const failed = await createOrder(t.url, k.key, standaloneOrder(), { 'idempotency-key': idem });
    expect(failed.status).toBe(503);
    expect(failed.body).toMatchObject({
      code: 'service_unavailable',
      message: expect.stringMatching(/not created/),
    });
    const none = (await call(`${t.url}/sellers/orders/`, { key: k.key })).body.data as {
      results: unknown[];
    };
    expect(none.results).toHaveLength(0);

    await paymentsProxy.restore();
    const retried = await createOrder(t.url, k.key, standaloneOrder(), { 'idempotency-key': idem });
    expect(retried.status).toBe(201);
    const replayed = await createOrder(t.url, k.key, standaloneOrder(), { 'idempotency-key': idem });
    expect(replayed.text).toBe(retried.text);
    const one = (await call(`${t.url}/sellers/orders/`, { key: k.key })).body.data as {
      results: unknown[];
    };
    expect(one.results).toHaveLength(1);
  });
});
