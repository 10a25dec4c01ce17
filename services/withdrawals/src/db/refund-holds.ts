import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { RefundHold, RefundHoldRequest, RefundRelease } from '@seller-api/contracts';
import { HttpError, notFound, sqlInTransaction, type Sql } from '@seller-api/service-kit';
import type { FundsOwner } from '../domain/balance';
import { checkRefund, refundReleased } from '../domain/ledger';
import {
  amountsOf,
  attemptGivenBack,
  failureReleases,
  heldAgain,
  heldFirst,
  planHold,
  released,
  staleHoldReleases,
} from '../domain/refund-holds';
import { availableOf, lockSellerFunds } from './balances';
import { OrderFundsSchema, type OrderFundsRow } from './entities';
import { postEntries } from './journal';

/**
 * Refund holds on the orders' records (`order_funds`), their rules in domain/refund-holds.ts. Each
 * change is one transaction that takes the seller's lock first, then the record's row lock: the order
 * every writer of this seller's money follows.
 */

async function lockedRecord(tx: EntityManager, owner: FundsOwner, orderId: string) {
  const row = await tx.findOne(OrderFundsSchema, { orderId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
  // Another seller's or environment's order does not exist for this caller.
  if (row && (row.sellerId !== owner.sellerId || row.environment !== owner.environment))
    throw notFound('Order not found.');
  return row;
}

/**
 * Reserves the order's net for a refund, or says why there is nothing to reserve (planHold). 409
 * `insufficient_balance` when the available balance does not cover the net; nothing is changed then.
 */
export async function holdRefund(
  em: EntityManager,
  sql: Sql,
  owner: FundsOwner,
  orderId: string,
  known: RefundHoldRequest,
  now: Date = new Date(),
): Promise<RefundHold> {
  return em.fork().transactional(async (tx) => {
    const inTx = sqlInTransaction(sql, tx);
    await lockSellerFunds(inTx, owner);
    const row = await lockedRecord(tx, owner, orderId);
    const plan = planHold(row, orderId, known);
    if (plan.kind === 'answer') return plan.answer;
    if (!row) throw new Error(`refund hold of order ${orderId} without its record`);
    if (plan.kind === 'again') {
      Object.assign(row, heldAgain(row, now));
      return {
        order_uuid: orderId,
        held: true,
        charge_status: row.chargeStatus,
        hold_seq: row.refundHoldSeq,
      };
    }
    const decided = checkRefund(await availableOf(inTx, owner), plan.amounts);
    if (!decided.ok) throw new HttpError(409, 'insufficient_balance', decided.message);
    await postEntries(inTx, owner, { orderId, cause: 'refund requested' }, [decided.entry]);
    Object.assign(row, heldFirst(row, now));
    return { order_uuid: orderId, held: true, charge_status: row.chargeStatus, hold_seq: row.refundHoldSeq };
  });
}

/** Releases the hold's net to the available balance, on the locked row, in the caller's transaction. */
async function release(inTx: Sql, owner: FundsOwner, row: OrderFundsRow, cause: string) {
  const amounts = amountsOf(row);
  if (!amounts) throw new Error(`refund hold of order ${row.orderId} without amounts`);
  await postEntries(inTx, owner, { orderId: row.orderId, cause }, [refundReleased(amounts)]);
  Object.assign(row, released(new Date()));
}

/**
 * A refund attempt that certainly refunded nothing: it gives its count back, and the last one releases
 * the net (attemptGivenBack). Nothing to release is no error.
 */
export async function releaseRefund(
  em: EntityManager,
  sql: Sql,
  owner: FundsOwner,
  orderId: string,
  holdSeq?: number,
): Promise<RefundRelease> {
  return em.fork().transactional(async (tx) => {
    const inTx = sqlInTransaction(sql, tx);
    await lockSellerFunds(inTx, owner);
    const row = await lockedRecord(tx, owner, orderId);
    const given = attemptGivenBack(row, holdSeq);
    if (!row || !given) return { order_uuid: orderId, released: false };
    row.refundAttempts = given.refundAttempts;
    if (!given.release) return { order_uuid: orderId, released: false };
    await release(inTx, owner, row, 'refund not made');
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

/** The sweep's release of a hold payments did not refund (staleHoldReleases). True when released. */
export async function releaseStaleHold(
  em: EntityManager,
  sql: Sql,
  owner: FundsOwner,
  orderId: string,
  heldAt: Date,
): Promise<boolean> {
  return em.fork().transactional(async (tx) => {
    const inTx = sqlInTransaction(sql, tx);
    await lockSellerFunds(inTx, owner);
    const row = await lockedRecord(tx, owner, orderId);
    if (!staleHoldReleases(row, heldAt)) return false;
    await release(inTx, owner, row, 'refund not made (sweep)');
    return true;
  });
}

/**
 * A refund the PSP did not make (payments' message with a FAILED refund), in the consumer's transaction
 * `tx`: the hold is released whole unless a newer one was reserved since (failureReleases). Releasing
 * is once (the position moves), so orders' release of an attempt it was answered a refusal for, or the
 * sweep's, never adds a second. True when it released the net.
 */
export async function releaseFailedRefund(
  tx: EntityManager,
  sql: Sql,
  owner: FundsOwner,
  orderId: string,
  holdSeq: number,
): Promise<boolean> {
  const inTx = sqlInTransaction(sql, tx);
  await lockSellerFunds(inTx, owner);
  const row = await lockedRecord(tx, owner, orderId);
  if (!failureReleases(row, holdSeq)) return false;
  await release(inTx, owner, row, 'refund not made (PSP)');
  return true;
}
