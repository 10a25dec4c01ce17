import { randomUUID } from 'node:crypto';
import { captureEvents } from '../support/events';
import { ACCOUNT_NAMES } from '../../services/withdrawals/src/domain/ledger';
import { call } from '../support/system';
import { waitFor } from '../support/wait';
import {
  act,
  balance,
  balanceBecomes,
  fund,
  newOrder,
  newSeller,
  requestWithdrawal,
  useHarness,
  withdraw,
  SALE_NET,
} from './helpers';

/**
 * The ledger fed by payments' events, end to end: real orders paid, refunded, disputed and charged
 * back through the sandbox, the balance read through the gateway until the asynchronous feed shows it.
 */
const h = useHarness();
let payments: Awaited<ReturnType<typeof captureEvents>>;

beforeAll(async () => {
  payments = await captureEvents(
    h.system.env.AMQP_URL as string,
    h.system.env.AMQP_NAMESPACE as string,
    'payments.events',
  );
});
afterAll(() => payments.close());

// The services share one database per test file (one schema each), so any runtime's pool reads the journal.
const db = () => h.system.payments.runtime.orm.em.fork();

async function ledgerRows(orderId: string) {
  return db().execute<Array<{ kind: string; account: string; amount: string }>>(
    `select e.kind, l.account, l.amount from withdrawals.ledger_entries e
         join withdrawals.ledger_lines l on l.entry_id = e.id
        where e.order_id = ? order by e.created_at, l.id`,
    [orderId],
  );
}

describe('ledger fed by payments', () => {
  it('starts at zero for a new seller', async () => {
    const seller = await newSeller(h);
    expect(await balance(h, seller.key)).toEqual({ available_amount: 0, pending_amount: 0, currency: 'BRL' });
  });

  it('credits the net of an approved payment once, with a balanced journal entry', async () => {
    const seller = await newSeller(h);
    const order = await fund(h, seller);
    // Both approval signals (payment.approved and internal.charge.paid) have been consumed...
    const signals = await payments.waitFor(
      (m) =>
        m.headers['x-order-uuid'] === order &&
        (m.routingKey === 'payment.approved' || m.routingKey === 'internal.charge.paid'),
      2,
    );
    await waitFor(async () => {
      const rows = await db().execute<Array<{ n: string }>>(
        `select count(*) as n from withdrawals.processed_messages where message_id = any(?::text[])`,
        [`{${signals.map((m) => m.messageId).join(',')}}`],
      );
      return Number(rows[0]?.n) === 2;
    });
    // ...and the order was credited once.
    expect(await balance(h, seller.key)).toEqual({
      available_amount: SALE_NET,
      pending_amount: 0,
      currency: 'BRL',
    });
    const rows = await ledgerRows(order);
    expect(rows.map((r) => r.kind)).toEqual(['payment_credited', 'payment_credited', 'payment_credited']);
    expect(Object.fromEntries(rows.map((r) => [r.account, Number(r.amount)]))).toEqual({
      psp_settlement: -15000,
      platform_fees: 599,
      seller_available: SALE_NET,
    });
  });

  it('keeps the balance of each environment and seller apart', async () => {
    const seller = await newSeller(h);
    const other = await newSeller(h);
    await fund(h, seller);
    expect((await balance(h, other.key)).available_amount).toBe(0);
    const live = await newSeller(h, 'live');
    expect((await balance(h, live.key)).available_amount).toBe(0);
  });

  it('debits a seller refund', async () => {
    const seller = await newSeller(h);
    const order = await fund(h, seller);
    await act(h, seller.key, `/sellers/orders/${order}/refund/`);
    // The net left the available balance before the PSP was asked (its refund hold)...
    expect((await balance(h, seller.key)).available_amount).toBe(0);
    // ...and the reversal takes it from the hold.
    const rows = await waitFor(async () => {
      const r = await ledgerRows(order);
      return r.some((x) => x.kind === 'payment_reversed') ? r : null;
    });
    expect([...new Set(rows.map((r) => r.kind))]).toEqual([
      'payment_credited',
      'refund_held',
      'payment_reversed',
    ]);
    expect(rows.some((r) => r.account === 'seller_debt')).toBe(false);
  });

  it('debits a chargeback', async () => {
    const seller = await newSeller(h);
    const kept = await fund(h, seller);
    const order = await fund(h, seller);
    expect(kept).not.toBe(order);
    await act(h, seller.key, `/sandbox/orders/${order}/chargeback/`);
    await balanceBecomes(h, seller.key, { available_amount: SALE_NET });
  });

  it('holds the net while a MED is open and gives it back when the MED is rejected', async () => {
    const seller = await newSeller(h);
    const order = await fund(h, seller);
    await act(h, seller.key, `/sandbox/orders/${order}/med/`);
    await balanceBecomes(h, seller.key, { available_amount: 0 });
    await act(h, seller.key, `/sandbox/orders/${order}/med/resolve/`, { outcome: 'rejected' });
    await balanceBecomes(h, seller.key, { available_amount: SALE_NET });
    expect((await ledgerRows(order)).map((r) => r.kind)).toEqual(
      expect.arrayContaining(['payment_credited', 'med_held', 'med_released']),
    );
  });

  it('debits a MED decided for the payer from the hold', async () => {
    const seller = await newSeller(h);
    const order = await fund(h, seller);
    await act(h, seller.key, `/sandbox/orders/${order}/med/`);
    await balanceBecomes(h, seller.key, { available_amount: 0 });
    await act(h, seller.key, `/sandbox/orders/${order}/med/resolve/`, { outcome: 'refunded' });
    const rows = await waitFor(async () => {
      const r = await ledgerRows(order);
      return r.some((x) => x.kind === 'payment_reversed') ? r : null;
    });
    const held = rows
      .filter((r) => r.account === 'seller_held_med')
      .reduce((s, r) => s + Number(r.amount), 0);
    expect(held).toBe(0);
    expect((await balance(h, seller.key)).available_amount).toBe(0);
  });

  it('keeps the available balance at zero when money already withdrawn is charged back; the next sale repays the debt', async () => {
    const seller = await newSeller(h);
    const order = await fund(h, seller);
    await withdraw(h, seller.key, { amount: SALE_NET, pix_key: 'seller@example.com', pix_key_type: 'email' });
    // The seller cannot refund money already withdrawn (test/orders/refund-balance.test.ts); the
    // payer's bank can take it back.
    await act(h, seller.key, `/sandbox/orders/${order}/chargeback/`);
    const rows = await waitFor(async () => {
      const r = await ledgerRows(order);
      return r.some((x) => x.kind === 'payment_reversed') ? r : null;
    });
    // The reversal could not come out of the available balance (0): the seller owes it.
    const reversal = rows.filter((r) => r.kind === 'payment_reversed');
    expect(reversal.find((r) => r.account === 'seller_debt')?.amount).toBe(String(-SALE_NET));
    expect(reversal.some((r) => r.account === 'seller_available')).toBe(false);
    expect(await balance(h, seller.key)).toMatchObject({ available_amount: 0, pending_amount: SALE_NET });
    const refused = await requestWithdrawal(h, seller.key, {
      amount: 100,
      pix_key: 'seller@example.com',
      pix_key_type: 'email',
    });
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ code: 'insufficient_balance' });

    // The next sale first repays what is owed; only the rest becomes available.
    const next = await newOrder(h, seller.key, 20000);
    const detail = await call(`${h.gateway.url}/sellers/orders/${next}/`, { key: seller.key });
    const nextNet = (detail.body.data as { payment: { net_amount: number } }).payment.net_amount;
    await act(h, seller.key, `/sandbox/orders/${next}/pay/`);
    await balanceBecomes(h, seller.key, { available_amount: nextNet - SALE_NET });
    const credit = await ledgerRows(next);
    expect(credit.find((r) => r.account === 'seller_debt')?.amount).toBe(String(SALE_NET));
    expect(credit.find((r) => r.account === 'seller_available')?.amount).toBe(String(nextNet - SALE_NET));
  });

  it('credits nothing for an order that expires unpaid', async () => {
    const seller = await newSeller(h);
    const pending = await newOrder(h, seller.key);
    await act(h, seller.key, `/sandbox/orders/${pending}/expire/`);
    // The ledger saw the expiry (it keeps what it knows of every order) and posted nothing for it.
    await waitFor(async () => {
      const [row] = await db().execute<Array<{ charge_status: string; position: string }>>(
        `select charge_status, position from withdrawals.order_funds where order_id = ?`,
        [pending],
      );
      return row?.charge_status === 'EXPIRED' ? row : null;
    });
    expect(await ledgerRows(pending)).toEqual([]);
    expect((await balance(h, seller.key)).available_amount).toBe(0);
  });

  it('lets the database store every account the ledger knows', async () => {
    const [row] = await db().execute<Array<{ definition: string }>>(
      `select pg_get_constraintdef(oid) as definition from pg_constraint where conname = 'ledger_lines_account_check'`,
    );
    for (const account of ACCOUNT_NAMES) expect(row?.definition).toContain(`'${account}'`);
  });

  it('is enforced by the database: an unbalanced entry is refused at commit, and lines are never edited', async () => {
    const seller = await newSeller(h);
    const order = await fund(h, seller);
    const entryId = randomUUID();
    const unbalanced = db().transactional(async (tx) => {
      await tx.execute(
        `insert into withdrawals.ledger_entries (id, seller_id, environment, kind, order_id) values (?, ?, 'test', 'payment_credited', ?)`,
        [entryId, seller.sellerId, order],
      );
      await tx.execute(
        `insert into withdrawals.ledger_lines (entry_id, seller_id, environment, account, amount) values (?, ?, 'test', 'seller_available', 100)`,
        [entryId, seller.sellerId],
      );
    });
    await expect(unbalanced).rejects.toThrow(/does not balance/);
    await expect(
      db().execute(`update withdrawals.ledger_lines set amount = amount + 1 where seller_id = ?`, [
        seller.sellerId,
      ]),
    ).rejects.toThrow(/append-only/);
    await expect(
      db().execute(`delete from withdrawals.ledger_lines where seller_id = ?`, [seller.sellerId]),
    ).rejects.toThrow(/append-only/);
    expect((await balance(h, seller.key)).available_amount).toBe(SALE_NET);
  });
});
