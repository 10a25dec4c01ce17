import { randomUUID } from 'node:crypto';
import {
  ChargeState,
  PaymentApprovedData,
  PaymentEvents,
  PaymentRefundFailedData,
  PaymentRefundedData,
  type AmountDueComponents,
  type Environment,
  type PspPaymentOutcome,
  type RefundStatus,
} from '@seller-api/contracts';
import { HttpError, conflict, notFound, serviceUnavailable, type Logger } from '@seller-api/service-kit';
import type { ChargeStatus, Transaction } from '../db/entities';
import { eventHeaders, type ChargeOwner } from './charges';
import { PspError, type PspAdapter, type PspAdapters, type PspRefund, type PspRefundInput } from './psp';
import { currentAttempt, refundRefusal, refundView } from './refund-state';
import type { PaymentMetrics } from '../metrics';
import { amountPaidOf, immediateComponents } from './due-date-payments';
import { computeFee } from './fees';

/*
 * The rules of a charge's life, over the locked row as plain data: what a move or a refund's change
 * does to it and which messages it causes. The transactions that lock, decide and write are the
 * stores' (db/charges.ts, db/refunds.ts, db/psp-payments.ts).
 */

export interface LifecycleDeps {
  /** Each environment's PSP: a refund asks the one of its charge's environment. */
  psps: PspAdapters;
  logger: Logger;
  now?: () => Date;
  metrics?: PaymentMetrics;
  /**
   * When a refund whose end has not arrived is looked up at the PSP (jobs/refund-checks.ts): first
   * `baseMs` after it was asked, then doubling up to `maxMs`. Defaults 30 s and 1 h.
   */
  refundChecks?: { baseMs: number; maxMs: number };
}

const DEFAULT_REFUND_CHECKS = { baseMs: 30_000, maxMs: 3_600_000 };
export const refundChecksOf = (deps: Pick<LifecycleDeps, 'refundChecks'>) =>
  deps.refundChecks ?? DEFAULT_REFUND_CHECKS;

/**
 * Moves decided in a transaction, recorded in the metrics once it has returned (for a keyed request,
 * whose outer transaction commits later, a crash in between counts a move that did not happen).
 */
export type Moved = Array<{ to: ChargeStatus | `REFUND_${RefundStatus}`; amount: number }>;
export const recordMoves = (deps: LifecycleDeps, moved: Moved) => {
  for (const m of moved) deps.metrics?.chargeMoved(m.to, m.amount);
};

const iso = (d: Date | null) => (d ? d.toISOString() : null);

function chargeState(t: Transaction, previous: ChargeStatus | null): ChargeState {
  return ChargeState.parse({
    order_uuid: t.orderId,
    status: t.chargeStatus,
    previous_status: previous,
    version: t.version,
    paid_at: iso(t.approvedAt),
    changed_at: (t.statusChangedAt ?? t.createdAt).toISOString(),
    refund: refundView(t),
    amount_paid: amountPaidOf(t),
    fee_amount: t.feeAmount,
    net_amount: t.netAmount,
  });
}

export const currentState = (t: Transaction) => chargeState(t, null);

/** A message a change causes, for the payments exchange (the store queues it in its transaction's outbox). */
export interface ChargeMessage {
  routingKey: string;
  payload: unknown;
  headers: Record<string, string>;
}

/** What a change did: the charge's new state, and its messages in the order they are queued. */
export interface ChargeChange {
  state: ChargeState;
  messages: ChargeMessage[];
}

/** Applies a decided move on the locked row: the row's new fields and the messages it causes. */
export function applyMove(t: Transaction, to: ChargeStatus, now: Date, moved: Moved): ChargeChange {
  const messages: ChargeMessage[] = [];
  const previous = t.chargeStatus;
  moved.push({ to, amount: t.grossAmount });
  t.chargeStatus = to;
  t.version += 1;
  t.statusChangedAt = now;
  if (to === 'PAID' && previous === 'PENDING') {
    t.status = 'APPROVED';
    t.approvedAt ??= now;
    messages.push({
      routingKey: PaymentEvents.APPROVED,
      payload: approvedData(t),
      headers: eventHeaders(t),
    });
  }
  if (to === 'REFUNDED') {
    t.status = 'REFUNDED';
    t.refundedAt = now;
    messages.push({
      routingKey: PaymentEvents.REFUNDED,
      payload: refundedData(t),
      headers: eventHeaders(t),
    });
  }
  return stateChange(t, previous, messages);
}

/**
 * Adds the charge's state as `internal.charge.<status>`: orders mirrors it (and emits the public
 * order.* event of a move); the ledger follows it.
 */
function stateChange(t: Transaction, previous: ChargeStatus | null, messages: ChargeMessage[]): ChargeChange {
  const state = chargeState(t, previous);
  messages.push({
    routingKey: `internal.charge.${t.chargeStatus.toLowerCase()}`,
    payload: state,
    headers: eventHeaders(t),
  });
  return { state, messages };
}

/** The charge, or 404 when it is not the owner's (another seller's, or the other environment's). */
export function owned(t: Transaction | null, owner: ChargeOwner): Transaction {
  if (!t || t.sellerId !== owner.sellerId || t.environment !== owner.environment)
    throw notFound('Order not found.');
  return t;
}

/**
 * A retry of the keyed request that asked this refund, whose answer was lost with its transaction
 * (the PSP answered, the database did not take it): the same refund, answered as it stands.
 */
export function refundAlreadyAsked(t: Transaction, askKey: string | null): boolean {
  return (
    askKey !== null &&
    t.refundAskKey === askKey &&
    (t.refundStatus === 'PROCESSING' || t.refundStatus === 'REFUNDED')
  );
}

/**
 * Whether the PSP may be asked for the seller's refund of this locked charge; throws the answer when
 * not. The PSP is never asked unless the ask was recorded first (db/refunds.ts noteRefundAsked).
 */
export function checkRefundAsk(t: Transaction): asserts t is Transaction & { endToEndId: string } {
  if (!t.endToEndId) throw conflict('This payment has no PSP reference to refund.');
  const refusal = refundRefusal(t);
  if (refusal) throw conflict(refusal);
  // (Absent only when the charge became PAID after the caller's mark: nothing was asked, retry.)
  if (!t.refundAskedAt || t.refundStatus === 'FAILED')
    throw serviceUnavailable('The charge changed meanwhile; retry the request.');
}

/**
 * The PSP did not make the refund: it answered `NAO_REALIZADO` (`atPsp`: a refund with this id exists
 * there, failed, so the next ask is a new attempt), or refused the request itself (a 4xx: nothing was
 * made). The seller is answered 502 with the PSP's reason and orders gives the refund's hold back;
 * recordRefundRefused keeps the outcome.
 */
export class RefundRefused extends HttpError {
  /** The ledger hold of the request the PSP refused (set by the route; null: none known). */
  holdSeq: number | null = null;

  constructor(
    readonly attempt: number,
    readonly reason: string | null,
    readonly atPsp: boolean,
  ) {
    super(
      502,
      'bad_gateway',
      atPsp
        ? `The PSP did not make the refund${reason ? `: ${reason.replace(/[.\s]+$/, '')}` : ''}. The order is unchanged; the refund can be asked again.`
        : 'The PSP refused the refund; the order is unchanged.',
    );
    this.name = 'RefundRefused';
  }
}

/** What became of a refusal once recorded (recordRefundRefused). */
export type RefusalRecord = 'recorded' | 'held';

/**
 * What recording a refusal does on the locked charge: nothing more (`recorded`, `held`: see
 * db/refunds.ts recordRefundRefused), take the ask back, or fail the refund.
 */
export type RefusalStep = RefusalRecord | 'take-back' | 'fail';

export function decideRefusal(
  t: Transaction,
  refused: Pick<RefundRefused, 'attempt' | 'atPsp' | 'holdSeq'>,
): RefusalStep {
  const same = currentAttempt(t) === refused.attempt;
  // Recorded meanwhile (another request's refusal, or a report of the same failure).
  if (same && t.refundStatus === 'FAILED') return 'recorded';
  if (!same || t.refundStatus !== null) return 'held';
  if (!refused.atPsp) {
    // Nothing was made (the PSP refused the request and has no refund of this id). Unless a newer
    // request reached us since (it may be asking now), the ask is taken back: the ledger's sweep
    // then reads no refund asked, and releases a hold whose count a lost answer kept.
    return refused.holdSeq !== null && refused.holdSeq >= t.refundHoldSeq ? 'take-back' : 'recorded';
  }
  return 'fail';
}

/**
 * The PSP's refund of a seller's refund. A failure rolls the transaction back, and the answer tells the
 * caller what the PSP said: 502 `bad_gateway` when it refused the request (a 4xx, and it has no refund
 * with this id: it was certainly not made; orders gives the refund's hold back, docs/finance.md
 * "Refunds"); 503 when it could not be asked or did not answer, so it may have refunded (the refund
 * checks look it up; a retry asks again with the same refund id, and a PSP that refuses an id it knows
 * is looked up instead).
 */
export async function askRefund(
  psp: PspAdapter,
  input: PspRefundInput,
  attempt: number,
  logger: Logger,
): Promise<PspRefund> {
  try {
    return await psp.refund(input);
  } catch (err) {
    if (!(err instanceof PspError)) throw err;
    logger.warn(
      { err: err.message, psp: psp.name, psp_status: err.status, retryable: err.retryable },
      'PSP refund failed; the charge is unchanged',
    );
    if (err.retryable)
      throw serviceUnavailable('The PSP could not be asked for the refund; retry the request.');
    // API Pix refuses a refund id it already knows (400): the refund asked before, whose answer was
    // lost, may be made or on its way. Only a PSP that has no refund with this id refused for sure.
    const found = await psp.lookupRefund(input).catch((lookupErr: unknown) => {
      logger.warn(
        { err: (lookupErr as Error).message, psp: psp.name },
        'refund look-up after a refusal failed',
      );
      return undefined;
    });
    if (found === undefined)
      throw serviceUnavailable('The PSP could not be asked for the refund; retry the request.');
    if (found === null) throw new RefundRefused(attempt, null, false);
    return found;
  }
}

/** Sets the refund's state on the locked row (no event: the caller's move or applyRefund queues it). */
export function setRefund(t: Transaction, status: RefundStatus, now: Date): void {
  t.refundStatus = status;
  t.refundUpdatedAt = now;
  t.refundRequestedAt ??= t.refundAskedAt ?? now;
  if (status !== 'PROCESSING') t.refundCheckAt = null;
  if (status !== 'FAILED') t.refundReason = null;
}

/**
 * A change of the refund alone (PROCESSING, FAILED; or REFUNDED on a charge no longer PAID): a new
 * version of the charge's state with the same status, queued as `internal.charge.<status>` so orders
 * shows it and the ledger releases a failed refund's hold; a FAILED one also tells the seller through
 * `payment.refund_failed`.
 */
export function applyRefund(
  t: Transaction,
  status: RefundStatus,
  now: Date,
  deps: Pick<LifecycleDeps, 'refundChecks'>,
  moved: Moved,
): ChargeChange {
  const messages: ChargeMessage[] = [];
  setRefund(t, status, now);
  if (status === 'PROCESSING' && t.refundCheckAt === null) {
    t.refundCheckAt = new Date(now.getTime() + refundChecksOf(deps).baseMs);
  }
  t.version += 1;
  moved.push({ to: `REFUND_${status}`, amount: t.grossAmount });
  if (status === 'FAILED') {
    messages.push({
      routingKey: PaymentEvents.REFUND_FAILED,
      payload: refundFailedData(t),
      headers: eventHeaders(t),
    });
  }
  return stateChange(t, t.chargeStatus, messages);
}

/** Where a refund is reported from, for the logs and metrics. */
export type RefundReportSource = 'notification' | 'check';

/** A refund's state as the PSP reported it (a notification's `devolucoes`, or a look-up). */
export interface RefundReportInput {
  /** Whose PSP reported it: a report of the other environment's charge changes nothing. */
  environment: Environment;
  /** The refunded payment's end-to-end id. */
  endToEndId: string;
  /** Our refund id. */
  refundId: string;
  status: RefundStatus;
  reason: string | null;
}

/** The platform fee settings (PLATFORM_FEE_BPS, PLATFORM_FEE_FIXED_AMOUNT), as createCharge takes them. */
export interface FeeSettings {
  bps: number;
  fixedAmount: number;
}

/** What a payment paid, as recordPayment decided it: the amount, its components and its day. */
export interface SettledPayment {
  amount: number;
  components: AmountDueComponents;
  /** YYYY-MM-DD in São Paulo. */
  day: string;
}

/**
 * Writes what the payment paid on the locked row, before it moves to PAID: the day and components;
 * for a due-date charge the gross amount becomes the amount paid and the fee and net are computed on
 * it (docs/pix.md "Due-date charges"). An immediate charge was paid its amount: its fee stands.
 */
export function settlePayment(t: Transaction, paid: SettledPayment, fees: FeeSettings): void {
  t.paidOn = paid.day;
  if (t.dueDateTerms === null) {
    t.amountComponents = immediateComponents(t.grossAmount);
    return;
  }
  t.amountComponents = paid.components;
  t.grossAmount = paid.amount;
  // At the rate the charge was made with, which may have changed since.
  const fee = computeFee(paid.amount, t.feeBps ?? fees.bps, t.feeFixedAmount ?? fees.fixedAmount);
  t.feeAmount = fee.fee_amount;
  t.netAmount = fee.net_amount;
}

export interface PixPayment {
  /**
   * Whose PSP reports it: the live PSP's notifications pay live charges only; the homologation PSP's
   * and the sandbox pay route test charges only. A charge of the other environment is an unknown txid.
   */
  environment: Environment;
  /** Null for a PIX paid to the key without a charge (API Pix makes `txid` optional). */
  txid: string | null;
  endToEndId: string;
  amountCents: number;
  paidAt: Date;
  /**
   * What the PSP says the amount is made of (a notification's `componentesValor`); null or absent when
   * it did not say (db/psp-payments.ts checks they add up before using them).
   */
  components?: AmountDueComponents | null;
  /**
   * The day in São Paulo the payment is priced for: the sandbox pay's date asked; absent for a PSP's
   * notification, whose day is that of `paidAt` (its `horario`).
   */
  day?: string;
}

/** What became of a notified payment (contracts' PspPaymentOutcome, answered to the PSP). */
export type PaymentOutcome = PspPaymentOutcome;

export interface RecordedPayment {
  outcome: PaymentOutcome;
  state: ChargeState | null;
  /** A payment the charge can no longer take: give it back to the payer, once the recording committed. */
  refundLate: (() => Promise<void>) | null;
}

/** Our refund id for a late payment: `L` and its end-to-end id. */
export const lateRefundId = (endToEndId: string) => `L${endToEndId}`.slice(0, 35);

function approvedData(t: Transaction): PaymentApprovedData {
  return PaymentApprovedData.parse({
    transaction: {
      id: t.id,
      method: t.method,
      status: 'APPROVED',
      gross_amount: t.grossAmount,
      fee_amount: t.feeAmount,
      net_amount: t.netAmount,
      approved_at: iso(t.approvedAt),
      components: amountPaidOf(t)?.components ?? immediateComponents(t.grossAmount),
    },
    order: { uuid: t.orderId, status: 'PAID' },
    seller: { name: t.sellerName ?? '' },
  });
}

function refundedData(t: Transaction): PaymentRefundedData {
  return PaymentRefundedData.parse({
    transaction: {
      id: t.id,
      method: t.method,
      status: 'REFUNDED',
      gross_amount: t.grossAmount,
      fee_amount: t.feeAmount,
      net_amount: t.netAmount,
      approved_at: iso(t.approvedAt),
      refunded_at: iso(t.refundedAt),
    },
    order: { uuid: t.orderId, status: 'REFUNDED' },
    seller: { name: t.sellerName ?? '' },
  });
}

function refundFailedData(t: Transaction): PaymentRefundFailedData {
  const view = refundView(t);
  return PaymentRefundFailedData.parse({
    transaction: {
      id: t.id,
      method: t.method,
      status: t.status,
      gross_amount: t.grossAmount,
      fee_amount: t.feeAmount,
      net_amount: t.netAmount,
      approved_at: iso(t.approvedAt),
    },
    order: { uuid: t.orderId, status: t.chargeStatus },
    refund: {
      amount: t.grossAmount,
      requested_at: view?.requested_at ?? iso(t.refundAskedAt),
      failed_at: view?.updated_at ?? iso(t.refundUpdatedAt),
      reason: t.refundReason,
    },
    seller: { name: t.sellerName ?? '' },
  });
}

export const newEndToEndId = (now: Date) =>
  `E00000000${now.toISOString().replace(/\D/g, '').slice(0, 12)}${randomUUID().replace(/-/g, '').slice(0, 11)}`;
