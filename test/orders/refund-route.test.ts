import { CreatedOrder, OrderDetail } from '@seller-api/contracts';
import { apiPixPspEnv } from '../support/psp-simulator';
import { call } from '../support/system';
import { waitFor } from '../support/wait';
import { balance, balanceBecomes, newSeller, useHarness, SALE_NET } from '../withdrawals/helpers';
import { createOrder, standaloneOrder } from './fixtures';

/*
 * A seller's refund as orders answers and shows it when the PSP takes its time (docs/orders.md,
 * "Refund an order"): the test environment's PSP is a simulator (PSP_TEST_*) that answers refunds
 * EM_PROCESSAMENTO and reports their end later in a notification's `devolucoes`.
 */

const WEBHOOK_SECRET = 'refund-route-webhook-secret-0123';
const PROCESSING_MESSAGE =
  'Refund requested; the PSP is processing it. The order becomes REFUNDED when the PSP confirms.';
const h = useHarness(
  ({ psp }) => ({
    ...apiPixPspEnv(psp, 'test', {
      webhookSecret: WEBHOOK_SECRET,
      pixKey: 'pix-homologation@seller-api.example',
    }),
  }),
  { psp: { clientId: 'homologation-client', clientSecret: 'homologation-secret' } },
);
afterEach(() => {
  h.psp.refundStatus = 'DEVOLVIDO';
});

/** Where the simulator sends its notifications, and the secret it adds. */
const webhook = () => ({ webhookUrl: `${h.gateway.url}/psp/webhook`, secret: WEBHOOK_SECRET });

/** A test order paid through the simulator, credited to the seller; with its end-to-end id. */
async function paidOrder(key: string): Promise<{ uuid: string; endToEndId: string }> {
  const res = await createOrder(h.gateway.url, key, standaloneOrder());
  if (res.status !== 201) throw new Error(`order: ${res.status} ${res.text}`);
  const order = CreatedOrder.parse(res.body.data);
  const before = (await balance(h, key)).available_amount;
  const paid = await h.psp.pay(order.pix.qr_code_id, webhook());
  if (paid.status !== 200) throw new Error(`pay: ${paid.status}`);
  await balanceBecomes(h, key, { available_amount: before + SALE_NET });
  return { uuid: order.uuid, endToEndId: paid.endToEndId };
}

const payment = async (key: string, uuid: string) =>
  OrderDetail.parse((await call(`${h.gateway.url}/sellers/orders/${uuid}/`, { key })).body.data).payment;

const refund = (key: string, uuid: string) =>
  call(`${h.gateway.url}/sellers/orders/${uuid}/refund/`, { method: 'POST', key });

/** The simulator's latest refund of a payment. */
const latestRefund = (endToEndId: string) => {
  const found = h.psp.refunds.filter((r) => r.endToEndId === endToEndId).at(-1);
  if (!found) throw new Error(`no refund of ${endToEndId} at the PSP`);
  return found;
};

/** Ends the payment's latest refund at the PSP and notifies it as API Pix does. */
async function settle(endToEndId: string, status: 'DEVOLVIDO' | 'NAO_REALIZADO', motivo?: string) {
  const { id } = latestRefund(endToEndId);
  h.psp.settleRefund(id, status, motivo, endToEndId);
  const sent = await h.psp.notifyRefunds([endToEndId], { ...webhook(), refundIds: [id] });
  expect(sent.status).toBe(200);
}

describe('a refund the PSP makes later', () => {
  it('answers that the PSP is processing it, keeps the order PAID, refuses a second, then REFUNDED', async () => {
    const seller = await newSeller(h);
    const { uuid, endToEndId } = await paidOrder(seller.key);
    h.psp.refundStatus = 'EM_PROCESSAMENTO';
    const res = await refund(seller.key, uuid);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ message: PROCESSING_MESSAGE });
    // Mirrored from payments' answer: read right after it.
    expect(await payment(seller.key, uuid)).toMatchObject({
      status: 'PAID',
      refund: { status: 'PROCESSING', amount: 15000, failure_reason: null },
    });

    const again = await refund(seller.key, uuid);
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({
      code: 'conflict',
      message: expect.stringMatching(/already in progress/),
    });
    expect(h.psp.refunds.filter((r) => r.endToEndId === endToEndId)).toHaveLength(1);
    // The refused second ask leaves the first one's hold: the net is still reserved.
    expect(await balance(h, seller.key)).toMatchObject({ available_amount: 0 });

    await settle(endToEndId, 'DEVOLVIDO');
    const done = await waitFor(
      async () => {
        const p = await payment(seller.key, uuid);
        return p.status === 'REFUNDED' ? p : null;
      },
      { what: 'the order REFUNDED' },
    );
    expect(done.refund).toMatchObject({ status: 'REFUNDED', amount: 15000, failure_reason: null });
  });

  it('not made by the PSP: PAID, FAILED with the reason, the net back; asked again and made', async () => {
    const seller = await newSeller(h);
    const { uuid, endToEndId } = await paidOrder(seller.key);
    h.psp.refundStatus = 'EM_PROCESSAMENTO';
    expect((await refund(seller.key, uuid)).body).toEqual({ message: PROCESSING_MESSAGE });
    const first = (await payment(seller.key, uuid)).refund;

    await settle(endToEndId, 'NAO_REALIZADO', 'Conta transacional do pagador encerrada');
    const failed = await waitFor(
      async () => {
        const p = await payment(seller.key, uuid);
        return p.refund?.status === 'FAILED' ? p : null;
      },
      { what: 'the refund FAILED' },
    );
    expect(failed).toMatchObject({
      status: 'PAID',
      refund: {
        status: 'FAILED',
        requested_at: first?.requested_at,
        failure_reason: 'Conta transacional do pagador encerrada',
      },
    });
    await balanceBecomes(h, seller.key, { available_amount: SALE_NET });

    h.psp.refundStatus = 'DEVOLVIDO';
    const retried = await refund(seller.key, uuid);
    expect(retried.status).toBe(200);
    expect(retried.body).toEqual({ message: 'Order refunded.' });
    expect(await payment(seller.key, uuid)).toMatchObject({
      status: 'REFUNDED',
      refund: { status: 'REFUNDED', failure_reason: null },
    });
    // A second refund at the PSP, under its own id.
    const asked = h.psp.refunds.filter((r) => r.endToEndId === endToEndId);
    expect(asked.map((r) => r.status)).toEqual(['NAO_REALIZADO', 'DEVOLVIDO']);
    expect(new Set(asked.map((r) => r.id)).size).toBe(2);
  });

  it('refused in the PSP answer: 503 with the reason, and the detail shows the refund FAILED', async () => {
    const seller = await newSeller(h);
    const { uuid } = await paidOrder(seller.key);
    h.psp.refundStatus = 'NAO_REALIZADO';
    const res = await refund(seller.key, uuid);
    expect(res.status).toBe(503);
    const failed = await waitFor(
      async () => {
        const p = await payment(seller.key, uuid);
        return p.refund?.status === 'FAILED' ? p : null;
      },
      { what: 'the refund FAILED' },
    );
    expect(failed).toMatchObject({ status: 'PAID', refund: { failure_reason: expect.any(String) } });
    expect(res.body.message).toContain(failed.refund?.failure_reason);
  });
});
