import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { RefundHold, RefundHoldRequest, RefundRelease } from '@seller-api/contracts';
import { HttpError, notFound, serviceUnavailable } from '@seller-api/service-kit';
import { OrderFundsSchema, type OrderFundsRow } from '../db/entities';
import { availableOf, lockSellerFunds } from '../db/balances';
import type { FundsOwner } from './balance';
import { postEntries } from './journal';
import { checkRefund, refundReleased, type SaleAmounts } from './ledger';

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
 * covered exists (releaseFailedRefund). An attempt whose outcome is unknown (no answer, a crash) keeps
 * it held until one of those, or the sweep (jobs/refund-hold-sweep.ts) finds the hold untouched for longer
 * than any refund takes and payments' charge not refunded.
 */

const amountsOf = (row: OrderFundsRow): SaleAmounts | null =>
  row.grossAmount !== null && row.feeAmount !== null && row.netAmount !== null
    ? { gross: row.grossAmount, fee: row.feeAmount, net: row.netAmount }
    : null;

async function lockedRecord(tx: EntityManager, owner: FundsOwner, orderId: string) {
  const row = await tx.findOne(OrderFundsSchema, { orderId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
  // Another seller's or environment's order does not exist for this caller.
  if (row && (row.sellerId !== owner.sellerId || row.environment !== owner.environment))
    throw notFound('Order not found.');
  return row;
}

/**
 * Reserves the order's net for a refund, or says why there is nothing to reserve. 409
 * `insufficient_balance` when the available balance does not cover the net; nothing is changed then.
 */
export async function holdRefund(
  em: EntityManager,
  owner: FundsOwner,
  orderId: string,
  known: RefundHoldRequest,
  now: Date = new Date(),
): Promise<RefundHold> {
  return em.fork().transactional(async (tx) => {
    // The seller's lock first, then the row: the order every writer of this seller's money follows.
    await lockSellerFunds(tx, owner);
    const row = await lockedRecord(tx, owner, orderId);
    // What orders says of the charge is never applied: only payments' messages put money in the
    // ledger, so a caller of this route cannot credit a sale (docs/finance.md, "Refunds"). The ledger's
    // own record decides; orders' view only tells that the ledger has not taken the newest messages yet
    // when the sale is not in the available balance: a paid sale is then retried.
    const inBalance = row !== null && (row.position === 'AVAILABLE' || row.position === 'REFUND_HELD');
    if (!inBalance && (!row || row.chargeVersion === null || row.chargeVersion < known.version)) {
      if (known.charge_status === 'PAID')
        throw serviceUnavailable('The ledger has not recorded this payment yet. Retry shortly.');
      // Orders' newer status, only echoed back to it (a refund already made is final: orders then asks
      // payments, which answers it again); the ledger's older one would read as "not refundable".
      return { order_uuid: orderId, held: false, charge_status: known.charge_status };
    }
    if (!row) throw new Error(`refund hold of order ${orderId} without its record`);
    const amounts = amountsOf(row);
    if (row.position === 'REFUND_HELD') {
      // Another attempt at the same refund: the money is held once; this attempt counts itself.
      row.refundAttempts += 1;
      row.refundHeldAt = now;
      row.refundHoldSeq += 1;
      return {
        order_uuid: orderId,
        held: true,
        charge_status: row.chargeStatus,
        hold_seq: row.refundHoldSeq,
      };
    }
    if (row.position !== 'AVAILABLE' || amounts === null)
      return { order_uuid: orderId, held: false, charge_status: row.chargeStatus };
    const decided = checkRefund(await availableOf(tx, owner), amounts);
    if (!decided.ok) throw new HttpError(409, 'insufficient_balance', decided.message);
    await postEntries(tx, owner, { orderId, cause: 'refund requested' }, [decided.entry]);
    row.position = 'REFUND_HELD';
    row.refundAttempts = 1;
    row.refundHeldAt = now;
    row.refundHoldSeq += 1;
    row.refundHoldFirstSeq = row.refundHoldSeq;
    row.updatedAt = now;
    return { order_uuid: orderId, held: true, charge_status: row.chargeStatus, hold_seq: row.refundHoldSeq };
  });
}

/** Releases the hold's net to the available balance, on the locked row, in the caller's transaction. */
async function release(tx: EntityManager, owner: FundsOwner, row: OrderFundsRow, cause: string) {
  const amounts = amountsOf(row);
  if (!amounts) throw new Error(`refund hold of order ${row.orderId} without amounts`);
  await postEntries(tx, owner, { orderId: row.orderId, cause }, [refundReleased(amounts)]);
  row.position = 'AVAILABLE';
  row.refundAttempts = 0;
  row.refundHeldAt = null;
  row.updatedAt = new Date();
}

/**
 * A refund attempt that certainly refunded nothing: it gives its count back, and the last one releases
 * the net. Nothing to release (no hold, or the hold already reversed or moved by a MED) is no error,
 * and neither is an attempt (`holdSeq`) of a hold released whole since: the hold now is a newer one's.
 */
export async function releaseRefund(
  em: EntityManager,
  owner: FundsOwner,
  orderId: string,
  holdSeq?: number,
): Promise<RefundRelease> {
  return em.fork().transactional(async (tx) => {
    await lockSellerFunds(tx, owner);
    const row = await lockedRecord(tx, owner, orderId);
    if (!row || row.position !== 'REFUND_HELD') return { order_uuid: orderId, released: false };
    // An attempt of a hold released whole since (its refund failed): the hold now is another one's.
    if (holdSeq !== undefined && holdSeq < row.refundHoldFirstSeq)
      return { order_uuid: orderId, released: false };
    row.refundAttempts = Math.max(0, row.refundAttempts - 1);
    if (row.refundAttempts > 0) return { order_uuid: orderId, released: false };
    await release(tx, owner, row, 'refund not made');
    return { order_uuid: orderId, released: true };
  });
}

export interface StaleHold {
  orderId: string;
  owner: FundsOwner;
  heldAt: Date;
}

/**
 * Holds last reserved before `before`: refunds whose outcome no attempt reported. Oldest first, a page
 * at a time after `after` (the last hold of the previous page), so holds the sweep keeps cannot hide
 * the ones behind them.
 */
export async function staleRefundHolds(
  em: EntityManager,
  before: Date,
  limit: number,
  after: StaleHold | null = null,
): Promise<StaleHold[]> {
  const stale = { position: 'REFUND_HELD', refundHeldAt: { $lt: before } } as const;
  const rows = await em.fork().find(
    OrderFundsSchema,
    after
      ? {
          ...stale,
          $or: [
            { refundHeldAt: { $gt: after.heldAt } },
            { refundHeldAt: after.heldAt, orderId: { $gt: after.orderId } },
          ],
        }
      : stale,
    { orderBy: { refundHeldAt: 'asc', orderId: 'asc' }, limit },
  );
  return rows.map((row) => ({
    orderId: row.orderId,
    owner: { sellerId: row.sellerId, environment: row.environment },
    heldAt: row.refundHeldAt ?? before,
  }));
}

/**
 * The sweep's release of a hold payments did not refund, unless an attempt reserved it again since it
 * was read (`heldAt` changed): that attempt may be refunding now. True when released.
 */
export async function releaseStaleHold(
  em: EntityManager,
  owner: FundsOwner,
  orderId: string,
  heldAt: Date,
): Promise<boolean> {
  return em.fork().transactional(async (tx) => {
    await lockSellerFunds(tx, owner);
    const row = await lockedRecord(tx, owner, orderId);
    if (!row || row.position !== 'REFUND_HELD' || row.refundHeldAt?.getTime() !== heldAt.getTime())
      return false;
    await release(tx, owner, row, 'refund not made (sweep)');
    return true;
  });
}

/**
 * A refund the PSP did not make (payments' message with a FAILED refund), in the consumer's transaction:
 * the hold is released whole, unless a hold newer than the newest one payments had heard of when it
 * recorded the failure (`holdSeq`) was reserved since: that one may be a refund asked again, at the PSP
 * now, and its own end will release or reverse it. Releasing is once (the position moves), so orders'
 * release of an attempt it was answered a refusal for, or the sweep's, never adds a second. True when
 * it released the net.
 */
export async function releaseFailedRefund(
  tx: EntityManager,
  owner: FundsOwner,
  orderId: string,
  holdSeq: number,
): Promise<boolean> {
  await lockSellerFunds(tx, owner);
  const row = await lockedRecord(tx, owner, orderId);
  if (!row || row.position !== 'REFUND_HELD' || row.refundHoldSeq > holdSeq) return false;
  await release(tx, owner, row, 'refund not made (PSP)');
  return true;
}
