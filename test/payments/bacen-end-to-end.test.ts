import { randomUUID } from 'node:crypto';
import { Charge, CreatedOrder, OrderDetail, type Identity } from '@seller-api/contracts';
import { signIdentity } from '@seller-api/service-kit';
import { callKey } from '../support/keys';
import { checkBrCode, decodeQrPng } from '../support/pix';
import { apiPixPspEnv } from '../support/psp-simulator';
import { call } from '../support/system';
import { useSystem } from '../support/use-system';
import { waitFor } from '../support/wait';
import { createOrder, standaloneOrder } from '../orders/fixtures';

const WEBHOOK_SECRET = 'bacen-e2e-webhook-secret-0123';
const t = useSystem({
  psp: { clientId: 'seller-api', clientSecret: 's3cret-client' },
  env: ({ psp }) => ({
    ...apiPixPspEnv(psp, 'live', { webhookSecret: WEBHOOK_SECRET, pixKey: 'pix@seller-api.example' }),
    PIX_MERCHANT_NAME: 'Loja Exemplo',
    PIX_MERCHANT_CITY: 'Recife',
  }),
  seller: true,
});
let key: string;
beforeAll(() => {
  // PIX_PSP is the live environment's PSP: test keys stay in the sandbox (test-environment-psp.test.ts).
  key = t.seller.liveKey;
});

const status = async (uuid: string) =>
  OrderDetail.parse((await call(`${t.url}/sellers/orders/${uuid}/`, { key })).body.data).payment.status;

describe('bacen-api-pix against the PSP simulator, end to end', () => {
  it('asks the PSP once for a charge orders asks for twice (a call retried after a timeout)', async () => {
    const identity: Identity = {
      user_id: randomUUID(),
      seller_id: randomUUID(),
      environment: 'live',
      role: 'seller',
      seller_name: 'Loja Exemplo',
    };
    const body = {
      order_uuid: randomUUID(),
      gross_amount: 4200,
      expires_at: new Date(Date.now() + 3600_000).toISOString(),
      seller_name: 'Loja Exemplo',
      debtor_name: 'Maria Silva',
      debtor_document: '52998224725',
    };
    const ask = () =>
      call(`${t.system.services.payments}/internal/charges/`, {
        method: 'POST',
        body,
        headers: signIdentity(
          callKey('orders', 'payments'),
          identity,
          'POST',
          '/internal/charges/',
          JSON.stringify(body),
        ),
      });
    const cobs = () => t.psp.requests.filter((r) => r.method === 'PUT' && r.path.startsWith('/cob/')).length;
    const before = cobs();
    const first = await ask();
    const again = await ask();
    expect([first.status, again.status]).toEqual([201, 200]);
    expect(Charge.parse(again.body.data)).toEqual(Charge.parse(first.body.data));
    expect(cobs() - before).toBe(1);
  });

  it('charges with PUT /cob, is paid by a PSP notification, and refunds through the PSP', async () => {
    const order = CreatedOrder.parse((await createOrder(t.url, key, standaloneOrder())).body.data);
    // The charge is the PSP's: a dynamic BR Code pointing at its location, for our txid.
    const cob = t.psp.cobs.get(order.pix.qr_code_id);
    expect(cob).toBeDefined();
    expect(order.pix.qr_code_id).toMatch(/^[A-Za-z0-9]{26,35}$/);
    const { ours } = checkBrCode(order.pix.copy_and_paste);
    expect(ours.valid).toBe(true);
    expect((ours.fields['26'] as Record<string, string>)['25']).toMatch(/^pix\.sim\.example\/qr\/v2\//);
    expect(decodeQrPng(order.pix.qr_code_image_base64 as string)).toBe(order.pix.copy_and_paste);
    expect(t.psp.tokenRequests).toBe(1);

    const paid = await t.psp.pay(order.pix.qr_code_id, {
      webhookUrl: `${t.url}/psp/webhook`,
      secret: WEBHOOK_SECRET,
    });
    expect(paid.status).toBe(200);
    await waitFor(async () => (await status(order.uuid)) === 'PAID' || null, { what: 'order PAID' });

    const refund = await call(`${t.url}/sellers/orders/${order.uuid}/refund/`, { method: 'POST', key });
    expect(refund.status).toBe(200);
    expect(await status(order.uuid)).toBe('REFUNDED');
    expect(t.psp.refunds).toEqual([
      expect.objectContaining({ endToEndId: paid.endToEndId, valor: '150.00', status: 'DEVOLVIDO' }),
    ]);
  });

  it('charges a PSP that answers without pixCopiaECola: the code is built from its location', async () => {
    t.psp.cobAnswer = 'location';
    try {
      const order = CreatedOrder.parse((await createOrder(t.url, key, standaloneOrder())).body.data);
      const cob = t.psp.cobs.get(order.pix.qr_code_id);
      expect(cob).toBeDefined();
      const { ours } = checkBrCode(order.pix.copy_and_paste);
      expect(ours.valid).toBe(true);
      expect(ours.fields).toMatchObject({
        '26': { '00': 'br.gov.bcb.pix', '25': cob?.location },
        '54': cob?.valor.original,
        '59': 'Loja Exemplo',
        '60': 'Recife',
      });
      // The PSP made the charge, and so do we: it is payable.
      const paid = await t.psp.pay(order.pix.qr_code_id, {
        webhookUrl: `${t.url}/psp/webhook`,
        secret: WEBHOOK_SECRET,
      });
      expect(paid.status).toBe(200);
      await waitFor(async () => (await status(order.uuid)) === 'PAID' || null, { what: 'order PAID' });
    } finally {
      t.psp.cobAnswer = 'code';
    }
  });

  it('ignores a notification with the wrong secret', async () => {
    const order = CreatedOrder.parse((await createOrder(t.url, key, standaloneOrder())).body.data);
    const res = await t.psp.pay(order.pix.qr_code_id, {
      webhookUrl: `${t.url}/psp/webhook`,
      secret: 'not-the-secret',
    });
    expect(res.status).toBe(401);
    expect(await status(order.uuid)).toBe('PENDING');
  });
});
