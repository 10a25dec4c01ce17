import type { ChargeRefund } from '@seller-api/contracts';
import { mirrorRefund, type OrderRefund } from './order-status';

const none = (): OrderRefund => ({
  refundStatus: null,
  refundAttempt: null,
  refundAmount: null,
  refundRequestedAt: null,
  refundUpdatedAt: null,
  refundFailureReason: null,
});

const refund = (overrides: Partial<ChargeRefund> = {}): ChargeRefund => ({
  status: 'PROCESSING',
  attempt: 1,
  amount: 15000,
  requested_at: '2026-06-15T12:00:00.000Z',
  updated_at: '2026-06-15T12:00:01.000Z',
  failure_reason: null,
  hold_seq: 0,
  ...overrides,
});

describe('mirrorRefund', () => {
  it('copies the refund payments reports, every field but the ledger instruction', () => {
    const order = none();
    mirrorRefund(order, refund({ status: 'FAILED', failure_reason: 'Saldo insuficiente', hold_seq: 1 }));
    expect(order).toEqual({
      refundStatus: 'FAILED',
      refundAttempt: 1,
      refundAmount: 15000,
      refundRequestedAt: new Date('2026-06-15T12:00:00.000Z'),
      refundUpdatedAt: new Date('2026-06-15T12:00:01.000Z'),
      refundFailureReason: 'Saldo insuficiente',
    });
  });

  it('replaces a failed refund with the next attempt, its reason gone', () => {
    const order = none();
    mirrorRefund(order, refund({ status: 'FAILED', failure_reason: 'Saldo insuficiente' }));
    mirrorRefund(
      order,
      refund({
        attempt: 2,
        requested_at: '2026-06-16T09:00:00.000Z',
        updated_at: '2026-06-16T09:00:00.000Z',
      }),
    );
    expect(order).toMatchObject({ refundStatus: 'PROCESSING', refundAttempt: 2, refundFailureReason: null });
    expect(order.refundRequestedAt?.toISOString()).toBe('2026-06-16T09:00:00.000Z');
  });

  it.each([
    ['absent (a payments of an earlier release)', undefined],
    ['null (no refund with an outcome)', null],
  ])('keeps what the order has when the refund is %s', (_what, value) => {
    const order = none();
    mirrorRefund(order, refund());
    const before = { ...order };
    mirrorRefund(order, value);
    expect(order).toEqual(before);
    expect(order.refundStatus).toBe('PROCESSING');
  });
});
