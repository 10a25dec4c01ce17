import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { UnprocessableMessageError } from '@seller-api/service-kit';
import { OrderFundsSchema, type OrderFundsRow } from '../db/entities';
import { lockSellerFunds } from '../db/balances';
import type { FundsOwner } from './balance';
import { postEntries } from './journal';
import type { Entry, EntryKind } from './ledger';
import { applyOrderMessage, NEW_ORDER_FUNDS, type OrderFunds, type OrderMessage } from './order-funds';
import { replayOf, type LedgerOrder, type PaidCharge } from './reconciliation';

function toFunds(row: OrderFundsRow | null): OrderFunds {
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
 * store (recordOrderMessage here, the ledger consumer's batches in db/ledger-batches.ts).
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

/**
 * Applies one payments message to an order's record and posts what it causes, in the caller's
 * transaction (the reconciliation's, under the seller's lock taken here). Returns the kinds of the
 * entries posted.
 */
export async function recordOrderMessage(
  em: EntityManager,
  owner: FundsOwner,
  orderId: string,
  message: OrderMessage,
  cause: string,
): Promise<EntryKind[]> {
  await lockSellerFunds(em, owner);
  const row = await em.findOne(OrderFundsSchema, { orderId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
  const next = nextOrderRecord(row, owner, orderId, message, new Date());
  if (row) Object.assign(row, next.row);
  else em.persist(em.create(OrderFundsSchema, next.row));
  await postEntries(em, owner, { orderId, cause }, next.entries);
  return next.entries.map((e) => e.kind);
}

/** The ledger's records of these orders, with when each last took a message (for the reconciliation). */
export async function findLedgerOrders(
  em: EntityManager,
  orderIds: string[],
): Promise<Map<string, LedgerOrder & { updatedAt: Date }>> {
  if (orderIds.length === 0) return new Map();
  const rows = await em.find(OrderFundsSchema, { orderId: { $in: orderIds } });
  return new Map(
    rows.map((row) => [
      row.orderId,
      {
        owner: { sellerId: row.sellerId, environment: row.environment },
        funds: toFunds(row),
        updatedAt: row.updatedAt,
      },
    ]),
  );
}

/**
 * Tells the ledger what payments knows of a charge, through the very path of its events: the amounts as
 * a payment message, then the status and version as a charge message (reconciliation.replayOf), in one
 * transaction under the seller's lock. Idempotent like them: what the ledger already knows changes
 * nothing, so a message arriving at the same time is applied once. Returns what it posted and the
 * record after it.
 */
export async function replayCharge(
  em: EntityManager,
  charge: PaidCharge,
): Promise<{ posted: EntryKind[]; ledger: LedgerOrder | null }> {
  return em.fork().transactional(async (tx) => {
    const posted: EntryKind[] = [];
    const cause = `reconciliation ${charge.status} v${charge.version}`;
    for (const message of replayOf(charge)) {
      posted.push(...(await recordOrderMessage(tx, charge.owner, charge.orderId, message, cause)));
      // The next message locks and reads the record this one wrote.
      await tx.flush();
    }
    const row = await tx.findOne(OrderFundsSchema, { orderId: charge.orderId });
    return {
      posted,
      ledger: row && { owner: { sellerId: row.sellerId, environment: row.environment }, funds: toFunds(row) },
    };
  });
}
