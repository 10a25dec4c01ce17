import type { ChargeRefund, ChargeState } from '@seller-api/contracts';
import { refundMessage } from './refund';

const state = (status: ChargeState['status'], refund?: Partial<ChargeRefund> | null): ChargeState => ({
  order_uuid: '7d5c7069-1b2a-4c3d-8e9f-0a1b2c3d4e5f',
  status,
  previous_status: 'PAID',
  version: 3,
  paid_at: '2026-06-15T12:00:00.000Z',
  changed_at: '2026-06-15T12:05:00.000Z',
  ...(refund === undefined
    ? {}
    : {
        refund: refund && {
          status: 'PROCESSING',
          attempt: 1,
          amount: 15000,
          requested_at: '2026-06-15T12:05:00.000Z',
          updated_at: '2026-06-15T12:05:00.000Z',
          failure_reason: null,
          hold_seq: 0,
          ...refund,
        },
      }),
});

describe('refundMessage', () => {
  it('says the refund is made only when the order is REFUNDED', () => {
    expect(refundMessage(state('REFUNDED', { status: 'REFUNDED' }))).toBe('Order refunded.');
  });

  it('says a refund the PSP is still making is requested, not made', () => {
    const message = refundMessage(state('PAID', { status: 'PROCESSING' }));
    expect(message).toBe(
      'Refund requested; the PSP is processing it. The order becomes REFUNDED when the PSP confirms.',
    );
    expect(message).not.toMatch(/^Order refunded/);
  });

  it('never reads a failed refund as made', () => {
    expect(refundMessage(state('PAID', { status: 'FAILED', failure_reason: 'Conta encerrada' }))).toBe(
      'The PSP did not make the refund: Conta encerrada. The order stays PAID.',
    );
    expect(refundMessage(state('PAID', { status: 'FAILED' }))).toBe(
      'The PSP did not make the refund. The order stays PAID.',
    );
  });

  it('answers as before for a payments of an earlier release (no refund in its state)', () => {
    expect(refundMessage(state('REFUNDED'))).toBe('Order refunded.');
    expect(refundMessage(null)).toBe('Order refunded.');
  });
});
