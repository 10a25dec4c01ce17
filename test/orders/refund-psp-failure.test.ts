import { CreatedOrder, OrderDetail } from '@seller-api/contracts';
import { apiPixPspEnv } from '../support/psp-simulator';
import { call } from '../support/system';
import { waitFor } from '../support/wait';
import {
  balance,
  balanceBecomes,
  newSeller,
  requestWithdrawal,
  useHarness,
  SALE_NET,
} from '../withdrawals/helpers';
import { createOrder, standaloneOrder } from './fixtures';

/*
 * A seller's refund the PSP does not make gives its reservation back (docs/finance.md, "Refunds"): the
 * test environment's PSP is a simulator (PSP_TEST_*) whose refunds can be refused or go unanswered.
 */

const WEBHOOK_SECRET = 'refund-failure-webhook-secret-0123';
const h = useHarness(
  ({ psp }) => ({
    ...apiPixPspEnv(psp, 'test', {
      webhookSecret: WEBHOOK_SECRET,
      pixKey: 'pix-homologation@seller-api.example',
    }),
    PSP_TEST_TIMEOUT_MS: '300',
    // The sweep of refund holds runs when the test asks.
    RECONCILE_GRACE_MS: '0',
  }),
  { psp: { clientId: 'homologation-client', clientSecret: 'homologation-secret' } },
);

const ledger = () => h.system.withdrawals.runtime.orm.em.fork();
const entriesOf = async (uuid: string) =>
  (
    await ledger().execute<Array<{ kind: string }>>(
      `select kind from withdrawals.ledger_entries where order_id = ? order by created_at, kind`,
      [uuid],
    )
  ).map((r) => r.kind);

/** The end-to-end id each order was paid with at the simulator. */
const paidWith = new Map<string, string>();

/** A test order paid through the simulator, credited to the seller. */
async function paidOrder(key: string): Promise<string> {
  const res = await createOrder(h.gateway.url, key, standaloneOrder());
  if (res.status !== 201) throw new Error(`order: ${res.status} ${res.text}`);
  const order = CreatedOrder.parse(res.body.data);
  const before = (await balance(h, key)).available_amount;
  const paid = await h.psp.pay(order.pix.qr_code_id, {
    webhookUrl: `${h.gateway.url}/psp/webhook`,
    secret: WEBHOOK_SECRET,
  });
  if (paid.status !== 200) throw new Error(`pay: ${paid.status}`);
  paidWith.set(order.uuid, paid.endToEndId);
  await balanceBecomes(h, key, { available_amount: before + SALE_NET });
  return order.uuid;
}

const status = async (key: string, uuid: string) =>
  OrderDetail.parse((await call(`${h.gateway.url}/sellers/orders/${uuid}/`, { key })).body.data).payment
    .status;

const refund = (key: string, uuid: string, idempotencyKey?: string) =>
  call(`${h.gateway.url}/sellers/orders/${uuid}/refund/`, {
    method: 'POST',
    key,
    headers: idempotencyKey ? { 'idempotency-key': idempotencyKey } : {},
  });

/** The seller's `seller_held_refund` balance. */
const heldRefund = async (sellerId: string) => {
  const rows = await ledger().execute<Array<{ amount: string }>>(
    `select coalesce(sum(amount), 0) as amount from withdrawals.ledger_lines
     where seller_id = ? and account = 'seller_held_refund'`,
    [sellerId],
  );
  return Number(rows[0]?.amount);
};

describe('a refund the PSP does not make', () => {
  it('refused by the PSP: 503, and the hold is given back at once', async () => {
    const seller = await newSeller(h);
    const uuid = await paidOrder(seller.key);
    h.psp.refundStatus = 'NAO_REALIZADO';
    let res: Awaited<ReturnType<typeof refund>>;
    try {
      res = await refund(seller.key, uuid);
    } finally {
      h.psp.refundStatus = 'DEVOLVIDO';
    }
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({
      code: 'service_unavailable',
      message: expect.stringMatching(/^The PSP did not make the refund: Conta do pagador encerrada/),
    });
    expect(await status(seller.key, uuid)).toBe('PAID');
    // Released before the answer: the balance read right after it has the net back.
    expect(await balance(h, seller.key)).toMatchObject({ available_amount: SALE_NET, pending_amount: 0 });
    expect(await entriesOf(uuid)).toEqual(['payment_credited', 'refund_held', 'refund_released']);

    // The money is the seller's again: it can be withdrawn in full.
    const w = await requestWithdrawal(h, seller.key, {
      amount: SALE_NET,
      pix_key: 'maria@example.com',
      pix_key_type: 'email',
    });
    expect(w.status).toBe(201);
  });

  it('unanswered by the PSP: the hold stays (it may have refunded); a retry completes the refund', async () => {
    const seller = await newSeller(h);
    const uuid = await paidOrder(seller.key);
    h.psp.hangNext(1, 'PUT');
    const res = await refund(seller.key, uuid);
    expect(res.status).toBe(503);
    expect(await status(seller.key, uuid)).toBe('PAID');
    // Held, not released: the PSP's outcome is unknown.
    expect(await balance(h, seller.key)).toMatchObject({ available_amount: 0 });
    expect(await entriesOf(uuid)).toEqual(['payment_credited', 'refund_held']);
    // Payments recorded that the refund was asked: the sweep keeps the hold for an operator.
    expect(await h.system.withdrawals.refundHolds.sweep()).not.toContain(uuid);
    expect(await entriesOf(uuid)).toEqual(['payment_credited', 'refund_held']);
    expect(await balance(h, seller.key)).toMatchObject({ available_amount: 0 });

    // The operator's (or the seller's) retry asks the PSP again with the same refund id.
    const retried = await refund(seller.key, uuid);
    expect(retried.status).toBe(200);
    expect(await status(seller.key, uuid)).toBe('REFUNDED');
    await waitFor(async () => ((await entriesOf(uuid)).includes('payment_reversed') ? true : null), {
      what: 'the reversal',
    });
    // The reversal took the net from the hold: nothing released, nothing taken twice.
    expect(await entriesOf(uuid)).toEqual(['payment_credited', 'refund_held', 'payment_reversed']);
    expect(await heldRefund(seller.sellerId)).toBe(0);
    expect(await balance(h, seller.key)).toMatchObject({ available_amount: 0 });
  });

  it('made by the PSP but its answer lost: the hold stays; a keyed retry is the same refund', async () => {
    const seller = await newSeller(h);
    const uuid = await paidOrder(seller.key);
    const key = `refund-${uuid}`;
    h.psp.loseAnswerNext(1, 'PUT');
    const res = await refund(seller.key, uuid, key);
    expect(res.status).toBe(503);
    expect(await status(seller.key, uuid)).toBe('PAID');
    expect(await h.system.withdrawals.refundHolds.sweep()).not.toContain(uuid);
    expect(await balance(h, seller.key)).toMatchObject({ available_amount: 0 });

    const retried = await refund(seller.key, uuid, key);
    expect(retried.status).toBe(200);
    expect(await status(seller.key, uuid)).toBe('REFUNDED');
    // One refund at the PSP: the retry named the refund the lost answer had made.
    expect(h.psp.refunds.filter((r) => r.endToEndId === paidWith.get(uuid))).toMatchObject([
      { status: 'DEVOLVIDO' },
    ]);
    await waitFor(async () => ((await entriesOf(uuid)).includes('payment_reversed') ? true : null), {
      what: 'the reversal',
    });
    expect(await entriesOf(uuid)).toEqual(['payment_credited', 'refund_held', 'payment_reversed']);
    expect(await heldRefund(seller.sellerId)).toBe(0);
  });

  it('a 2xx answer without a known refund status is an unknown outcome: the hold stays', async () => {
    const seller = await newSeller(h);
    const uuid = await paidOrder(seller.key);
    h.psp.refundStatus = 'EM_ANALISE' as typeof h.psp.refundStatus;
    let res: Awaited<ReturnType<typeof refund>>;
    try {
      res = await refund(seller.key, uuid);
    } finally {
      h.psp.refundStatus = 'DEVOLVIDO';
    }
    expect(res.status).toBe(503);
    expect(res.body).not.toMatchObject({ message: expect.stringMatching(/did not make the refund/) });
    expect(await entriesOf(uuid)).toEqual(['payment_credited', 'refund_held']);
    expect(await balance(h, seller.key)).toMatchObject({ available_amount: 0 });
    expect(await h.system.withdrawals.refundHolds.sweep()).not.toContain(uuid);
  });

  it('refused by the PSP, then never asked again: the sweep has nothing to release', async () => {
    const seller = await newSeller(h);
    const uuid = await paidOrder(seller.key);
    h.psp.refundStatus = 'NAO_REALIZADO';
    try {
      expect((await refund(seller.key, uuid)).status).toBe(503);
    } finally {
      h.psp.refundStatus = 'DEVOLVIDO';
    }
    expect(await h.system.withdrawals.refundHolds.sweep()).not.toContain(uuid);
    expect(await entriesOf(uuid)).toEqual(['payment_credited', 'refund_held', 'refund_released']);
  });
});
