import { move, refundsLatePayment } from './charge-state';

describe('charge state machine', () => {
  it.each([
    ['PENDING', 'pay', 'PAID'],
    ['PENDING', 'expire', 'EXPIRED'],
    ['PENDING', 'cancel', 'CANCELLED'],
    ['PAID', 'refund', 'REFUNDED'],
    ['PAID', 'open_med', 'MED'],
    ['MED', 'med_refunded', 'REFUNDED'],
    ['MED', 'med_rejected', 'PAID'],
    ['PAID', 'chargeback', 'CHARGEBACK'],
  ] as const)('%s --%s--> %s', (from, action, to) => {
    expect(move(from, action)).toEqual({ ok: true, from, to });
  });

  it.each([
    ['PAID', 'cancel'],
    ['PENDING', 'refund'],
    ['EXPIRED', 'pay'],
    ['REFUNDED', 'refund'],
    ['CANCELLED', 'expire'],
    ['PENDING', 'chargeback'],
    ['PAID', 'med_rejected'],
  ] as const)('refuses %s --%s--> with a message naming the current status', (from, action) => {
    const result = move(from, action);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.message).toContain(`this order is ${from}`);
  });

  it('refunds payments that arrive after expiry or cancellation only', () => {
    expect(refundsLatePayment('EXPIRED')).toBe(true);
    expect(refundsLatePayment('CANCELLED')).toBe(true);
    expect(refundsLatePayment('PAID')).toBe(false);
    expect(refundsLatePayment('PENDING')).toBe(false);
  });
});
