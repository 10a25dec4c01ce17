import type {
  Charge,
  CreateChargeRequest,
  Environment,
  PaymentPixQrCodeCreatedData,
} from '@seller-api/contracts';
import { renderQrPngBase64 } from '@seller-api/qr';
import { conflict } from '@seller-api/service-kit';
import type { Transaction } from '../db/entities';
import { refundView } from './refund-state';

/** Who asks for the charge: the seller of the order, in one environment (the gateway's signed identity). */
export interface ChargeOwner {
  sellerId: string;
  environment: Environment;
  /** The seller's display name from the identity, used when the request carries none. */
  sellerName: string | null;
}

/** What a new charge is made of besides the request: the PSP's answer, the fee, ours. */
export interface NewChargeParts {
  id: string;
  owner: ChargeOwner;
  input: CreateChargeRequest;
  txid: string;
  copyAndPaste: string;
  expiresAt: Date;
  fee: { fee_amount: number; net_amount: number };
  /** The fee settings the fee was computed with: kept on a due-date charge, whose fee is of its payment. */
  feeSettings: { bps: number; fixedAmount: number };
  now: Date;
}

/** The transaction row of a new PENDING charge. */
export function newCharge({
  id,
  owner,
  input,
  txid,
  copyAndPaste,
  expiresAt,
  fee,
  feeSettings,
  now,
}: NewChargeParts): Transaction {
  const { fee_amount, net_amount } = fee;
  return {
    id,
    orderId: input.order_uuid,
    sellerId: owner.sellerId,
    environment: owner.environment,
    sellerName: input.seller_name ?? owner.sellerName,
    status: 'CREATED',
    method: 'PIX',
    txid,
    copyAndPaste,
    grossAmount: input.gross_amount,
    feeAmount: fee_amount,
    netAmount: net_amount,
    expiresAt,
    createdAt: now,
    approvedAt: null,
    refundedAt: null,
    endToEndId: null,
    debtorName: input.debtor_name,
    debtorDocument: input.debtor_document,
    chargeStatus: 'PENDING',
    version: 0,
    statusChangedAt: null,
    refundAskedAt: null,
    refundAskKey: null,
    refundStatus: null,
    refundAttempt: 0,
    refundRequestedAt: null,
    refundUpdatedAt: null,
    refundReason: null,
    refundHoldSeq: 0,
    refundCheckAt: null,
    refundChecks: 0,
    dueDateTerms: input.due_date ?? null,
    amountComponents: null,
    paidOn: null,
    feeBps: input.due_date ? feeSettings.bps : null,
    feeFixedAmount: input.due_date ? feeSettings.fixedAmount : null,
  };
}

/** An existing charge of the order: 409 when it is another seller's or environment's. */
export function ownedBy(transaction: Transaction, owner: ChargeOwner): Transaction {
  if (transaction.sellerId !== owner.sellerId || transaction.environment !== owner.environment) {
    throw conflict('This order already has a charge that belongs to another seller or environment.');
  }
  return transaction;
}

/** AMQP headers of this transaction's events: consumers route and partition on them. */
export function eventHeaders(transaction: Transaction): Record<string, string> {
  return {
    'x-seller-id': transaction.sellerId,
    'x-environment': transaction.environment,
    'x-order-uuid': transaction.orderId,
  };
}

/** `data` of `payment.pix_qr_code_created`; the order is PENDING while its charge is new. */
export function pixQrCodeCreatedData(transaction: Transaction): PaymentPixQrCodeCreatedData {
  return {
    transaction: {
      id: transaction.id,
      method: transaction.method,
      status: transaction.status,
      gross_amount: transaction.grossAmount,
      fee_amount: transaction.feeAmount,
      net_amount: transaction.netAmount,
      created_at: transaction.createdAt.toISOString(),
      expires_at: transaction.expiresAt.toISOString(),
    },
    order: { uuid: transaction.orderId, status: 'PENDING' },
    seller: { name: transaction.sellerName ?? '' },
  };
}

/** The charge as the internal API shows it, with the QR image rendered from copy_and_paste (~0.1 ms). */
export function toCharge(transaction: Transaction): Charge {
  return {
    transaction_uuid: transaction.id,
    order_uuid: transaction.orderId,
    status: transaction.status,
    method: transaction.method,
    txid: transaction.txid,
    copy_and_paste: transaction.copyAndPaste,
    qr_code_image_base64: transaction.copyAndPaste ? renderQrPngBase64(transaction.copyAndPaste) : null,
    gross_amount: transaction.grossAmount,
    fee_amount: transaction.feeAmount,
    net_amount: transaction.netAmount,
    expires_at: transaction.expiresAt.toISOString(),
    created_at: transaction.createdAt.toISOString(),
    refund_asked_at: transaction.refundAskedAt?.toISOString() ?? null,
    refund: refundView(transaction),
  };
}
