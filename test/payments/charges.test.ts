import { randomUUID } from 'node:crypto';
import amqp from 'amqplib';
import jsQR from 'jsqr';
import { PNG } from 'pngjs';
import { hasError, isStaticPix, parsePix } from 'pix-utils';
import {
  Charge,
  PaymentEvents,
  PaymentPixQrCodeCreatedData,
  type CreateChargeRequest,
  type Identity,
} from '@seller-api/contracts';
import { signIdentity, signedIdentity } from '@seller-api/service-kit';
import { callKey } from '../support/keys';
import { DEFAULT_PIX_KEY } from '../../services/payments/src/config';
import { parseBrCode } from '../../services/payments/src/domain/brcode';
import { call } from '../support/system';
import { useSystem } from '../support/use-system';
import { waitFor } from '../support/wait';

const ORDERS_KEY = callKey('orders', 'payments');

const PATH = '/internal/charges/';
const ISO_MS_Z = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

// Payments called directly, as orders calls it: no gateway.
const t = useSystem({ gateway: false, db: true });
let connection: amqp.ChannelModel;
const received: amqp.ConsumeMessage[] = [];

function sellerIdentity(overrides: Partial<Identity> = {}): Identity {
  return {
    user_id: randomUUID(),
    seller_id: randomUUID(),
    environment: 'test',
    role: 'seller',
    seller_name: 'Loja da Identidade',
    ...overrides,
  };
}

function chargeBody(overrides: Partial<CreateChargeRequest> = {}): CreateChargeRequest {
  return {
    order_uuid: randomUUID(),
    gross_amount: 15000,
    expires_at: new Date(Date.now() + 24 * 3600_000).toISOString(),
    seller_name: 'Loja Exemplo',
    debtor_name: 'Maria Silva',
    debtor_document: '52998224725',
    ...overrides,
  };
}

function postCharge(body: unknown, identity: Identity | null, signedPath = PATH) {
  return call(`${t.system.services.payments}${PATH}`, {
    method: 'POST',
    body,
    // Signed over the bytes `call` sends (JSON.stringify of the body).
    headers: identity ? signIdentity(ORDERS_KEY, identity, 'POST', signedPath, JSON.stringify(body)) : {},
  });
}

function decodePng(base64: string): string | undefined {
  const png = PNG.sync.read(Buffer.from(base64, 'base64'));
  return jsQR(new Uint8ClampedArray(png.data), png.width, png.height)?.data;
}

function eventsFor(orderUuid: string): amqp.ConsumeMessage[] {
  return received.filter((m) => m.properties.headers?.['x-order-uuid'] === orderUuid);
}

async function rowsFor(orderUuid: string): Promise<Array<Record<string, unknown>>> {
  const result = await t.db.query('select * from payments.transactions where order_id = $1', [orderUuid]);
  return result.rows as Array<Record<string, unknown>>;
}

/**
 * Proves that no further event for `orderUuid` is coming: a later charge's event is published after
 * anything committed before it (the relay publishes the outbox in order), so once it has arrived, an
 * event the earlier request had enqueued would have arrived too.
 */
async function settle(identity: Identity): Promise<void> {
  const sentinel = chargeBody();
  expect((await postCharge(sentinel, identity)).status).toBe(201);
  await waitFor(() => eventsFor(sentinel.order_uuid).length > 0, { what: 'sentinel event' });
  const pending = await t.db.query(
    `select count(*)::int as n from payments.outbox where headers->>'x-order-uuid' <> $1`,
    [sentinel.order_uuid],
  );
  expect(pending.rows[0].n).toBe(0);
}

beforeAll(async () => {
  connection = await amqp.connect(t.env.AMQP_URL as string);
  t.cleanup(() => connection.close());
  const channel = await connection.createChannel();
  const { queue } = await channel.assertQueue('', { exclusive: true });
  // Bound before any charge is made, so every event of this file lands here.
  await channel.bindQueue(queue, `${t.env.AMQP_NAMESPACE}payments.events`, 'payment.#');
  await channel.consume(queue, (message) => {
    if (!message) return;
    received.push(message);
    channel.ack(message);
  });
});

describe('POST /internal/charges/', () => {
  it('creates the charge: every field, a valid BR Code, a readable QR and the documented fee', async () => {
    const identity = sellerIdentity();
    const body = chargeBody();
    const before = Date.now();
    const res = await postCharge(body, identity);
    const after = Date.now();

    expect(res.status).toBe(201);
    expect(res.body.message).toBe('Charge created.');
    const data = Charge.strict().parse(res.body.data);
    expect(Object.keys(data).sort()).toEqual(Object.keys(Charge.shape).sort());
    expect(data).toMatchObject({
      order_uuid: body.order_uuid,
      status: 'CREATED',
      method: 'PIX',
      gross_amount: 15000,
      // 15000 * 399 / 10000 = 598.5, rounded half up.
      fee_amount: 599,
      net_amount: 14401,
      expires_at: body.expires_at,
    });
    expect(data.transaction_uuid).toMatch(UUID);
    expect(data.txid).toMatch(/^[A-Za-z0-9]{25}$/);
    expect(data.created_at).toMatch(ISO_MS_Z);
    expect(data.expires_at).toMatch(ISO_MS_Z);
    expect(Date.parse(data.created_at)).toBeGreaterThanOrEqual(before);
    expect(Date.parse(data.created_at)).toBeLessThanOrEqual(after);

    // The BR Code: CRC and structure by our parser, the sandbox's static form with the txid.
    const parsed = parseBrCode(data.copy_and_paste);
    expect(parsed.error).toBeUndefined();
    expect(parsed.valid).toBe(true);
    expect(parsed.fields).toMatchObject({
      '00': '01',
      '26': { '00': 'br.gov.bcb.pix', '01': DEFAULT_PIX_KEY },
      '52': '0000',
      '53': '986',
      '54': '150.00',
      '58': 'BR',
      '59': 'SELLER API',
      '60': 'SAO PAULO',
      '62': { '05': data.txid },
    });
    expect(Number(parsed.fields['54'])).toBe(data.gross_amount / 100);

    // And by a public parser.
    const pix = parsePix(data.copy_and_paste);
    if (hasError(pix)) throw new Error(`pix-utils refused ${data.copy_and_paste}: ${pix.message}`);
    if (!isStaticPix(pix)) throw new Error('expected a static BR Code');
    expect(pix.pixKey).toBe(DEFAULT_PIX_KEY);
    expect(pix.transactionAmount).toBe(150);
    expect(pix.txid).toBe(data.txid);

    // The QR image decodes to exactly the BR Code.
    expect(data.qr_code_image_base64).not.toMatch(/^data:/);
    const png = PNG.sync.read(Buffer.from(data.qr_code_image_base64 as string, 'base64'));
    const decoded = jsQR(new Uint8ClampedArray(png.data), png.width, png.height);
    expect(decoded?.data).toBe(data.copy_and_paste);

    // The stored row.
    const rows = await rowsFor(body.order_uuid);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({
      id: data.transaction_uuid,
      seller_id: identity.seller_id,
      environment: 'test',
      seller_name: 'Loja Exemplo',
      status: 'CREATED',
      method: 'PIX',
      txid: data.txid,
      copy_and_paste: data.copy_and_paste,
      gross_amount: '15000',
      fee_amount: '599',
      net_amount: '14401',
      approved_at: null,
      refunded_at: null,
      end_to_end_id: null,
      debtor_name: 'Maria Silva',
      debtor_document: '52998224725',
    });

    // The event, read off the exchange.
    const message = await waitFor(() => eventsFor(body.order_uuid)[0], { what: 'payment event' });
    expect(message.fields.exchange).toBe(`${t.env.AMQP_NAMESPACE}payments.events`);
    expect(message.fields.routingKey).toBe(PaymentEvents.PIX_QR_CODE_CREATED);
    expect(message.properties.messageId).toMatch(UUID);
    expect(message.properties.headers).toMatchObject({
      'x-seller-id': identity.seller_id,
      'x-environment': 'test',
      'x-order-uuid': body.order_uuid,
    });
    const payload = JSON.parse(message.content.toString('utf8')) as unknown;
    expect(PaymentPixQrCodeCreatedData.strict().safeParse(payload).success).toBe(true);
    expect(payload).toEqual({
      transaction: {
        id: data.transaction_uuid,
        method: 'PIX',
        status: 'CREATED',
        gross_amount: 15000,
        fee_amount: 599,
        net_amount: 14401,
        created_at: data.created_at,
        expires_at: data.expires_at,
      },
      order: { uuid: body.order_uuid, status: 'PENDING' },
      seller: { name: 'Loja Exemplo' },
    });
  });

  it('returns the same charge for the same order, reading amounts back as numbers, with no second event', async () => {
    const identity = sellerIdentity();
    // The largest amount: field 54 at its widest and bigint columns read back as exact numbers.
    const body = chargeBody({ gross_amount: 999_999_999_999, seller_name: null });
    const first = await postCharge(body, identity);
    expect(first.status).toBe(201);
    await waitFor(() => eventsFor(body.order_uuid).length > 0, { what: 'first event' });

    const again = await postCharge(body, identity);
    expect(again.status).toBe(200);
    expect(again.body.data).toEqual(first.body.data);
    const data = Charge.parse(again.body.data);
    expect(data.gross_amount).toBe(999_999_999_999);
    expect(data.fee_amount).toBe(39_900_000_000);
    expect(data.net_amount).toBe(960_099_999_999);
    expect(parseBrCode(data.copy_and_paste).fields['54']).toBe('9999999999.99');

    // A retry with other values still answers with the charge already made for the order.
    const retry = await postCharge({ ...body, gross_amount: 100 }, identity);
    expect(retry.status).toBe(200);
    expect((retry.body.data as Charge).transaction_uuid).toBe(data.transaction_uuid);
    expect((retry.body.data as Charge).gross_amount).toBe(999_999_999_999);

    expect(await rowsFor(body.order_uuid)).toHaveLength(1);
    await settle(identity);
    expect(eventsFor(body.order_uuid)).toHaveLength(1);
    // With no seller_name in the request, the identity's name is the one kept.
    const payload = JSON.parse(eventsFor(body.order_uuid)[0]!.content.toString('utf8')) as {
      seller: { name: string };
    };
    expect(payload.seller.name).toBe('Loja da Identidade');
  });

  it('makes one transaction and one event for concurrent requests of one new order', async () => {
    const identity = sellerIdentity();
    const body = chargeBody({ gross_amount: 4321 });
    const answers = await Promise.all(Array.from({ length: 8 }, () => postCharge(body, identity)));

    expect(answers.map((a) => a.status).sort()).toEqual([200, 200, 200, 200, 200, 200, 200, 201]);
    const ids = new Set(answers.map((a) => (a.body.data as Charge).transaction_uuid));
    expect(ids.size).toBe(1);
    expect(await rowsFor(body.order_uuid)).toHaveLength(1);
    await settle(identity);
    expect(eventsFor(body.order_uuid)).toHaveLength(1);
  });

  it('refuses the order of another seller or environment with 409', async () => {
    const identity = sellerIdentity();
    const body = chargeBody();
    expect((await postCharge(body, identity)).status).toBe(201);

    const otherSeller = await postCharge(body, sellerIdentity());
    expect(otherSeller.status).toBe(409);
    expect(otherSeller.body.code).toBe('conflict');
    expect(otherSeller.body.data).toBeUndefined();

    const otherEnvironment = await postCharge(body, { ...identity, environment: 'live' });
    expect(otherEnvironment.status).toBe(409);
    expect(otherEnvironment.body.code).toBe('conflict');
    expect(await rowsFor(body.order_uuid)).toHaveLength(1);
  });

  it('answers 400 with a field map for a bad body, and creates nothing', async () => {
    const orderUuid = randomUUID();
    const res = await postCharge(
      {
        order_uuid: 'not-a-uuid',
        gross_amount: 0,
        expires_at: 'tomorrow',
        seller_name: 5,
        debtor_document: null,
      },
      sellerIdentity(),
    );
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('validation_error');
    const fields = res.body.data as Record<string, string[]>;
    expect(Object.keys(fields).sort()).toEqual([
      'debtor_name',
      'expires_at',
      'gross_amount',
      'order_uuid',
      'seller_name',
    ]);
    for (const messages of Object.values(fields)) expect(messages.length).toBeGreaterThan(0);

    const tooMuch = await postCharge(
      chargeBody({ order_uuid: orderUuid, gross_amount: 1_000_000_000_000 }),
      sellerIdentity(),
    );
    expect(tooMuch.status).toBe(400);
    expect(Object.keys(tooMuch.body.data as object)).toEqual(['gross_amount']);
    expect(await rowsFor(orderUuid)).toHaveLength(0);

    const notJson = await call(`${t.system.services.payments}${PATH}`, {
      method: 'POST',
      rawBody: '{"order_uuid":',
      headers: {
        'content-type': 'application/json',
        ...signIdentity(ORDERS_KEY, sellerIdentity(), 'POST', PATH, '{"order_uuid":'),
      },
    });
    expect(notJson.status).toBe(400);
    expect(notJson.body.code).toBe('invalid_json');
  });

  it('answers 401 without the signed identity and 403 to an identity with no seller', async () => {
    const body = chargeBody();
    const none = await postCharge(body, null);
    expect(none.status).toBe(401);
    expect(none.body.code).toBe('unauthorized');

    const otherRoute = await postCharge(body, sellerIdentity(), '/internal/other/');
    expect(otherRoute.status).toBe(401);

    const operator = await postCharge(body, sellerIdentity({ seller_id: null, role: 'operator' }));
    expect(operator.status).toBe(403);
    expect(operator.body.code).toBe('forbidden');
    expect(await rowsFor(body.order_uuid)).toHaveLength(0);
  });
});

describe('POST /internal/charges/batch/', () => {
  const BATCH = '/internal/charges/batch/';
  // A charge of a batch, with the identity signed over the body its own call would send.
  const item = (identity: Identity, charge: unknown, path = PATH, signedBody = JSON.stringify(charge)) => ({
    signed: signedIdentity(ORDERS_KEY, identity, 'POST', path, signedBody),
    charge,
  });
  const postBatch = (charges: unknown[], identity: Identity | null = sellerIdentity()) =>
    call(`${t.system.services.payments}${BATCH}`, {
      method: 'POST',
      body: { charges },
      headers: identity ? signIdentity(ORDERS_KEY, identity, 'POST', BATCH, JSON.stringify({ charges })) : {},
    });

  it('answers each charge as its own call would, in order, with one transaction and one event each', async () => {
    const sellers = [sellerIdentity(), sellerIdentity({ seller_name: 'Outra Loja' })];
    const bodies = [chargeBody({ gross_amount: 100 }), chargeBody({ gross_amount: 200, seller_name: null })];
    const existing = chargeBody({ gross_amount: 300 });
    expect((await postCharge(existing, sellers[0] as Identity)).status).toBe(201);
    const tampered = chargeBody();
    const res = await postBatch([
      item(sellers[0] as Identity, bodies[0]),
      item(sellers[1] as Identity, bodies[1]),
      // Made before: answered 200 with that charge, as a repeated single call is.
      item(sellers[0] as Identity, existing),
      // The same order asked by another seller: 409, and only for this one.
      item(sellers[1] as Identity, { ...existing }),
      // A signature made for another route, and an identity with no seller.
      item(sellers[0] as Identity, chargeBody(), '/internal/other/'),
      item(sellerIdentity({ seller_id: null, role: 'operator' }), chargeBody()),
      // A signature made for another charge (another amount): 401, and nothing is made of it.
      item(sellers[0] as Identity, tampered, PATH, JSON.stringify({ ...tampered, gross_amount: 1 })),
    ]);
    expect(res.status).toBe(200);
    const results = (res.body.data as { results: Array<Record<string, unknown>> }).results;
    expect(results.map((r) => r.status)).toEqual([201, 201, 200, 409, 401, 403, 401]);
    expect(await rowsFor(tampered.order_uuid)).toHaveLength(0);
    const charges = results.slice(0, 3).map((r) => Charge.strict().parse(r.charge));
    expect(charges.map((c) => [c.order_uuid, c.gross_amount])).toEqual([
      [bodies[0]?.order_uuid, 100],
      [bodies[1]?.order_uuid, 200],
      [existing.order_uuid, 300],
    ]);
    for (const c of charges) {
      expect(parseBrCode(c.copy_and_paste).valid).toBe(true);
      expect(decodePng(c.qr_code_image_base64 as string)).toBe(c.copy_and_paste);
    }
    expect(results[3]).toMatchObject({ code: 'conflict', message: expect.any(String) });
    for (const body of [...bodies, existing]) expect(await rowsFor(body.order_uuid)).toHaveLength(1);
    await settle(sellers[0] as Identity);
    expect(bodies.map((b) => eventsFor(b.order_uuid).length)).toEqual([1, 1]);
    expect(eventsFor(existing.order_uuid)).toHaveLength(1);
    // The second seller's name comes from its own identity, not the first's.
    const payload = JSON.parse(eventsFor(bodies[1]!.order_uuid)[0]!.content.toString('utf8')) as {
      seller: { name: string };
    };
    expect(payload.seller.name).toBe('Outra Loja');
  });

  it('refuses a batch without the signed identity, an empty one and one with a bad charge, making nothing', async () => {
    const body = chargeBody();
    expect((await postBatch([item(sellerIdentity(), body)], null)).status).toBe(401);
    const empty = await postBatch([]);
    expect(empty.status).toBe(400);
    expect(empty.body.data).toHaveProperty('charges');
    const bad = await postBatch([
      item(sellerIdentity(), body),
      item(sellerIdentity(), { ...chargeBody(), gross_amount: 0 }),
    ]);
    expect(bad.status).toBe(400);
    expect(bad.body.data).toHaveProperty(['charges.1.charge.gross_amount']);
    expect(await rowsFor(body.order_uuid)).toHaveLength(0);
  });

  it('is served the same by express for a request the plain path leaves to it, and refuses both unsigned', async () => {
    // Served on plain node:http first (kit plain-route.ts), then by express for other shapes (here a
    // query string): both answer 401 without the identity, before the body is looked at.
    const body = chargeBody();
    const batch = JSON.stringify({ charges: [item(sellerIdentity(), body)] });
    const post = (path: string, text: string, headers: Record<string, string> = {}) =>
      fetch(`${t.system.services.payments}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: text,
      });
    for (const res of [
      await post(BATCH, batch),
      await post(BATCH, '{not json'),
      await post(`${BATCH}?x=1`, batch),
      await post(`${BATCH}?x=1`, '{not json'),
    ]) {
      expect(res.status).toBe(401);
      expect(await res.json()).toMatchObject({ code: 'unauthorized', message: expect.any(String) });
    }
    const viaExpress = await post(
      `${BATCH}?x=1`,
      batch,
      signIdentity(ORDERS_KEY, sellerIdentity(), 'POST', `${BATCH}?x=1`, batch),
    );
    expect(viaExpress.status).toBe(200);
    const { data } = (await viaExpress.json()) as {
      data: { results: Array<{ status: number; charge: unknown }> };
    };
    expect(data.results.map((r) => r.status)).toEqual([201]);
    expect(Charge.strict().parse(data.results[0]?.charge).order_uuid).toBe(body.order_uuid);
    expect(await rowsFor(body.order_uuid)).toHaveLength(1);
  });
});
