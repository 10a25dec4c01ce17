import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import {
  PaymentEvents,
  PaymentPixQrCodeCreatedData,
  type Charge,
  type CreateChargeRequest,
  type Environment,
} from '@seller-api/contracts';
import { renderQrPngBase64 } from '@seller-api/qr';
import { conflict, outboxRow } from '@seller-api/service-kit';
import type { ChargeWrites } from '../db/charge-writes';
import { TransactionSchema, type Transaction } from '../db/entities';
import { EXCHANGE } from '../events/topology';
import { computeFee } from './fees';
import { refundView } from './refund-state';
import { pspFor, type PspAdapters } from './psp';
import { newTxid } from './txid';

/** Who asks for the charge: the seller of the order, in one environment (the gateway's signed identity). */
export interface ChargeOwner {
  sellerId: string;
  environment: Environment;
  /** The seller's display name from the identity, used when the request carries none. */
  sellerName: string | null;
}

export interface ChargeDeps {
  /** Each environment's PSP: a charge asks the one of its owner's environment. */
  psps: PspAdapters;
  feeBps: number;
  feeFixedAmount: number;
  writes: ChargeWrites;
  now?: () => Date;
  txid?: () => string;
  /** Told when an event was stored outside a flush, to wake the outbox relay. */
  outboxStored?: () => void;
}

export interface ChargeResult {
  transaction: Transaction;
  /** False when the order already had its charge and that one is returned. */
  created: boolean;
  /** The charge as the internal API shows it (toCharge), its QR image rendered. */
  charge: Charge;
}

/**
 * After the callbacks already queued: a write batch submitted this turn has started by then (its own
 * callback was queued first), so its statement is on its way unless the pool had no free connection.
 */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * The PIX charge of an order, idempotent on the order: when the same seller asks again, the existing
 * transaction is returned. Orders makes a new order id for every create, so only a repeated internal
 * call asks again: with a local PSP adapter the insert finds the charge (it loses on the unique order
 * index), which spares every charge a lookup; a remote PSP is never asked twice, so there the charge
 * is looked up first. A concurrent duplicate loses the race on that index and reads the winner's row.
 * The transaction and its `payment.pix_qr_code_created` event commit together.
 */
export async function createCharge(
  em: EntityManager,
  owner: ChargeOwner,
  input: CreateChargeRequest,
  deps: ChargeDeps,
): Promise<ChargeResult> {
  // The order's own environment picks the PSP: a test order never reaches the live PSP.
  const adapter = pspFor(deps.psps, owner.environment);
  if (adapter.remote) {
    const existing = await findByOrder(em.fork(), input.order_uuid);
    if (existing) return answered(ownedBy(existing, owner));
  }
  const now = deps.now?.() ?? new Date();
  // Static BR Codes hold 25 characters; API Pix wants 26 to 35: the adapter says which.
  const txid = deps.txid?.() ?? newTxid(adapter.txidLength);
  const expiresAt = new Date(input.expires_at);
  const { fee_amount, net_amount } = computeFee(input.gross_amount, deps.feeBps, deps.feeFixedAmount);
  // Asked before the database transaction opens, so no connection waits on the PSP.
  const psp = await adapter.createCharge({
    txid,
    amountCents: input.gross_amount,
    expiresAt,
    debtorName: input.debtor_name,
    debtorDocument: input.debtor_document,
  });
  const transaction: Transaction = {
    id: randomUUID(),
    orderId: input.order_uuid,
    sellerId: owner.sellerId,
    environment: owner.environment,
    sellerName: input.seller_name ?? owner.sellerName,
    status: 'CREATED',
    method: 'PIX',
    txid,
    copyAndPaste: psp.copyAndPaste,
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
  };
  // Validated before anything is written: a payload the contract refuses is a bug, not a charge.
  const payload = PaymentPixQrCodeCreatedData.parse(pixQrCodeCreatedData(transaction));

  const event = outboxRow({
    exchange: EXCHANGE,
    routingKey: PaymentEvents.PIX_QR_CODE_CREATED,
    payload,
    headers: eventHeaders(transaction),
  });
  // The transaction and its event in one statement: atomic, one round trip (the create-order path).
  const written = deps.writes.insert(transaction, event);
  // Handled below, after the image: a failure meanwhile must not count as unhandled.
  written.catch(() => undefined);
  // The QR image (~0.1 ms of CPU) is rendered while the statement travels and commits, not after:
  // the image needs only copy_and_paste.
  await nextTurn();
  const charge = toCharge(transaction);
  try {
    await written;
    deps.outboxStored?.();
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    // This order's charge was made before (or by a concurrent request): answer with it.
    const winner = await findByOrder(em.fork(), input.order_uuid);
    if (!winner) throw err;
    return answered(ownedBy(winner, owner));
  }
  return { transaction, created: true, charge };
}

/** An existing charge, returned as it is. */
function answered(transaction: Transaction): ChargeResult {
  return { transaction, created: false, charge: toCharge(transaction) };
}

/** PostgreSQL's unique_violation, as pg reports it (the insert runs on a plain connection). */
function isUniqueViolation(err: unknown): boolean {
  return (err as { code?: string } | null)?.code === '23505';
}

function findByOrder(em: EntityManager, orderId: string): Promise<Transaction | null> {
  return em.findOne(TransactionSchema, { orderId });
}

function ownedBy(transaction: Transaction, owner: ChargeOwner): Transaction {
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
