import { ArrayType, BigIntType, EntitySchema } from '@mikro-orm/core';
import type { Environment, PixKeyType, ReviewReason, WithdrawalStatus } from '@seller-api/contracts';
import type { ChargeStatus, FundsPosition } from '../domain/order-funds';

// Amounts are integer cents in bigint columns, read as numbers (they stay far below 2^53).
const money = (nullable = false) => ({ type: new BigIntType('number'), nullable });
const timestamp = (nullable = false) => ({ type: 'Date', columnType: 'timestamptz(3)', nullable });

export interface WithdrawalRow {
  id: string;
  sellerId: string;
  environment: Environment;
  /** The seller's display name when the withdrawal was requested, for `seller.name` in events. */
  sellerName: string;
  amount: number;
  /** Stored in clear for the payout (a CPF as 11 digits); every response and event masks it. */
  pixKey: string;
  pixKeyType: PixKeyType;
  status: WithdrawalStatus;
  /** When it was requested: `requested_at`, and the list's keyset. */
  createdAt: Date;
  decidedAt: Date | null;
  /** The operator's user id, or `auto` for an automatic approval. */
  decidedBy: string | null;
  denyReason: string | null;
  /** When the payout was last handed to the PSP: a lease, so one replica at a time asks about it. */
  processingAt: Date | null;
  payoutAttempts: number;
  payoutReference: string | null;
  paidAt: Date | null;
  failedAt: Date | null;
  failureReason: string | null;
  /**
   * Cleared for the automatic approval by its request (docs/finance.md, "Payout controls"): what the
   * rolling 24 h caps count. False for a withdrawal that waits for an operator, and for rows of before.
   */
  autoApprovable: boolean;
  /** Why it waits for an operator; empty when cleared for the automatic approval. */
  reviewReasons: ReviewReason[];
  canceledAt: Date | null;
  /** The operator who canceled it (APPROVED, not yet sent). */
  canceledBy: string | null;
  cancelReason: string | null;
}

export const WithdrawalSchema = new EntitySchema<WithdrawalRow>({
  name: 'Withdrawal',
  tableName: 'withdrawals',
  properties: {
    id: { type: 'uuid', primary: true },
    sellerId: { type: 'uuid' },
    environment: { type: 'string' },
    sellerName: { type: 'string' },
    amount: money(),
    pixKey: { type: 'string' },
    pixKeyType: { type: 'string' },
    status: { type: 'string' },
    createdAt: timestamp(),
    decidedAt: timestamp(true),
    decidedBy: { type: 'string', nullable: true },
    denyReason: { type: 'string', nullable: true },
    processingAt: timestamp(true),
    payoutAttempts: { type: 'integer' },
    payoutReference: { type: 'string', nullable: true },
    paidAt: timestamp(true),
    failedAt: timestamp(true),
    failureReason: { type: 'string', nullable: true },
    autoApprovable: { type: 'boolean', default: false },
    reviewReasons: { type: new ArrayType<ReviewReason>(), columnType: 'text[]' },
    canceledAt: timestamp(true),
    canceledBy: { type: 'string', nullable: true },
    cancelReason: { type: 'string', nullable: true },
  },
});

/** What the ledger knows about one order's money (domain/order-funds.ts). */
export interface OrderFundsRow {
  orderId: string;
  sellerId: string;
  environment: Environment;
  /** Null until a payment.* event brings them. */
  grossAmount: number | null;
  feeAmount: number | null;
  netAmount: number | null;
  chargeStatus: ChargeStatus | null;
  chargeVersion: number | null;
  position: FundsPosition;
  /**
   * Refund attempts since the hold was reserved whose failure is not known (domain/refund-holds.ts):
   * the hold is released by the last one to fail, by its refund's failure at the PSP, or by the sweep.
   * 0 outside REFUND_HELD.
   */
  refundAttempts: number;
  /** When the refund hold was last reserved; null outside REFUND_HELD. */
  refundHeldAt: Date | null;
  /**
   * The number of the order's latest refund hold, growing with every reservation (domain/refund-holds.ts);
   * payments records the newest one it heard of with each refund asked.
   */
  refundHoldSeq: number;
  /** The number of the reservation that made the current hold (REFUND_HELD from AVAILABLE). */
  refundHoldFirstSeq: number;
  updatedAt: Date;
}

export const OrderFundsSchema = new EntitySchema<OrderFundsRow>({
  name: 'OrderFunds',
  tableName: 'order_funds',
  properties: {
    orderId: { type: 'uuid', primary: true },
    sellerId: { type: 'uuid' },
    environment: { type: 'string' },
    grossAmount: money(true),
    feeAmount: money(true),
    netAmount: money(true),
    chargeStatus: { type: 'string', nullable: true },
    chargeVersion: { type: 'integer', nullable: true },
    position: { type: 'string' },
    refundAttempts: { type: 'integer', default: 0 },
    refundHeldAt: timestamp(true),
    refundHoldSeq: { type: new BigIntType('number'), columnType: 'bigint', default: 0 },
    refundHoldFirstSeq: { type: new BigIntType('number'), columnType: 'bigint', default: 0 },
    updatedAt: timestamp(),
  },
});

export const entities = [WithdrawalSchema, OrderFundsSchema];
