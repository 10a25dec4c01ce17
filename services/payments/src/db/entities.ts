import { BigIntType, EntitySchema } from '@mikro-orm/core';
import type {
  AmountDueComponents,
  ChargeState,
  DueDateTermsRecord,
  Environment,
  PaymentMethod,
  RefundStatus,
  TransactionStatus,
} from '@seller-api/contracts';

export type ChargeStatus = ChargeState['status'];

/** A payment transaction: the PIX charge of one order and what became of it (docs/pix.md). */
export interface Transaction {
  id: string;
  orderId: string;
  sellerId: string;
  environment: Environment;
  sellerName: string | null;
  status: TransactionStatus;
  method: PaymentMethod;
  /** Ours, sent to the PSP and carried back by its notifications; unique. */
  txid: string;
  copyAndPaste: string;
  /** Cents. The columns are bigint; every amount fits in 2^53, so they are read as numbers. */
  grossAmount: number;
  feeAmount: number;
  netAmount: number;
  expiresAt: Date;
  createdAt: Date;
  approvedAt: Date | null;
  refundedAt: Date | null;
  endToEndId: string | null;
  debtorName: string | null;
  debtorDocument: string | null;
  /** The order's money state (domain/charge-state.ts); `version` grows with every change. */
  chargeStatus: ChargeStatus;
  version: number;
  statusChangedAt: Date | null;
  /** When a seller's refund was last asked of the PSP (committed before the call; db/refunds.ts). */
  refundAskedAt: Date | null;
  /** The Idempotency-Key of the request that asked the current refund (null: none, or not keyed). */
  refundAskKey: string | null;
  /**
   * The latest refund at the PSP (domain/refund-state.ts): null until one has an outcome (or while the
   * outcome of an ask is unknown), then PROCESSING, REFUNDED or FAILED.
   */
  refundStatus: RefundStatus | null;
  /** The refund attempt asked of the PSP (its refund id derives from it); 0 before the first. */
  refundAttempt: number;
  /** When the current attempt was first asked. */
  refundRequestedAt: Date | null;
  refundUpdatedAt: Date | null;
  /** The PSP's reason for a FAILED refund, when it gave one. */
  refundReason: string | null;
  /** The newest refund hold (withdrawals' hold_seq) a seller's refund request brought (domain/refund-state.ts). */
  refundHoldSeq: number;
  /** When to look the refund up at the PSP next; null when its end is known (or nothing was asked). */
  refundCheckAt: Date | null;
  refundChecks: number;
  /** The terms of a due-date charge (API Pix `cobv`); null for an immediate charge. */
  dueDateTerms: DueDateTermsRecord | null;
  /**
   * Once paid: what `grossAmount` (then the amount paid) is made of; null before payment. For an
   * immediate charge, the amount and zeros.
   */
  amountComponents: AmountDueComponents | null;
  /** Once paid: the day in São Paulo the payment was priced for (YYYY-MM-DD); null before. */
  paidOn: string | null;
  /**
   * A due-date charge's fee settings when it was made (PLATFORM_FEE_BPS, PLATFORM_FEE_FIXED_AMOUNT):
   * its fee is computed on the amount paid, maybe years later, at the rate it was sold with. Null for
   * an immediate charge, whose fee is fixed when it is made.
   */
  feeBps: number | null;
  feeFixedAmount: number | null;
}

const cents = () => ({ type: new BigIntType('number'), columnType: 'bigint' });
const timestamp = { type: 'Date', columnType: 'timestamptz(3)' } as const;

export const TransactionSchema = new EntitySchema<Transaction>({
  name: 'Transaction',
  tableName: 'transactions',
  properties: {
    id: { type: 'uuid', primary: true },
    orderId: { type: 'uuid', unique: true },
    sellerId: { type: 'uuid' },
    environment: { type: 'string' },
    sellerName: { type: 'string', nullable: true },
    status: { type: 'string' },
    method: { type: 'string' },
    txid: { type: 'string', unique: true },
    copyAndPaste: { type: 'string' },
    grossAmount: cents(),
    feeAmount: cents(),
    netAmount: cents(),
    expiresAt: { ...timestamp },
    createdAt: { ...timestamp },
    approvedAt: { ...timestamp, nullable: true },
    refundedAt: { ...timestamp, nullable: true },
    endToEndId: { type: 'string', nullable: true },
    debtorName: { type: 'string', nullable: true },
    debtorDocument: { type: 'string', nullable: true },
    chargeStatus: { type: 'string' },
    version: { type: 'integer' },
    statusChangedAt: { ...timestamp, nullable: true },
    refundAskedAt: { ...timestamp, nullable: true },
    refundAskKey: { type: 'text', nullable: true },
    refundStatus: { type: 'string', nullable: true },
    refundAttempt: { type: 'integer', default: 0 },
    refundRequestedAt: { ...timestamp, nullable: true },
    refundUpdatedAt: { ...timestamp, nullable: true },
    refundReason: { type: 'string', nullable: true },
    refundHoldSeq: { type: new BigIntType('number'), columnType: 'bigint', default: 0 },
    refundCheckAt: { ...timestamp, nullable: true },
    refundChecks: { type: 'integer', default: 0 },
    dueDateTerms: { type: 'json', columnType: 'jsonb', nullable: true },
    amountComponents: { type: 'json', columnType: 'jsonb', nullable: true },
    paidOn: { type: 'string', columnType: 'date', nullable: true },
    feeBps: { type: 'integer', nullable: true },
    feeFixedAmount: { type: new BigIntType('number'), columnType: 'bigint', nullable: true },
  },
});

export const entities = [TransactionSchema];
