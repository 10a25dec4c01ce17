import { randomUUID } from 'node:crypto';
import { RefundHoldResponse, RefundReleaseResponse, type Identity } from '@seller-api/contracts';
import { signIdentity } from '@seller-api/service-kit';
import { callKey } from '../support/keys';
import { PaymentsChargeRefunds, type ChargeRefunds } from '../../services/withdrawals/src/clients/charges';
import { releaseFailedRefund } from '../../services/withdrawals/src/db/refund-holds';
import { RefundHoldSweep } from '../../services/withdrawals/src/jobs/refund-hold-sweep';
import { call } from '../support/system';
import { waitFor } from '../support/wait';
import {
  act,
  balance,
  fund,
  newSeller,
  useHarness,
  withdraw,
  SALE_GROSS,
  SALE_NET,
  type Seller,
} from './helpers';

/**
 * Withdrawals' refund holds (docs/finance.md, "Refunds"), called as orders calls them: what happens to
 * the reserved net when orders crashes after the reservation, when several attempts share one hold,
 * when payments refunds, and when a MED opens meanwhile.
 */

const FEE = SALE_GROSS - SALE_NET;
const RANDOM_KEY = '7d9f2c1a-4b3e-4f6a-9c2d-1e8b5a3f6d40';

const h = useHarness({ RECONCILE_GRACE_MS: '0' });
beforeAll(async () => {
  // RECONCILE_GRACE_MS 0: every hold is old enough for the sweep, which runs when a test asks.
});

const identityOf = (seller: Seller): Identity => ({
  user_id: randomUUID(),
  seller_id: seller.sellerId,
  environment: 'test',
  role: 'seller',
  seller_name: seller.email,
});

/** orders' call: reserve the order's net (with what orders knows of the charge). */
async function hold(seller: Seller, uuid: string, status = 'PAID', version = 1) {
  const path = `/internal/refund-holds/${uuid}/`;
  const body = {
    gross_amount: SALE_GROSS,
    fee_amount: FEE,
    net_amount: SALE_NET,
    charge_status: status,
    version,
  };
  return call(`${h.system.services.withdrawals}${path}`, {
    method: 'POST',
    // Signed over the bytes `call` sends (kit identity.ts).
    headers: signIdentity(
      callKey('orders', 'withdrawals'),
      identityOf(seller),
      'POST',
      path,
      JSON.stringify(body),
    ),
    body,
  });
}

/** orders' call after an attempt that certainly refunded nothing. */
async function release(seller: Seller, uuid: string, holdSeq?: number) {
  const path = `/internal/refund-holds/${uuid}/release/`;
  const body = holdSeq === undefined ? {} : { hold_seq: holdSeq };
  const res = await call(`${h.system.services.withdrawals}${path}`, {
    method: 'POST',
    headers: signIdentity(
      callKey('orders', 'withdrawals'),
      identityOf(seller),
      'POST',
      path,
      JSON.stringify(body),
    ),
    body,
  });
  expect(res.status).toBe(200);
  return RefundReleaseResponse.parse(res.body).data.released;
}

const held = async (seller: Seller, uuid: string) => {
  const res = await hold(seller, uuid);
  expect(res.status).toBe(200);
  return RefundHoldResponse.parse(res.body).data;
};

const entriesOf = async (uuid: string) =>
  (
    await h.system.withdrawals.runtime.orm.em
      .fork()
      .execute<Array<{ kind: string }>>(
        `select kind from withdrawals.ledger_entries where order_id = ? order by created_at, kind`,
        [uuid],
      )
  ).map((r) => r.kind);

const available = async (seller: Seller) => (await balance(h, seller.key)).available_amount;

describe('refund holds', () => {
  it('orders crashing after the reservation: a retry finds the same hold; the sweep releases it', async () => {
    const seller = await newSeller(h);
    const uuid = await fund(h, seller);
    expect(await held(seller, uuid)).toEqual({
      order_uuid: uuid,
      held: true,
      charge_status: 'PAID',
      hold_seq: 1,
    });
    expect(await available(seller)).toBe(0);
    // The same refund asked again (a retry after a lost answer): held once.
    expect((await held(seller, uuid)).held).toBe(true);
    expect(await entriesOf(uuid)).toEqual(['payment_credited', 'refund_held']);
    // A withdrawal cannot take the reserved money meanwhile.
    const w = await call(`${h.gateway.url}/finance/withdrawals/`, {
      method: 'POST',
      key: seller.key,
      body: { amount: 1000, pix_key: RANDOM_KEY, pix_key_type: 'random' },
    });
    expect(w.status).toBe(409);
    expect(w.body).toMatchObject({ code: 'insufficient_balance' });
    // No refund follows: payments' charge is still PAID, so the sweep gives the net back.
    expect(await h.system.withdrawals.refundHolds.sweep()).toContain(uuid);
    expect(await available(seller)).toBe(SALE_NET);
    expect(await entriesOf(uuid)).toEqual(['payment_credited', 'refund_held', 'refund_released']);
    expect(await h.system.withdrawals.refundHolds.sweep()).not.toContain(uuid);
  });

  it('one hold payments cannot answer for is skipped and counted; the holds behind it are swept', async () => {
    const seller = await newSeller(h);
    const first = await fund(h, seller);
    const second = await fund(h, seller);
    expect((await held(seller, first)).held).toBe(true);
    expect((await held(seller, second)).held).toBe(true);
    const real = new PaymentsChargeRefunds(h.system.services.payments, callKey('withdrawals', 'payments'));
    // The older hold's charge cannot be read (payments answering 5xx, say); read oldest first, it must
    // not stop the pass.
    const failing: ChargeRefunds = {
      refunded: (owner, orderId) =>
        orderId === first
          ? Promise.reject(new Error('payments answered 500'))
          : real.refunded(owner, orderId),
    };
    const counted = { failed: 0, unresolved: [] as number[] };
    const sweep = new RefundHoldSweep(
      h.system.withdrawals.runtime.orm,
      failing,
      { intervalMs: 0, graceMs: 0 },
      h.system.withdrawals.runtime.logger,
      { holdFailed: () => (counted.failed += 1), passFinished: (n) => counted.unresolved.push(n) },
    );
    const released = await sweep.sweep();
    expect(released).toContain(second);
    expect(released).not.toContain(first);
    expect(counted.failed).toBe(1);
    expect(counted.unresolved).toHaveLength(1);
    expect(await entriesOf(first)).toEqual(['payment_credited', 'refund_held']);
    expect(await entriesOf(second)).toEqual(['payment_credited', 'refund_held', 'refund_released']);
    // The next pass, payments answering, releases it too.
    expect(await h.system.withdrawals.refundHolds.sweep()).toContain(first);
    expect(await available(seller)).toBe(2 * SALE_NET);
  });

  it('is released by the last attempt known to have refunded nothing, not before', async () => {
    const seller = await newSeller(h);
    const uuid = await fund(h, seller);
    await held(seller, uuid);
    await held(seller, uuid);
    expect(await release(seller, uuid)).toBe(false);
    expect(await available(seller)).toBe(0);
    expect(await release(seller, uuid)).toBe(true);
    expect(await available(seller)).toBe(SALE_NET);
    // Nothing left to release.
    expect(await release(seller, uuid)).toBe(false);
    expect(await available(seller)).toBe(SALE_NET);
  });

  it('a refund the PSP did not make gives the hold back once, and never a hold reserved since', async () => {
    const seller = await newSeller(h);
    const uuid = await fund(h, seller);
    const first = await held(seller, uuid);
    const again = await held(seller, uuid);
    expect([first.hold_seq, again.hold_seq]).toEqual([1, 2]);
    const owner = { sellerId: seller.sellerId, environment: 'test' as const };
    const em = h.system.withdrawals.runtime.orm.em;
    const failed = (holdSeq: number) =>
      em
        .fork()
        .transactional((tx) =>
          releaseFailedRefund(tx, h.system.withdrawals.runtime.sql, owner, uuid, holdSeq),
        );
    // A failure payments recorded having heard of hold 1 only: hold 2 may be a refund asked since.
    expect(await failed(1)).toBe(false);
    expect(await balance(h, seller.key)).toMatchObject({ available_amount: 0 });
    // One that covers both releases the net, whole, once; the same message again finds nothing.
    expect(await failed(2)).toBe(true);
    expect(await balance(h, seller.key)).toMatchObject({ available_amount: SALE_NET });
    expect(await failed(2)).toBe(false);
    // orders' release of the attempt it was answered a refusal for adds nothing either.
    expect(await release(seller, uuid)).toBe(false);
    expect(await balance(h, seller.key)).toMatchObject({ available_amount: SALE_NET });
    // A late message of that failure after a new hold (3): not released.
    expect((await held(seller, uuid)).hold_seq).toBe(3);
    expect(await failed(2)).toBe(false);
    expect(await balance(h, seller.key)).toMatchObject({ available_amount: 0 });
    // Nor orders' late release of an attempt of the hold released before (1 or 2): only hold 3's.
    expect(await release(seller, uuid, 2)).toBe(false);
    expect(await balance(h, seller.key)).toMatchObject({ available_amount: 0 });
    expect(await release(seller, uuid, 3)).toBe(true);
    expect(await balance(h, seller.key)).toMatchObject({ available_amount: SALE_NET });
  });

  it('refuses with 409 insufficient_balance what the available balance does not cover', async () => {
    const seller = await newSeller(h);
    const uuid = await fund(h, seller);
    await withdraw(h, seller.key, { amount: 1000, pix_key: RANDOM_KEY, pix_key_type: 'random' });
    const res = await hold(seller, uuid);
    expect(res.status).toBe(409);
    expect(res.body.code).toBe('insufficient_balance');
    expect(await entriesOf(uuid)).toEqual(['payment_credited']);
    expect(await available(seller)).toBe(SALE_NET - 1000);
  });

  it('never credits what orders says: a sale the ledger has not taken yet is a 503 to retry, nothing held', async () => {
    const seller = await newSeller(h);
    await fund(h, seller);
    // An order payments never approved (or whose messages have not reached the ledger): orders' word
    // that it is PAID puts no money in the ledger, whoever holds orders' key.
    const uuid = randomUUID();
    const res = await hold(seller, uuid);
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({ code: 'service_unavailable' });
    expect(await entriesOf(uuid)).toEqual([]);
    expect(await available(seller)).toBe(SALE_NET);
    // A refund orders already saw made (a retry whose first answer was lost), ahead of the ledger:
    // answered with orders' final status, so orders asks payments again, never as "not refundable".
    const ahead = randomUUID();
    const refunded = await hold(seller, ahead, 'REFUNDED', 99);
    expect(RefundHoldResponse.parse(refunded.body).data).toEqual({
      order_uuid: ahead,
      held: false,
      charge_status: 'REFUNDED',
    });
    expect(await entriesOf(ahead)).toEqual([]);
    // A sale in the balance is held from the ledger's own record, whatever amounts orders sends.
    const paid = await fund(h, seller);
    expect((await held(seller, paid)).held).toBe(true);
    expect(await entriesOf(paid)).toEqual(['payment_credited', 'refund_held']);
    expect(await available(seller)).toBe(SALE_NET);
  });

  it('answers 404 for another seller’s order, and holds nothing for an order not PAID', async () => {
    const owner = await newSeller(h);
    const other = await newSeller(h);
    const uuid = await fund(h, owner);
    expect((await hold(other, uuid)).status).toBe(404);
    const pending = randomUUID();
    const res = await hold(owner, pending, 'PENDING');
    expect(RefundHoldResponse.parse(res.body).data).toEqual({
      order_uuid: pending,
      held: false,
      charge_status: 'PENDING',
    });
  });

  it('a refund payments made is never released: the reversal takes the net from the hold', async () => {
    const seller = await newSeller(h);
    const uuid = await fund(h, seller);
    await held(seller, uuid);
    // The refund made without orders' answer (it crashed after payments' commit).
    const path = `/internal/charges/${uuid}/refund/`;
    const made = await call(`${h.system.services.payments}${path}`, {
      method: 'POST',
      headers: signIdentity(callKey('orders', 'payments'), identityOf(seller), 'POST', path),
    });
    expect(made.status).toBe(200);
    expect(await h.system.withdrawals.refundHolds.sweep()).not.toContain(uuid);
    await waitFor(async () => (await entriesOf(uuid)).includes('payment_reversed'), { what: 'reversal' });
    expect(await entriesOf(uuid)).toEqual(['payment_credited', 'refund_held', 'payment_reversed']);
    expect(await available(seller)).toBe(0);
    expect(await h.system.withdrawals.refundHolds.sweep()).not.toContain(uuid);
  });

  it('a MED opened during the hold moves the net to the MED hold', async () => {
    const seller = await newSeller(h);
    const uuid = await fund(h, seller);
    await held(seller, uuid);
    await act(h, seller.key, `/sandbox/orders/${uuid}/med/`);
    await waitFor(async () => (await entriesOf(uuid)).includes('med_held'), { what: 'MED hold' });
    expect(await entriesOf(uuid)).toEqual(['payment_credited', 'refund_held', 'med_held']);
    const rows = await h.system.withdrawals.runtime.orm.em
      .fork()
      .execute<Array<{ account: string; amount: string }>>(
        `select account, amount from withdrawals.ledger_balances where seller_id = ? and environment = 'test'`,
        [seller.sellerId],
      );
    const amounts = Object.fromEntries(rows.map((r) => [r.account, Number(r.amount)]));
    expect(amounts).toMatchObject({ seller_available: 0, seller_held_refund: 0, seller_held_med: SALE_NET });
    expect(amounts.seller_debt ?? 0).toBe(0);
    expect(await h.system.withdrawals.refundHolds.sweep()).not.toContain(uuid);
  });
});
