import { ACCOUNTS } from './ledger';
import { moveWithdrawal } from './withdrawal-state';

describe('withdrawal state machine', () => {
  it.each([
    ['PENDING', 'approve', 'APPROVED', 'withdrawal.approved', null],
    ['PENDING', 'deny', 'DENIED', 'withdrawal.denied', 'withdrawal_released'],
    ['APPROVED', 'start_payout', 'PROCESSING', 'withdrawal.processing', null],
    ['PROCESSING', 'payout_paid', 'PAID', 'withdrawal.paid', 'withdrawal_paid'],
    ['PROCESSING', 'payout_failed', 'FAILED', 'withdrawal.failed', 'withdrawal_released'],
    ['APPROVED', 'cancel', 'CANCELED', 'withdrawal.canceled', 'withdrawal_released'],
  ] as const)('%s --%s--> %s with %s', (from, action, to, event, entry) => {
    const move = moveWithdrawal(from, action, 5000);
    expect(move).toMatchObject({ ok: true, from, to, event });
    if (!move.ok) return;
    expect(move.entry?.kind ?? null).toBe(entry);
  });

  it('releases the hold to the available balance on a denial', () => {
    const move = moveWithdrawal('PENDING', 'deny', 5000);
    expect(move.ok && move.entry?.lines).toEqual([
      { account: ACCOUNTS.SELLER_WITHDRAWALS_PENDING, amount: -5000 },
      { account: ACCOUNTS.SELLER_AVAILABLE, amount: 5000 },
    ]);
  });

  it('refuses every other move, naming the current status', () => {
    expect(moveWithdrawal('PAID', 'approve', 1)).toEqual({
      ok: false,
      message: 'Only a PENDING withdrawal can be approved; this withdrawal is PAID.',
    });
    for (const status of ['APPROVED', 'DENIED', 'PROCESSING', 'PAID', 'FAILED'] as const) {
      expect(moveWithdrawal(status, 'deny', 1).ok).toBe(false);
    }
    expect(moveWithdrawal('PENDING', 'start_payout', 1).ok).toBe(false);
    expect(moveWithdrawal('APPROVED', 'payout_paid', 1).ok).toBe(false);
    expect(moveWithdrawal('FAILED', 'payout_failed', 1).ok).toBe(false);
  });

  it('cancels an APPROVED withdrawal only: once sent (PROCESSING) the money may be on its way', () => {
    for (const status of ['PENDING', 'DENIED', 'PROCESSING', 'PAID', 'FAILED', 'CANCELED'] as const) {
      expect(moveWithdrawal(status, 'cancel', 1)).toEqual({
        ok: false,
        message: `Only an APPROVED withdrawal can be canceled; this withdrawal is ${status}.`,
      });
    }
    for (const action of ['approve', 'deny', 'start_payout', 'payout_paid', 'payout_failed'] as const) {
      expect(moveWithdrawal('CANCELED', action, 1).ok).toBe(false);
    }
  });
});
