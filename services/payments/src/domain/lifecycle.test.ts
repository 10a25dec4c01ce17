import { PaymentEvents } from '@seller-api/contracts';
import type { Transaction } from '../db/entities';
import {
  RefundRefused,
  applyMove,
  applyRefund,
  checkRefundAsk,
  decideRefusal,
  refundAlreadyAsked,
  type Moved,
} from './lifecycle';
import { newCharge } from './charges';

const NOW = new Date('2026-11-28T12:00:00Z');

/** A new PENDING charge as the service makes it (newCharge), with `fields` changed. */
function charge(fields: Partial<Transaction> = {}): Transaction {
  const made = newCharge({
    id: '282c4123-0a8d-4e04-9a59-b50fcf3d0b8e',
    owner: { sellerId: 'b1c2d3e4-f5a6-4b7c-8d9e-0f1a2b3c4d5e', environment: 'test', sellerName: 'Loja' },
    input: {
      order_uuid: '6f1d2c3b-4a5e-4f60-8a7b-9c0d1e2f3a4b',
      gross_amount: 10_000,
      expires_at: '2026-11-29T12:00:00Z',
      seller_name: null,
      debtor_name: null,
      debtor_document: null,
    },
    txid: 'T'.repeat(26),
    copyAndPaste: '000201',
    expiresAt: new Date('2026-11-29T12:00:00Z'),
    fee: { fee_amount: 349, net_amount: 9_651 },
    feeSettings: { bps: 349, fixedAmount: 0 },
    now: new Date('2026-11-28T10:00:00Z'),
  });
  return { ...made, ...fields };
}

const paid = (fields: Partial<Transaction> = {}) =>
  charge({
    status: 'APPROVED',
    chargeStatus: 'PAID',
    version: 1,
    approvedAt: new Date('2026-11-28T11:00:00Z'),
    endToEndId: `E${'1'.repeat(31)}`,
    ...fields,
  });

describe('applyMove', () => {
  it('pays a PENDING charge: payment.approved first, then the internal state, both with its headers', () => {
    const t = charge();
    const moved: Moved = [];
    const { state, messages } = applyMove(t, 'PAID', NOW, moved);
    expect(t).toMatchObject({ chargeStatus: 'PAID', status: 'APPROVED', version: 1, approvedAt: NOW });
    expect(messages.map((m) => m.routingKey)).toEqual([PaymentEvents.APPROVED, 'internal.charge.paid']);
    expect(messages[1]?.payload).toBe(state);
    expect(state).toMatchObject({ status: 'PAID', previous_status: 'PENDING', version: 1 });
    expect(messages[0]?.headers).toEqual({
      'x-seller-id': t.sellerId,
      'x-environment': 'test',
      'x-order-uuid': t.orderId,
    });
    expect(moved).toEqual([{ to: 'PAID', amount: 10_000 }]);
  });

  it('expires with the internal state alone', () => {
    const { messages } = applyMove(charge(), 'EXPIRED', NOW, []);
    expect(messages.map((m) => m.routingKey)).toEqual(['internal.charge.expired']);
  });

  it('refunds with payment.refunded and the refund time', () => {
    const t = paid();
    const { messages } = applyMove(t, 'REFUNDED', NOW, []);
    expect(t).toMatchObject({ status: 'REFUNDED', refundedAt: NOW, version: 2 });
    expect(messages.map((m) => m.routingKey)).toEqual([PaymentEvents.REFUNDED, 'internal.charge.refunded']);
  });
});

describe('applyRefund', () => {
  it('a PROCESSING refund schedules its first look-up and keeps the status', () => {
    const t = paid({ refundAskedAt: new Date('2026-11-28T11:30:00Z'), refundAttempt: 1 });
    const moved: Moved = [];
    const { state, messages } = applyRefund(
      t,
      'PROCESSING',
      NOW,
      { refundChecks: { baseMs: 1_000, maxMs: 8_000 } },
      moved,
    );
    expect(t.refundCheckAt).toEqual(new Date(NOW.getTime() + 1_000));
    expect(t.refundRequestedAt).toEqual(t.refundAskedAt);
    expect(state).toMatchObject({ status: 'PAID', previous_status: 'PAID', version: 2 });
    expect(messages.map((m) => m.routingKey)).toEqual(['internal.charge.paid']);
    expect(moved).toEqual([{ to: 'REFUND_PROCESSING', amount: 10_000 }]);
  });

  it('a FAILED refund tells the seller, before the internal state', () => {
    const t = paid({ refundAskedAt: NOW, refundAttempt: 1, refundCheckAt: NOW, refundReason: 'saldo' });
    const { messages } = applyRefund(t, 'FAILED', NOW, {}, []);
    expect(t.refundCheckAt).toBeNull();
    expect(messages.map((m) => m.routingKey)).toEqual([PaymentEvents.REFUND_FAILED, 'internal.charge.paid']);
  });
});

describe('refund asks', () => {
  it('answers a keyed retry of the refund it asked as it stands', () => {
    const t = paid({ refundAskKey: 'k1', refundStatus: 'PROCESSING' });
    expect(refundAlreadyAsked(t, 'k1')).toBe(true);
    expect(refundAlreadyAsked(t, 'k2')).toBe(false);
    expect(refundAlreadyAsked(t, null)).toBe(false);
    expect(refundAlreadyAsked({ ...t, refundStatus: 'FAILED' }, 'k1')).toBe(false);
  });

  it('asks the PSP only for a paid charge whose ask was recorded', () => {
    expect(() => checkRefundAsk(paid({ refundAskedAt: NOW }))).not.toThrow();
    expect(() => checkRefundAsk(paid({ refundAskedAt: NOW, endToEndId: null }))).toThrow(/no PSP reference/);
    expect(() => checkRefundAsk(paid({ refundAskedAt: NOW, refundStatus: 'PROCESSING' }))).toThrow(
      /already in progress/,
    );
    expect(() => checkRefundAsk(paid())).toThrow(/changed meanwhile/);
  });
});

describe('decideRefusal', () => {
  const refused = (atPsp: boolean, holdSeq: number | null, attempt = 1) => {
    const err = new RefundRefused(attempt, null, atPsp);
    err.holdSeq = holdSeq;
    return err;
  };

  it('fails the current attempt the PSP did not make', () => {
    expect(decideRefusal(paid({ refundAttempt: 1 }), refused(true, 3))).toBe('fail');
  });

  it('takes back the ask of a request the PSP refused, unless a newer request came since', () => {
    expect(decideRefusal(paid({ refundHoldSeq: 3 }), refused(false, 3))).toBe('take-back');
    expect(decideRefusal(paid({ refundHoldSeq: 4 }), refused(false, 3))).toBe('recorded');
    expect(decideRefusal(paid({ refundHoldSeq: 0 }), refused(false, null))).toBe('recorded');
  });

  it('holds a refusal the refund has moved past, and records one recorded meanwhile once', () => {
    expect(decideRefusal(paid({ refundStatus: 'PROCESSING' }), refused(true, 1))).toBe('held');
    expect(decideRefusal(paid({ refundAttempt: 2 }), refused(true, 1, 1))).toBe('held');
    expect(decideRefusal(paid({ refundStatus: 'FAILED' }), refused(true, 1))).toBe('recorded');
  });
});
