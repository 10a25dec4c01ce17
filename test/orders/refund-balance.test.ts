import { randomUUID } from 'node:crypto';
import { OrderDetail } from '@seller-api/contracts';
import { call } from '../support/system';
import { waitFor } from '../support/wait';
import { createOrder, standaloneOrder } from './fixtures';
import {
  balance,
  fund,
  newSeller,
  requestWithdrawal,
  useHarness,
  withdraw,
  SALE_NET,
  type Seller,
} from '../withdrawals/helpers';

/**
 * A seller's refund of a PAID order needs an available balance that covers the order's net
 * (docs/finance.md, "Refunds"): the net is reserved in the ledger before the PSP is asked, so a refund of money
 * already withdrawn is a 409 `insufficient_balance` that moves nothing, and a refund racing a
 * withdrawal (or another refund) cannot spend the same money twice.
 */

const RANDOM_KEY = '7d9f2c1a-4b3e-4f6a-9c2d-1e8b5a3f6d40';

const h = useHarness();

const ledger = () => h.system.withdrawals.runtime.orm.em.fork();

const refund = (seller: Seller, uuid: string, headers: Record<string, string> = {}) =>
  call(`${h.gateway.url}/sellers/orders/${uuid}/refund/`, { method: 'POST', key: seller.key, headers });

async function orderStatus(seller: Seller, uuid: string) {
  const res = await call(`${h.gateway.url}/sellers/orders/${uuid}/`, { key: seller.key });
  return OrderDetail.parse(res.body.data).payment.status;
}

/** The kinds of the ledger entries of one order, in the order they were posted. */
async function entriesOf(uuid: string): Promise<string[]> {
  const rows = await ledger().execute<Array<{ kind: string }>>(
    `select kind from withdrawals.ledger_entries where order_id = ? order by created_at, kind`,
    [uuid],
  );
  return rows.map((r) => r.kind);
}

/** Every balance row of the seller's test environment, by account. */
async function accounts(seller: Seller): Promise<Record<string, number>> {
  const rows = await ledger().execute<Array<{ account: string; amount: string }>>(
    `select account, amount from withdrawals.ledger_balances where seller_id = ? and environment = 'test'`,
    [seller.sellerId],
  );
  return Object.fromEntries(rows.map((r) => [r.account, Number(r.amount)]));
}

/** Waits until payments' REFUNDED messages reached the ledger: the order's net left its refund hold. */
const reversed = (uuid: string) =>
  waitFor(async () => (await entriesOf(uuid)).includes('payment_reversed'), {
    what: `the reversal of ${uuid}`,
  });

describe('a seller refund', () => {
  it('is refused with 409 insufficient_balance when the seller withdrew the money, and moves nothing', async () => {
    const seller = await newSeller(h);
    const uuid = await fund(h, seller);
    await withdraw(h, seller.key, { amount: SALE_NET, pix_key: RANDOM_KEY, pix_key_type: 'random' });
    const before = await accounts(seller);

    const res = await refund(seller, uuid);
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({
      code: 'insufficient_balance',
      message: expect.stringContaining('14401'),
    });
    // A keyed attempt is refused the same way, and nothing is stored for its key.
    const key = randomUUID();
    expect((await refund(seller, uuid, { 'idempotency-key': key })).body.code).toBe('insufficient_balance');
    expect((await refund(seller, uuid, { 'idempotency-key': key })).body.code).toBe('insufficient_balance');

    expect(await orderStatus(seller, uuid)).toBe('PAID');
    expect(await entriesOf(uuid)).toEqual(['payment_credited']);
    expect(await accounts(seller)).toEqual(before);
    expect(before.seller_debt ?? 0).toBe(0);
    expect(await balance(h, seller.key)).toMatchObject({ available_amount: 0, pending_amount: SALE_NET });
  });

  it('with enough balance, refunds: the available balance drops by the net at once, and no debt', async () => {
    const seller = await newSeller(h);
    const uuid = await fund(h, seller);
    await fund(h, seller);
    expect((await balance(h, seller.key)).available_amount).toBe(2 * SALE_NET);

    const res = await refund(seller, uuid);
    expect(res.status).toBe(200);
    expect(await orderStatus(seller, uuid)).toBe('REFUNDED');
    // The hold is taken before the PSP is asked: the balance read right after the 200 shows it.
    expect((await balance(h, seller.key)).available_amount).toBe(SALE_NET);

    await reversed(uuid);
    expect(await entriesOf(uuid)).toEqual(['payment_credited', 'refund_held', 'payment_reversed']);
    const after = await accounts(seller);
    expect(after).toMatchObject({ seller_available: SALE_NET, seller_held_refund: 0 });
    expect(after.seller_debt ?? 0).toBe(0);
    // A refund once made is not made again.
    const again = await refund(seller, uuid);
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ code: 'conflict', message: expect.stringContaining('REFUNDED') });
    expect((await balance(h, seller.key)).available_amount).toBe(SALE_NET);
  });

  it('a keyed retry is answered again without holding the money twice', async () => {
    const seller = await newSeller(h);
    const uuid = await fund(h, seller);
    await fund(h, seller);
    const key = randomUUID();
    const first = await refund(seller, uuid, { 'idempotency-key': key });
    expect(first.status).toBe(200);
    const again = await refund(seller, uuid, { 'idempotency-key': key });
    expect(again.status).toBe(200);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    await reversed(uuid);
    const third = await refund(seller, uuid, { 'idempotency-key': key });
    expect(third.headers.get('idempotent-replayed')).toBe('true');
    expect((await entriesOf(uuid)).filter((k) => k === 'refund_held')).toHaveLength(1);
    expect(await accounts(seller)).toMatchObject({ seller_available: SALE_NET, seller_held_refund: 0 });
  });

  it('refuses a PENDING order as before, without touching the balance', async () => {
    const seller = await newSeller(h);
    await fund(h, seller);
    const created = await createOrder(h.gateway.url, seller.key, standaloneOrder());
    const uuid = (created.body.data as { uuid: string }).uuid;
    const res = await refund(seller, uuid);
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({
      code: 'conflict',
      message: 'Only a PAID order can be refunded; this order is PENDING.',
    });
    expect((await balance(h, seller.key)).available_amount).toBe(SALE_NET);
  });
});

describe('under concurrency', () => {
  it('a refund racing a withdrawal of the same money: exactly one of them succeeds', async () => {
    for (let round = 0; round < 3; round += 1) {
      const seller = await newSeller(h);
      const uuid = await fund(h, seller);
      const [refunded, withdrawn] = await Promise.all([
        refund(seller, uuid),
        requestWithdrawal(h, seller.key, { amount: SALE_NET, pix_key: RANDOM_KEY, pix_key_type: 'random' }),
      ]);
      const outcome = [refunded.status, withdrawn.status];
      expect([
        [200, 409],
        [409, 201],
      ]).toContainEqual(outcome);
      // Whichever lost, it lost for the same reason and with the same code (docs/errors.md).
      const loser = refunded.status === 409 ? refunded : withdrawn;
      expect(loser.body.code).toBe('insufficient_balance');
      if (refunded.status === 200) await reversed(uuid);
      const after = await accounts(seller);
      // The money went one way only, and nothing was taken into debt.
      expect(after.seller_available).toBe(0);
      expect(after.seller_debt ?? 0).toBe(0);
      expect(after.seller_withdrawals_pending ?? 0).toBe(withdrawn.status === 201 ? SALE_NET : 0);
      expect(await orderStatus(seller, uuid)).toBe(refunded.status === 200 ? 'REFUNDED' : 'PAID');
    }
  });

  it('two refunds racing for the same money: one succeeds, the other is 409 insufficient_balance', async () => {
    const seller = await newSeller(h);
    const first = await fund(h, seller);
    const second = await fund(h, seller);
    await withdraw(h, seller.key, { amount: SALE_NET, pix_key: RANDOM_KEY, pix_key_type: 'random' });
    const answers = await Promise.all([refund(seller, first), refund(seller, second)]);
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409]);
    expect(answers.find((a) => a.status === 409)?.body.code).toBe('insufficient_balance');
    const made = answers[0]?.status === 200 ? first : second;
    await reversed(made);
    const after = await accounts(seller);
    expect(after).toMatchObject({ seller_available: 0, seller_held_refund: 0 });
    expect(after.seller_debt ?? 0).toBe(0);
  });
});
