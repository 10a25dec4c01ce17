import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { sqlInTransaction, type Sql } from '@seller-api/service-kit';
import type { FundsOwner } from '../domain/balance';
import type { EntryKind } from '../domain/ledger';
import type { OrderMessage } from '../domain/order-funds';
import { nextOrderRecord, toFunds } from '../domain/order-ledger';
import { replayOf, type LedgerOrder, type PaidCharge } from '../domain/reconciliation';
import { lockSellerFunds } from './balances';
import { OrderFundsSchema } from './entities';
import { postEntries } from './journal';

/**
 * The ledger's record of each order (`order_funds`) one message at a time: the path of a batch with a
 * failed refund in it (events/payments.ts) and of the reconciliation's replays. The usual batches of
 * the ledger consumer: db/ledger-batches.ts, with the same rule (domain/order-ledger.ts).
 */

/**
 * Applies one payments message to an order's record and posts what it causes, in the caller's
 * transaction `tx` (the reconciliation's, or the consumer's; `sql`'s statements run on its connection),
 * under the seller's lock taken here. Returns the kinds of the entries posted.
 */
export async function recordOrderMessage(
  tx: EntityManager,
  sql: Sql,
  owner: FundsOwner,
  orderId: string,
  message: OrderMessage,
  cause: string,
): Promise<EntryKind[]> {
  const inTx = sqlInTransaction(sql, tx);
  await lockSellerFunds(inTx, owner);
  const row = await tx.findOne(OrderFundsSchema, { orderId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
  const next = nextOrderRecord(row, owner, orderId, message, new Date());
  if (row) Object.assign(row, next.row);
  else tx.persist(tx.create(OrderFundsSchema, next.row));
  await postEntries(inTx, owner, { orderId, cause }, next.entries);
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
  sql: Sql,
  charge: PaidCharge,
): Promise<{ posted: EntryKind[]; ledger: LedgerOrder | null }> {
  return em.fork().transactional(async (tx) => {
    const posted: EntryKind[] = [];
    const cause = `reconciliation ${charge.status} v${charge.version}`;
    for (const message of replayOf(charge)) {
      posted.push(...(await recordOrderMessage(tx, sql, charge.owner, charge.orderId, message, cause)));
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
