import {
  ACCOUNTS,
  checkRefund,
  checkWithdrawal,
  medHeld,
  paymentCredited,
  paymentReversed,
  refundHeld,
  refundReleased,
  sellerBalance,
  settleAvailable,
  totalsOf,
  withdrawalHeld,
  withdrawalPaid,
  withdrawalReleased,
} from './ledger';

const sale = { gross: 10000, fee: 399, net: 9601 };

describe('ledger entries', () => {
  it('balances every kind of entry', () => {
    for (const entry of [
      paymentCredited(sale),
      medHeld(sale),
      paymentReversed(sale, 'available'),
      paymentReversed(sale, 'held'),
      paymentReversed(sale, 'refund'),
      medHeld(sale, 'refund'),
      refundHeld(sale),
      refundReleased(sale),
      withdrawalHeld(500),
      withdrawalReleased(500),
      withdrawalPaid(500),
    ]) {
      expect(entry.lines.reduce((s, l) => s + l.amount, 0)).toBe(0);
      expect(entry.lines.length).toBeGreaterThanOrEqual(2);
    }
  });

  it('drops zero lines (a sale without fee) and refuses amounts that are not integer cents', () => {
    expect(paymentCredited({ gross: 100, fee: 0, net: 100 }).lines).toHaveLength(2);
    expect(() => withdrawalHeld(1.5)).toThrow(/integer cents/);
  });

  it('derives the public balance from the lines', () => {
    // A sale; a withdrawal of 1000 denied; one of 600 paid; one of 400 still in flight.
    const entries = [
      paymentCredited(sale),
      withdrawalHeld(1000),
      withdrawalReleased(1000),
      withdrawalHeld(600),
      withdrawalPaid(600),
      withdrawalHeld(400),
    ];
    const totals = totalsOf(entries.flatMap((e) => e.lines));
    expect(sellerBalance(totals)).toEqual({ available_amount: 8601, pending_amount: 400, currency: 'BRL' });
    expect(totals[ACCOUNTS.SELLER_PAID_OUT]).toBe(600);
  });

  it('holds a refund only when the available balance covers the net, never into debt', () => {
    expect(checkRefund(9601, sale)).toEqual({ ok: true, entry: refundHeld(sale) });
    const refused = checkRefund(9600, sale);
    expect(refused).toMatchObject({ ok: false, message: expect.stringContaining('9601') });
    expect(checkRefund(-10, sale)).toMatchObject({
      ok: false,
      message: expect.stringContaining('(0 cents)'),
    });
    // Held, then reversed from the hold: the available balance lost the net once, and no debt.
    const totals = totalsOf(
      [paymentCredited(sale), refundHeld(sale), paymentReversed(sale, 'refund')].flatMap((e) => e.lines),
    );
    expect(totals[ACCOUNTS.SELLER_AVAILABLE]).toBe(0);
    expect(totals[ACCOUNTS.SELLER_HELD_REFUND]).toBe(0);
    expect(totals[ACCOUNTS.SELLER_DEBT]).toBe(0);
    expect(Object.values(totals).every((v) => v === 0)).toBe(true);
  });

  it('accepts a withdrawal up to the available balance and from the minimum', () => {
    expect(checkWithdrawal(1000, 1000, 100).ok).toBe(true);
    expect(checkWithdrawal(1000, 1001, 100)).toMatchObject({ ok: false, reason: 'above_available' });
    expect(checkWithdrawal(1000, 99, 100)).toMatchObject({ ok: false, reason: 'below_minimum' });
    expect(checkWithdrawal(-50, 100, 100)).toMatchObject({
      ok: false,
      message: 'The available balance (0 cents) does not cover this withdrawal (100 cents).',
    });
  });

  it('never takes the available balance below zero: the shortfall becomes debt, repaid by the next credits', () => {
    // A refund of 9601 with 1000 available: 1000 comes out of the balance, 8601 is owed.
    const refund = settleAvailable(paymentReversed(sale, 'available'), { available: 1000, debt: 0 });
    expect(refund.position).toEqual({ available: 0, debt: -8601 });
    expect(refund.entry.lines).toEqual(
      expect.arrayContaining([
        { account: ACCOUNTS.SELLER_AVAILABLE, amount: -1000 },
        { account: ACCOUNTS.SELLER_DEBT, amount: -8601 },
        { account: ACCOUNTS.PLATFORM_FEES, amount: -399 },
        { account: ACCOUNTS.PSP_SETTLEMENT, amount: 10000 },
      ]),
    );
    // A sale of net 9601 repays the 8601 first; 1000 becomes available.
    const credit = settleAvailable(paymentCredited(sale), refund.position);
    expect(credit.position).toEqual({ available: 1000, debt: 0 });
    expect(credit.entry.lines).toEqual(
      expect.arrayContaining([
        { account: ACCOUNTS.SELLER_DEBT, amount: 8601 },
        { account: ACCOUNTS.SELLER_AVAILABLE, amount: 1000 },
      ]),
    );
    // A small credit only reduces the debt; nothing becomes available.
    const partial = settleAvailable(withdrawalReleased(500), { available: 0, debt: -800 });
    expect(partial.position).toEqual({ available: 0, debt: -300 });
    expect(partial.entry.lines).not.toContainEqual(
      expect.objectContaining({ account: ACCOUNTS.SELLER_AVAILABLE }),
    );
    // Without debt, an entry is left as it was.
    expect(settleAvailable(withdrawalHeld(500), { available: 600, debt: 0 }).entry).toEqual(
      withdrawalHeld(500),
    );
  });
});
