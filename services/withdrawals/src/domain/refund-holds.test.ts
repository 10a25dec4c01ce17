import type { OrderStatus } from '@seller-api/contracts';
import type { OrderFundsRow } from '../db/entities';
import {
  attemptGivenBack,
  failureReleases,
  heldAgain,
  heldFirst,
  planHold,
  released,
  staleHoldReleases,
} from './refund-holds';

const ORDER = '3f1c7a52-1d2e-4b8a-9c61-2f4d5e6a7b8c';
const NOW = new Date('2026-11-28T12:00:00Z');

/** What orders says of the charge (never applied: only the ledger's record decides). */
const known = (charge_status: OrderStatus, version: number) => ({
  gross_amount: 10_000,
  fee_amount: 500,
  net_amount: 9_500,
  charge_status,
  version,
});

const record = (over: Partial<OrderFundsRow> = {}): OrderFundsRow => ({
  orderId: ORDER,
  sellerId: 'seller',
  environment: 'test',
  grossAmount: 10_000,
  feeAmount: 500,
  netAmount: 9_500,
  chargeStatus: 'PAID',
  chargeVersion: 3,
  position: 'AVAILABLE',
  refundAttempts: 0,
  refundHeldAt: null,
  refundHoldSeq: 0,
  refundHoldFirstSeq: 0,
  updatedAt: new Date('2026-11-01T00:00:00Z'),
  ...over,
});

describe('a request for a refund hold', () => {
  it('reserves the net of a sale in the available balance, whatever orders says', () => {
    expect(planHold(record(), ORDER, known('REFUNDED', 9))).toEqual({
      kind: 'reserve',
      amounts: { gross: 10_000, fee: 500, net: 9_500 },
    });
  });

  it('counts another attempt at a refund already held', () => {
    expect(planHold(record({ position: 'REFUND_HELD' }), ORDER, known('PAID', 3))).toEqual({
      kind: 'again',
    });
  });

  it('asks for a retry when orders knows of a payment the ledger has not recorded yet', () => {
    expect(() => planHold(null, ORDER, known('PAID', 1))).toThrow(expect.objectContaining({ status: 503 }));
    const older = record({ position: 'NONE', chargeStatus: 'PENDING', chargeVersion: 1 });
    expect(() => planHold(older, ORDER, known('PAID', 2))).toThrow(expect.objectContaining({ status: 503 }));
  });

  it("echoes orders' newer status when it is not a payment, and the ledger's when nothing is held", () => {
    expect(planHold(null, ORDER, known('REFUNDED', 5))).toEqual({
      kind: 'answer',
      answer: { order_uuid: ORDER, held: false, charge_status: 'REFUNDED' },
    });
    const refunded = record({ position: 'REVERSED', chargeStatus: 'REFUNDED', chargeVersion: 5 });
    expect(planHold(refunded, ORDER, known('PAID', 3))).toEqual({
      kind: 'answer',
      answer: { order_uuid: ORDER, held: false, charge_status: 'REFUNDED' },
    });
  });
});

describe("a hold's record", () => {
  it('numbers every reservation, and a new hold starts its own range of numbers', () => {
    const first = { ...record({ refundHoldSeq: 4 }), ...heldFirst(record({ refundHoldSeq: 4 }), NOW) };
    expect(first).toMatchObject({
      position: 'REFUND_HELD',
      refundAttempts: 1,
      refundHeldAt: NOW,
      refundHoldSeq: 5,
      refundHoldFirstSeq: 5,
      updatedAt: NOW,
    });
    expect(heldAgain(first, NOW)).toEqual({ refundAttempts: 2, refundHeldAt: NOW, refundHoldSeq: 6 });
    expect(released(NOW)).toEqual({
      position: 'AVAILABLE',
      refundAttempts: 0,
      refundHeldAt: null,
      updatedAt: NOW,
    });
  });

  it('gives an attempt back, the last one releasing, never one of a hold released since', () => {
    const held = record({
      position: 'REFUND_HELD',
      refundAttempts: 2,
      refundHoldSeq: 7,
      refundHoldFirstSeq: 6,
    });
    expect(attemptGivenBack(held, 7)).toEqual({ refundAttempts: 1, release: false });
    expect(attemptGivenBack({ ...held, refundAttempts: 1 })).toEqual({ refundAttempts: 0, release: true });
    expect(attemptGivenBack(held, 5)).toBeNull();
    expect(attemptGivenBack(record(), 7)).toBeNull();
    expect(attemptGivenBack(null)).toBeNull();
  });

  it('is released by the sweep only as it was read, and by a failure only if no newer hold exists', () => {
    const at = new Date('2026-11-28T10:00:00Z');
    const held = record({ position: 'REFUND_HELD', refundHeldAt: at, refundHoldSeq: 3 });
    expect(staleHoldReleases(held, new Date(at))).toBe(true);
    expect(staleHoldReleases({ ...held, refundHeldAt: NOW }, at)).toBe(false);
    expect(staleHoldReleases(null, at)).toBe(false);
    expect(failureReleases(held, 3)).toBe(true);
    expect(failureReleases(held, 2)).toBe(false);
    expect(failureReleases(record(), 9)).toBe(false);
  });
});
