import type { ChargeState } from '@seller-api/contracts';
import {
  medHeld,
  medReleased,
  paymentCredited,
  paymentReversed,
  type Entry,
  type SaleAmounts,
} from './ledger';

/**
 * What the ledger knows about one order's money, and what the journal already reflects (docs/finance.md,
 * "Sales"). Pure: the consumer loads the record, applies a message here and stores the result with the
 * entries it returns, in one transaction.
 *
 * Two kinds of message feed it, and neither is trusted to arrive in order:
 * - the public `payment.*` events carry the amounts (gross, fee, net): `payment.pix_qr_code_created`
 *   those of the charge as made, `payment.approved` and `payment.refunded` those of the payment. They
 *   differ for a due-date charge paid with a discount, fine or interest (docs/pix.md, "Due-date
 *   charges"): the amounts of the payment win over the charge's as long as nothing was posted;
 * - the internal `internal.charge.<status>` messages carry the charge status with a version that grows
 *   with every change, so a late, older one is recognised and ignored; from a paid charge they carry
 *   the amounts of the payment too (absent from a payments of an earlier release).
 *
 * The record converges: each message updates what is known, then the journal is moved from its
 * position to the one the newest known status asks for. Approval is signalled twice (payment.approved
 * and internal.charge.paid); whichever comes first moves the position to AVAILABLE and the other finds
 * it there, so an order is credited once whatever the order of arrival.
 */

export type ChargeStatus = ChargeState['status'];

/**
 * Where the order's net sits in the journal. REFUND_HELD: the charge is PAID and a refund by the seller
 * is in flight; the net was reserved from the available balance (refund-holds.ts). No message moves an
 * order into it, and a PAID status leaves it there: only the refund's outcome (the reversal, or the
 * hold's release) or a MED takes it out.
 */
export type FundsPosition = 'NONE' | 'AVAILABLE' | 'HELD' | 'REFUND_HELD' | 'REVERSED';

export interface OrderFunds {
  amounts: SaleAmounts | null;
  /** The newest known charge status; null before any message. */
  status: ChargeStatus | null;
  /** Its version from payments, or null when it came from a public event (which has none). */
  version: number | null;
  position: FundsPosition;
}

export const NEW_ORDER_FUNDS: OrderFunds = { amounts: null, status: null, version: null, position: 'NONE' };

export type OrderMessage =
  /**
   * A public payment event: the amounts, and the status the event implies (without a version). PENDING
   * (the QR code event) carries the charge's amounts, PAID and REFUNDED those of the payment.
   */
  | { kind: 'payment'; status: 'PENDING' | 'PAID' | 'REFUNDED'; amounts: SaleAmounts }
  /** An internal charge state; `amounts`: those of the payment, once the charge was paid. */
  | { kind: 'charge'; status: ChargeStatus; version: number; amounts?: SaleAmounts };

/** The amounts of the payment a message carries, if any (not those of the charge as made). */
function paidAmountsOf(message: OrderMessage): SaleAmounts | null {
  if (message.kind === 'charge') return message.amounts ?? null;
  return message.status === 'PENDING' ? null : message.amounts;
}

/** No charge leaves these statuses (services/payments/src/domain/charge-state.ts). */
const TERMINAL: ReadonlySet<ChargeStatus> = new Set(['REFUNDED', 'CHARGEBACK', 'EXPIRED', 'CANCELLED']);

/** Progress of the statuses a public event can imply, to order two unversioned facts. */
const PROGRESS: Record<ChargeStatus, number> = {
  PENDING: 0,
  PAID: 1,
  MED: 1,
  EXPIRED: 2,
  CANCELLED: 2,
  REFUNDED: 2,
  CHARGEBACK: 2,
};

/** Whether `incoming` is newer knowledge than `current`. */
function supersedes(
  current: { status: ChargeStatus | null; version: number | null },
  incoming: { status: ChargeStatus; version: number | null },
): boolean {
  if (current.status === null) return true;
  // A terminal status is final: nothing that arrives later can be newer.
  if (TERMINAL.has(current.status)) return false;
  if (TERMINAL.has(incoming.status)) return true;
  if (incoming.version !== null) return current.version === null || incoming.version > current.version;
  // An unversioned fact only fills in before any versioned one, and only to move forward.
  return current.version === null && PROGRESS[incoming.status] > PROGRESS[current.status];
}

/** Merges a message into what is known, without touching the journal position. */
export function observe(funds: OrderFunds, message: OrderMessage): OrderFunds {
  const next = { ...funds };
  const paid = paidAmountsOf(message);
  // The payment's amounts replace the charge's (a due-date charge's differ) until money was posted
  // with them. Once posted, the journal keeps what it posted: a later, different figure is left for the
  // reconciliation to report (amounts_differ), never posted over.
  if (paid !== null && funds.position === 'NONE') next.amounts = { ...paid };
  else if (message.kind === 'payment' && next.amounts === null) next.amounts = { ...message.amounts };
  const incoming = { status: message.status, version: message.kind === 'charge' ? message.version : null };
  if (supersedes(funds, incoming)) {
    next.status = incoming.status;
    // Keep the highest version seen: an unversioned terminal fact must not reopen older messages.
    next.version = incoming.version ?? funds.version;
  }
  return next;
}

/** The position a charge status asks for; a charge never paid has nothing in the journal. */
export function targetPosition(status: ChargeStatus | null): FundsPosition {
  switch (status) {
    case 'PAID':
      return 'AVAILABLE';
    case 'MED':
      return 'HELD';
    case 'REFUNDED':
    case 'CHARGEBACK':
      return 'REVERSED';
    default:
      return 'NONE';
  }
}

/** Whether the money sits where a charge status asks: a refund hold is where a PAID sale may be. */
export function sitsAsAsked(position: FundsPosition, status: ChargeStatus | null): boolean {
  const target = targetPosition(status);
  return position === target || (position === 'REFUND_HELD' && target === 'AVAILABLE');
}

/**
 * The entries that move the journal from `from` to `to`. Each step is one entry, so the journal tells
 * the history even when messages arrived out of order (a MED seen before the approval posts the credit,
 * then the hold). REVERSED is final, and nothing goes back to NONE: a stale PENDING never un-credits.
 * A refund hold stays while the charge is PAID; the reversal takes the net from it (a refund made, or a
 * chargeback), and a MED moves it to the MED hold.
 */
export function path(from: FundsPosition, to: FundsPosition, a: SaleAmounts): Entry[] {
  if (from === to || from === 'REVERSED' || to === 'NONE') return [];
  if (from === 'NONE') return [paymentCredited(a), ...path('AVAILABLE', to, a)];
  // A refund hold is never a target: only refund-holds.ts reserves one.
  if (to === 'REFUND_HELD') return [];
  if (from === 'AVAILABLE') return to === 'HELD' ? [medHeld(a)] : [paymentReversed(a, 'available')];
  if (from === 'REFUND_HELD') {
    if (to === 'AVAILABLE') return [];
    return to === 'HELD' ? [medHeld(a, 'refund')] : [paymentReversed(a, 'refund')];
  }
  // from HELD
  return to === 'AVAILABLE' ? [medReleased(a)] : [paymentReversed(a, 'held')];
}

/** Applies one message: the new record and the entries to post with it (often none). */
export function applyOrderMessage(
  funds: OrderFunds,
  message: OrderMessage,
): { funds: OrderFunds; entries: Entry[] } {
  const known = observe(funds, message);
  // Without the amounts nothing can be posted yet; the payment event that brings them will.
  if (known.amounts === null) return { funds: known, entries: [] };
  const target = targetPosition(known.status);
  const entries = path(known.position, target, known.amounts);
  const position = entries.length > 0 ? target : known.position;
  return { funds: { ...known, position }, entries };
}
