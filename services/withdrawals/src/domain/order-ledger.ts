import { UnprocessableMessageError } from '@seller-api/service-kit';
import type { OrderFundsRow } from '../db/entities';
import type { FundsOwner } from './balance';
import type { Entry } from './ledger';
import { applyOrderMessage, NEW_ORDER_FUNDS, type OrderFunds, type OrderMessage } from './order-funds';

/** An order's record as the ledger's rules read it (a new order's, when there is none yet). */
export function toFunds(row: OrderFundsRow | null): OrderFunds {
  if (!row) return NEW_ORDER_FUNDS;
  const { grossAmount: gross, feeAmount: fee, netAmount: net } = row;
  return {
    amounts: gross !== null && fee !== null && net !== null ? { gross, fee, net } : null,
    status: row.chargeStatus,
    version: row.chargeVersion,
    position: row.position,
  };
}

/**
 * What one payments message makes of an order's record (null: none yet) and the entries it causes,
 * before they are settled against the balance (journal.settleEntries). Pure: the callers lock, read and
 * store (db/order-funds.ts, recordOrderMessage; the ledger consumer's batches in db/ledger-batches.ts).
 */
export function nextOrderRecord(
  row: OrderFundsRow | null,
  owner: FundsOwner,
  orderId: string,
  message: OrderMessage,
  now: Date,
): { row: OrderFundsRow; entries: Entry[] } {
  if (row && (row.sellerId !== owner.sellerId || row.environment !== owner.environment)) {
    // Payments never moves an order between sellers; a message that says so is refused, not applied.
    // Retrying cannot change that: it is parked at once for an operator (docs/messaging.md).
    throw new UnprocessableMessageError(`order ${orderId} belongs to another seller or environment`);
  }
  const { funds, entries } = applyOrderMessage(toFunds(row), message);
  // A refund hold the message took the money out of (a reversal, a MED) has nothing left to release.
  const leftRefundHold = funds.position !== 'REFUND_HELD';
  const base: OrderFundsRow = row ?? {
    orderId,
    ...owner,
    grossAmount: null,
    feeAmount: null,
    netAmount: null,
    chargeStatus: null,
    chargeVersion: null,
    position: 'NONE',
    refundAttempts: 0,
    refundHeldAt: null,
    refundHoldSeq: 0,
    refundHoldFirstSeq: 0,
    updatedAt: now,
  };
  return {
    row: {
      ...base,
      ...(leftRefundHold ? { refundAttempts: 0, refundHeldAt: null } : {}),
      grossAmount: funds.amounts?.gross ?? null,
      feeAmount: funds.amounts?.fee ?? null,
      netAmount: funds.amounts?.net ?? null,
      chargeStatus: funds.status,
      chargeVersion: funds.version,
      position: funds.position,
      updatedAt: now,
    },
    entries,
  };
}
