import type { RefundHold, RefundHoldRequest } from '@seller-api/contracts';
import { serviceUnavailable } from '@seller-api/service-kit';
import type { OrderFundsRow } from '../db/entities';
import type { SaleAmounts } from './ledger';

/**
 * Refund holds (docs/finance.md, "Refunds"). A seller's refund of a PAID order needs an available
 * balance that covers the order's net: before orders asks payments for the refund, the
 * net moves from `seller_available` to `seller_held_refund` here, checked and posted in one transaction
 * under the seller's lock, so a withdrawal or another refund cannot spend the same money in between.
 * The reversal that payments' REFUNDED messages post then takes the net from the hold (order-funds.ts),
 * and never creates debt.
 *
 * A hold is per order: every attempt at the refund (a retry, a duplicate) reserves the same hold once,
 * counts itself in `refund_attempts` and gets the next number (`refund_hold_seq`). An attempt known to
 * have refunded nothing (payments answered a refusal) gives its count back; the last one releases the
 * net. A refund the PSP did not make releases the hold whole, unless a newer hold than its failure
 * covered exists (failureReleases). An attempt whose outcome is unknown (no answer, a crash) keeps
 * it held until one of those, or the sweep (jobs/refund-hold-sweep.ts) finds the hold untouched for longer
 * than any refund takes and payments' charge not refunded.
 *
 * These are the rules, over the order's record read locked under the seller's lock; the transactions
 * that read and write it are db/refund-holds.ts.
 */

export const amountsOf = (row: OrderFundsRow): SaleAmounts | null =>
  row.grossAmount !== null && row.feeAmount !== null && row.netAmount !== null
    ? { gross: row.grossAmount, fee: row.feeAmount, net: row.netAmount }
    : null;

/** What a request for a hold does with the order's record (null: none). */
export type HoldPlan =
  /** Nothing to reserve: this answer, and nothing changes. */
  | { kind: 'answer'; answer: RefundHold }
  /** Another attempt at a refund already held: the money is held once; this attempt counts itself. */
  | { kind: 'again' }
  /** The net to reserve, if the available balance covers it (ledger.checkRefund). */
  | { kind: 'reserve'; amounts: SaleAmounts };

/**
 * Decides a request for a hold. What orders says of the charge (`known`) is never applied: only
 * payments' messages put money in the ledger, so a caller of this route cannot credit a sale
 * (docs/finance.md, "Refunds"). The ledger's own record decides; orders' view only tells that the
 * ledger has not taken the newest messages yet when the sale is not in the available balance: a paid
 * sale is then retried (503).
 */
export function planHold(row: OrderFundsRow | null, orderId: string, known: RefundHoldRequest): HoldPlan {
  const inBalance = row !== null && (row.position === 'AVAILABLE' || row.position === 'REFUND_HELD');
  if (!inBalance && (!row || row.chargeVersion === null || row.chargeVersion < known.version)) {
    if (known.charge_status === 'PAID')
      throw serviceUnavailable('The ledger has not recorded this payment yet. Retry shortly.');
    // Orders' newer status, only echoed back to it (a refund already made is final: orders then asks
    // payments, which answers it again); the ledger's older one would read as "not refundable".
    return {
      kind: 'answer',
      answer: { order_uuid: orderId, held: false, charge_status: known.charge_status },
    };
  }
  if (!row) throw new Error(`refund hold of order ${orderId} without its record`);
  if (row.position === 'REFUND_HELD') return { kind: 'again' };
  const amounts = amountsOf(row);
  if (row.position !== 'AVAILABLE' || amounts === null)
    return { kind: 'answer', answer: { order_uuid: orderId, held: false, charge_status: row.chargeStatus } };
  return { kind: 'reserve', amounts };
}

type HoldFields = Pick<
  OrderFundsRow,
  'position' | 'refundAttempts' | 'refundHeldAt' | 'refundHoldSeq' | 'refundHoldFirstSeq' | 'updatedAt'
>;

/** The record after another attempt at a held refund (planHold's `again`). */
export function heldAgain(row: OrderFundsRow, now: Date): Partial<HoldFields> {
  return { refundAttempts: row.refundAttempts + 1, refundHeldAt: now, refundHoldSeq: row.refundHoldSeq + 1 };
}

/** The record once the net is reserved (planHold's `reserve`, its entry posted): a new hold. */
export function heldFirst(row: OrderFundsRow, now: Date): HoldFields {
  const seq = row.refundHoldSeq + 1;
  return {
    position: 'REFUND_HELD',
    refundAttempts: 1,
    refundHeldAt: now,
    refundHoldSeq: seq,
    refundHoldFirstSeq: seq,
    updatedAt: now,
  };
}

/** The record once its hold's net is released to the available balance (ledger.refundReleased). */
export function released(now: Date): Partial<HoldFields> {
  return { position: 'AVAILABLE', refundAttempts: 0, refundHeldAt: null, updatedAt: now };
}

/**
 * A refund attempt that certainly refunded nothing gives its count back: the attempts left, and
 * whether this was the last (the hold is then released). Null when there is nothing to give back: no
 * hold, or the hold already reversed or moved by a MED, or an attempt (`holdSeq`) of a hold released
 * whole since (the hold now is a newer one's).
 */
export function attemptGivenBack(
  row: OrderFundsRow | null,
  holdSeq?: number,
): { refundAttempts: number; release: boolean } | null {
  if (!row || row.position !== 'REFUND_HELD') return null;
  if (holdSeq !== undefined && holdSeq < row.refundHoldFirstSeq) return null;
  const refundAttempts = Math.max(0, row.refundAttempts - 1);
  return { refundAttempts, release: refundAttempts === 0 };
}

/**
 * Whether the sweep releases a hold it read as stale: not if an attempt reserved it again since it was
 * read (`heldAt` changed), as that attempt may be refunding now.
 */
export function staleHoldReleases(row: OrderFundsRow | null, heldAt: Date): row is OrderFundsRow {
  return row !== null && row.position === 'REFUND_HELD' && row.refundHeldAt?.getTime() === heldAt.getTime();
}

/**
 * Whether a refund the PSP did not make releases the hold: not if a hold newer than the newest one
 * payments had heard of when it recorded the failure (`holdSeq`) was reserved since, as that one may be
 * a refund asked again, at the PSP now, and its own end will release or reverse it.
 */
export function failureReleases(row: OrderFundsRow | null, holdSeq: number): row is OrderFundsRow {
  return row !== null && row.position === 'REFUND_HELD' && row.refundHoldSeq <= holdSeq;
}
