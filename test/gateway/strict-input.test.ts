import { randomUUID } from 'node:crypto';
import { CreatedOrder, MESSAGES } from '@seller-api/contracts';
import { call, requestWithHost } from '../support/system';
import { useSystem } from '../support/use-system';
import { address, createOrder, customer, standaloneOrder } from '../orders/fixtures';

// Strict input (docs/errors.md, "Strict input"): an unknown field, a query parameter a route does not
// take or a body on a GET is a 400 naming it, on every public route.
const t = useSystem({ seller: true });
let key: string;
let operator: string;

beforeAll(async () => {
  key = t.seller.key;
  ({ key: operator } = await t.newKey({ role: 'operator' }));
});

/** A GET with a body, which fetch refuses to send (node:http sends it as it is). */
const getWithBody = (path: string, body: string) =>
  requestWithHost(`${t.url}${path}`, new URL(t.url).host, {
    body,
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(body)),
    },
  });

describe('unknown body fields', () => {
  it('names an unknown field at the top, in a nested object and in an array item, with the other problems', async () => {
    const res = await createOrder(t.url, key, {
      customer: { ...customer(), nickname: 'Mari', address: { ...address(), zip: '01001000' } },
      items: [{ product_uuid: randomUUID(), quantity: 1, currency: 'BRL' }],
      payment: { amount: 15000 },
      currency: 'BRL',
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'validation_error', message: 'Invalid order.' });
    expect(res.body.data).toEqual({
      currency: [MESSAGES.unknownField],
      'customer.nickname': [MESSAGES.unknownField],
      'customer.address.zip': [MESSAGES.unknownField],
      'items.0.currency': [MESSAGES.unknownField],
      'payment.amount': [MESSAGES.unknownField],
      // The product is looked up together with the schema's rules: every problem at once.
      'items.0.product_uuid': [MESSAGES.unknownProduct],
    });
  });

  it('refuses `payment.amount` for `payment.gross_amount` on a charge without items, naming both', async () => {
    const res = await createOrder(t.url, key, { customer: customer(), payment: { amount: 15000 } });
    expect(res.status).toBe(400);
    expect(res.body.data).toEqual({
      'payment.amount': [MESSAGES.unknownField],
      'payment.gross_amount': [MESSAGES.grossAmountRequired],
    });
  });

  it.each([
    [
      'a product',
      'POST',
      '/sellers/products/',
      { name: 'Camiseta', price: 5000, type: 'DIGITAL', currency: 'BRL' },
    ],
    ['an affiliate', 'POST', '/sellers/affiliates/', { code: 'ana', name: 'Ana', commission: 10 }],
    [
      'a webhook',
      'POST',
      '/config/webhooks/',
      { url: 'https://example.com/h', event: 'order.paid', secret: 'x' },
    ],
    [
      'a withdrawal',
      'POST',
      '/finance/withdrawals/',
      { amount: 100, pix_key: 'a@b.co', pix_key_type: 'email', currency: 'BRL' },
    ],
  ])('refuses an unknown field on %s', async (_what, method, path, body) => {
    const res = await call(`${t.url}${path}`, { method, key, body });
    expect(res.status).toBe(400);
    const [unknown] = Object.keys(body).slice(-1);
    expect(res.body.data).toMatchObject({ [unknown as string]: [MESSAGES.unknownField] });
  });

  it('refuses an unknown field on a tracking update, a webhook update and an operator action', async () => {
    const tracking = await call(`${t.url}/sellers/orders/${randomUUID()}/tracking/`, {
      method: 'PATCH',
      key,
      body: { tracking_code: 'BR1', carrier: 'Correios' },
    });
    expect(tracking.body).toMatchObject({
      code: 'validation_error',
      data: { carrier: [MESSAGES.unknownField] },
    });
    const webhook = await call(`${t.url}/config/webhooks/${randomUUID()}/`, {
      method: 'PATCH',
      key,
      body: { status: 'DISABLED', paused: true },
    });
    expect(webhook.body).toMatchObject({
      code: 'validation_error',
      data: { paused: [MESSAGES.unknownField] },
    });
    const deny = await call(`${t.url}/ops/withdrawals/${randomUUID()}/deny/`, {
      method: 'POST',
      key: operator,
      body: { reason: 'fraud', notify: true },
    });
    expect(deny.body).toMatchObject({ code: 'validation_error', data: { notify: [MESSAGES.unknownField] } });
  });

  it('names a field sent to an action route, which takes none: a refund of part of an order is not one', async () => {
    const refund = await call(`${t.url}/sellers/orders/${randomUUID()}/refund/`, {
      method: 'POST',
      key,
      body: { amount: 500, reason: 'damaged' },
    });
    expect(refund.status).toBe(400);
    expect(refund.body).toMatchObject({
      code: 'validation_error',
      data: { amount: [MESSAGES.unknownField], reason: [MESSAGES.unknownField] },
    });
    // The services route without regard to case, so a path in other letters is the same route.
    const shouted = await call(`${t.url}/sellers/orders/${randomUUID()}/REFUND/`, {
      method: 'POST',
      key,
      body: { amount: 500 },
    });
    expect(shouted.body).toMatchObject({
      code: 'validation_error',
      data: { amount: [MESSAGES.unknownField] },
    });
    const list = await call(`${t.url}/sandbox/orders/${randomUUID()}/pay/`, {
      method: 'POST',
      key,
      body: [1],
    });
    expect(list.body).toMatchObject({ data: { non_field_errors: [MESSAGES.object] } });
  });

  it('still takes an action route with an empty body, with or without Content-Type', async () => {
    const orders = await Promise.all(
      [0, 1].map(async () =>
        CreatedOrder.parse((await createOrder(t.url, key, standaloneOrder())).body.data),
      ),
    );
    const bare = await call(`${t.url}/sellers/orders/${orders[0]?.uuid}/cancel/`, {
      method: 'POST',
      key,
    });
    expect(bare.status).toBe(200);
    const typed = await call(`${t.url}/sellers/orders/${orders[1]?.uuid}/cancel/`, {
      method: 'POST',
      key,
      rawBody: '',
      headers: { 'content-type': 'application/json' },
    });
    expect(typed.status).toBe(200);
  });
});

describe('unknown query parameters', () => {
  it('names a misspelt filter instead of answering the unfiltered list', async () => {
    const res = await call(`${t.url}/sellers/orders/?statuss=PAID&limit=5`, { key });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      code: 'validation_error',
      data: { statuss: [MESSAGES.unknownQueryParameter] },
    });
    expect(Object.keys(res.body.data as object)).toEqual(['statuss']);
    expect((await call(`${t.url}/sellers/orders/?status=PAID&limit=5`, { key })).status).toBe(200);
  });

  it('reports an unknown parameter together with a broken one', async () => {
    const res = await call(`${t.url}/events/?typ=order.paid&limit=0`, { key });
    expect(res.status).toBe(400);
    expect(res.body.data).toEqual({ typ: [MESSAGES.unknownQueryParameter], limit: ['Must be at least 1.'] });
  });

  it('names every parameter on a route that takes none', async () => {
    const balance = await call(`${t.url}/finance/balance/?currency=BRL&x=1`, { key });
    expect(balance.status).toBe(400);
    expect(balance.body).toMatchObject({
      code: 'validation_error',
      message: 'Invalid request.',
      data: { currency: [MESSAGES.unknownQueryParameter], x: [MESSAGES.unknownQueryParameter] },
    });
    const cancel = await call(`${t.url}/sellers/orders/${randomUUID()}/cancel/?force=true`, {
      method: 'POST',
      key,
    });
    expect(cancel.status).toBe(400);
    expect(cancel.body.data).toEqual({ force: [MESSAGES.unknownQueryParameter] });
    expect((await call(`${t.url}/finance/balance/`, { key })).status).toBe(200);
  });
});

describe('a body on a GET', () => {
  it('is a 400 on non_field_errors, not a filter silently ignored', async () => {
    const res = await getWithBody('/sellers/orders/', JSON.stringify({ status: 'PAID' }));
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({
      code: 'validation_error',
      data: { non_field_errors: [MESSAGES.getBody] },
    });
    const read = await getWithBody('/finance/balance/', '{}');
    expect(read.body).toMatchObject({ data: { non_field_errors: [MESSAGES.getBody] } });
  });
});
