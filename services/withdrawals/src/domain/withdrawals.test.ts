import { WithdrawalEvents } from '@seller-api/contracts';
import { payoutOutcomeChanges } from './payouts';
import { decisionChanges, holdOf, newWithdrawal } from './withdrawals';
import { moveWithdrawal } from './withdrawal-state';

const NOW = new Date('2026-11-28T12:00:00Z');
const owner = { sellerId: 'seller', environment: 'test' as const };

describe('a withdrawal request', () => {
  it('holds the amount when the available balance covers it', () => {
    expect(holdOf(5_000, 5_000, 100)).toMatchObject({ kind: 'withdrawal_held' });
  });

  it('is a 409 when the balance does not cover it, a 400 below the minimum', () => {
    expect(() => holdOf(4_999, 5_000, 100)).toThrow(
      expect.objectContaining({ status: 409, code: 'insufficient_balance' }),
    );
    expect(() => holdOf(5_000, 99, 100)).toThrow(expect.objectContaining({ status: 400 }));
  });

  it('is cleared for the automatic approval only without a review reason', () => {
    const input = { amount: 500, pix_key: 'a@example.com', pix_key_type: 'email' as const };
    expect(newWithdrawal('w1', owner, 'Loja', input, [], NOW)).toMatchObject({
      id: 'w1',
      ...owner,
      status: 'PENDING',
      amount: 500,
      autoApprovable: true,
      payoutAttempts: 0,
      createdAt: NOW,
    });
    expect(newWithdrawal('w2', owner, 'Loja', input, ['new_pix_key'], NOW)).toMatchObject({
      autoApprovable: false,
      reviewReasons: ['new_pix_key'],
    });
  });
});

describe("an operator's decision", () => {
  const allowed = (from: 'PENDING' | 'APPROVED', action: 'approve' | 'deny' | 'cancel') => {
    const move = moveWithdrawal(from, action, 500);
    if (!move.ok) throw new Error(move.message);
    return move;
  };

  it('records who decided and when; a deny its reason; a cancel its own time, author and reason', () => {
    expect(decisionChanges(allowed('PENDING', 'approve'), { action: 'approve' }, 'op', NOW)).toEqual({
      status: 'APPROVED',
      decidedAt: NOW,
      decidedBy: 'op',
    });
    expect(
      decisionChanges(allowed('PENDING', 'deny'), { action: 'deny', reason: 'fraud' }, 'op', NOW),
    ).toEqual({ status: 'DENIED', decidedAt: NOW, decidedBy: 'op', denyReason: 'fraud' });
    expect(
      decisionChanges(allowed('APPROVED', 'cancel'), { action: 'cancel', reason: null }, 'op', NOW),
    ).toEqual({ status: 'CANCELED', canceledAt: NOW, canceledBy: 'op', cancelReason: null });
    expect(allowed('APPROVED', 'cancel').event).toBe(WithdrawalEvents.CANCELED);
  });
});

describe("a payout's outcome", () => {
  const w = { pixKey: 'seller@example.com', pixKeyType: 'email' as const };

  it("keeps the PSP's reference of a payment", () => {
    expect(payoutOutcomeChanges(w, { status: 'paid', reference: 'E123' }, NOW)).toEqual({
      paidAt: NOW,
      payoutReference: 'E123',
    });
  });

  it("keeps the PSP's reason for a failure without the key", () => {
    const changes = payoutOutcomeChanges(
      w,
      { status: 'failed', reason: 'key seller@example.com not found' },
      NOW,
    );
    expect(changes.failedAt).toEqual(NOW);
    expect(changes.failureReason).toContain('not found');
    expect(changes.failureReason).not.toContain('seller@example.com');
  });
});
