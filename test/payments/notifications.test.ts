import { randomBytes } from 'node:crypto';
import { CreatedOrder, OrderDetail, PspPixNotificationResponse } from '@seller-api/contracts';
import { call } from '../support/system';
import { useSystem } from '../support/use-system';
import { createOrder, standaloneOrder } from '../orders/fixtures';
import { waitFor } from '../support/wait';

const SECRET = 'test-psp-webhook-secret';
const t = useSystem({ env: { PSP_WEBHOOK_SECRET: SECRET }, seller: true });
let key: string;
let testKey: string;
beforeAll(() => {
  // PSP_WEBHOOK_SECRET is the live PSP's: its notifications pay live charges only.
  ({ liveKey: key, key: testKey } = t.seller);
});

async function newOrder(as = key) {
  return CreatedOrder.parse((await createOrder(t.url, as, standaloneOrder())).body.data);
}
const notify = (pix: unknown[], secret = SECRET) =>
  call(`${t.url}/psp/webhook/pix`, {
    method: 'POST',
    body: { pix },
    headers: { authorization: `Bearer ${secret}` },
  });
const paymentStatus = async (uuid: string, as = key) =>
  OrderDetail.parse((await call(`${t.url}/sellers/orders/${uuid}/`, { key: as })).body.data).payment.status;
// Unique across runs: the test database outlives a run, and an end-to-end id is applied once ever.
const e2e = () => `E12345678202611230200${randomBytes(8).toString('hex').slice(0, 11)}`;
const pixFor = (txid: string, valor = '150.00', endToEndId = e2e()) => ({
  endToEndId,
  txid,
  valor,
  horario: new Date().toISOString(),
});

describe('PSP payment notifications (POST /api/v1/psp/webhook/pix)', () => {
  it('approves the payment and pays the order; the same notification again changes nothing', async () => {
    const order = await newOrder();
    const pix = pixFor(order.pix.qr_code_id);
    const first = await notify([pix]);
    expect(first.status).toBe(200);
    expect(first.body.data).toEqual({ outcomes: ['applied'] });
    // The answer is the one the OpenAPI document declares.
    expect(PspPixNotificationResponse.safeParse(first.body).success).toBe(true);
    // Orders mirrors the PSP's payment from payments' internal event.
    await waitFor(async () => (await paymentStatus(order.uuid)) === 'PAID' || null, { what: 'order PAID' });
    const again = await notify([pix]);
    expect(again.body.data).toEqual({ outcomes: ['duplicate'] });
    expect(await paymentStatus(order.uuid)).toBe('PAID');
  });

  it('accepts fields a PSP adds, in the notification and in its items, and a query parameter: PSP input is tolerant', async () => {
    const order = await newOrder();
    const res = await call(`${t.url}/psp/webhook/pix?hmac=whatever-the-psp-appends`, {
      method: 'POST',
      body: {
        pix: [{ ...pixFor(order.pix.qr_code_id), infoPagador: 'pedido 42', gnExtras: { tarifa: '0.00' } }],
        psp_batch: 'b-1',
      },
      headers: { authorization: `Bearer ${SECRET}` },
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ outcomes: ['applied'] });
    await waitFor(async () => (await paymentStatus(order.uuid)) === 'PAID' || null, { what: 'order PAID' });
  });

  it('changes nothing for an unknown txid or a different amount, and flags the mismatch for an operator', async () => {
    const order = await newOrder();
    const res = await notify([pixFor('UNKNOWNTXID0000000000000'), pixFor(order.pix.qr_code_id, '149.99')]);
    expect(res.body.data).toEqual({ outcomes: ['unknown_txid', 'amount_mismatch'] });
    expect(await paymentStatus(order.uuid)).toBe('PENDING');
    const flagged = await t.system.payments.runtime.orm.em
      .fork()
      .execute<Array<{ outcome: string; detail: string }>>(
        `select outcome, detail from payments.psp_payments where txid = ?`,
        [order.pix.qr_code_id],
      );
    expect(flagged).toEqual([{ outcome: 'amount_mismatch', detail: 'expected 15000, received 14999' }]);
  });

  it('refuses a notification without the PSP secret, and a malformed one', async () => {
    const order = await newOrder();
    expect((await notify([pixFor(order.pix.qr_code_id)], 'wrong-secret')).status).toBe(401);
    const noAuth = await call(`${t.url}/psp/webhook/pix`, { method: 'POST', body: { pix: [] } });
    expect(noAuth.status).toBe(401);
    // Payments checks the credentials before it reads the body: broken JSON without them is a 401
    // too (the gateway, which refuses broken JSON on every route, is left out here).
    const broken = await fetch(`${t.system.services.payments}/psp/webhook/pix`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{not json',
    });
    expect(broken.status).toBe(401);
    // Not the standard's envelope: refused whole.
    const notAList = await call(`${t.url}/psp/webhook/pix`, {
      method: 'POST',
      body: { pix: 'not a list' },
      headers: { authorization: `Bearer ${SECRET}` },
    });
    expect(notAList.status).toBe(400);
    // An item the standard's schema refuses is answered `invalid`; the others of the batch are applied
    // (the PSP would only send the same batch again).
    const mixed = await notify([
      { txid: order.pix.qr_code_id, valor: '1,50' },
      pixFor('UNKNOWNTXID0000000000001'),
    ]);
    expect(mixed.status).toBe(200);
    expect(mixed.body.data).toEqual({ outcomes: ['invalid', 'unknown_txid'] });
    expect(await paymentStatus(order.uuid)).toBe('PENDING');
  });

  it('reads the standard as it is written: txid optional, lower-case t and z, 32-character e2e ids', async () => {
    const order = await newOrder();
    const withoutTxid = { ...pixFor(order.pix.qr_code_id), txid: undefined };
    const lower = { ...pixFor(order.pix.qr_code_id), horario: '2026-11-28t10:00:00.000z' };
    const res = await notify([
      withoutTxid,
      { ...pixFor(order.pix.qr_code_id), endToEndId: 'E'.repeat(35) },
      lower,
    ]);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ outcomes: ['unknown_txid', 'invalid', 'applied'] });
    await waitFor(async () => (await paymentStatus(order.uuid)) === 'PAID' || null, { what: 'order PAID' });
    const kept = await t.system.payments.runtime.orm.em
      .fork()
      .execute<Array<{ txid: string | null; outcome: string; detail: string }>>(
        `select txid, outcome, detail from payments.psp_payments where end_to_end_id = ?`,
        [withoutTxid.endToEndId],
      );
    expect(kept).toEqual([{ txid: null, outcome: 'unknown_txid', detail: 'no txid' }]);
  });

  it("never pays a test charge from the live PSP's notification: unknown there, and nothing recorded", async () => {
    const order = await newOrder(testKey);
    const res = await notify([pixFor(order.pix.qr_code_id)]);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual({ outcomes: ['unknown_txid'] });
    expect(await paymentStatus(order.uuid, testKey)).toBe('PENDING');
    const flagged = await t.system.payments.runtime.orm.em
      .fork()
      .execute<Array<{ outcome: string; detail: string }>>(
        `select outcome, detail from payments.psp_payments where txid = ?`,
        [order.pix.qr_code_id],
      );
    // Not even its end-to-end id, which a real payment of the charge's own PSP must still be able to use.
    expect(flagged).toEqual([]);
    // The sandbox still pays it: test money moves in the sandbox only.
    const paid = await call(`${t.url}/sandbox/orders/${order.uuid}/pay/`, {
      method: 'POST',
      key: testKey,
    });
    expect(paid.status).toBe(200);
    await waitFor(async () => (await paymentStatus(order.uuid, testKey)) === 'PAID' || null, {
      what: 'test order PAID in the sandbox',
    });
  });
});
