import {
  ACCOUNTS,
  checkWithdrawal,
  medHeld,
  paymentCredited,
  paymentReversed,
  sellerBalance,
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

  it('accepts a withdrawal up to the available balance and from the minimum', () => {
    expect(checkWithdrawal(1000, 1000, 100).ok).toBe(true);
    expect(checkWithdrawal(1000, 1001, 100)).toMatchObject({ ok: false, reason: 'above_available' });
    expect(checkWithdrawal(1000, 99, 100)).toMatchObject({ ok: false, reason: 'below_minimum' });
    expect(checkWithdrawal(-50, 100, 100)).toMatchObject({
      ok: false,
      message: 'Exceeds the available balance of 0 cents',
    });
  });
});
