import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { OrderFundsSchema, type OrderFundsRow } from '../db/entities';
import { lockSellerFunds, type FundsOwner } from './balance';
import { postEntries } from './journal';
import type { EntryKind } from './ledger';
import { applyOrderMessage, NEW_ORDER_FUNDS, type OrderFunds, type OrderMessage } from './order-funds';

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
 * Applies one payments message to an order's record and posts what it causes, in the caller's
 * transaction (the idempotent consumer's, which also records the message id: applied exactly once).
 * Returns the kinds of the entries posted.
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
  if (row && (row.sellerId !== owner.sellerId || row.environment !== owner.environment)) {
    // Payments never moves an order between sellers; a message that says so is refused, not applied.
    throw new Error(`order ${orderId} belongs to another seller or environment`);
  }
  const { funds, entries } = applyOrderMessage(toFunds(row), message);
  const values = {
    grossAmount: funds.amounts?.gross ?? null,
    feeAmount: funds.amounts?.fee ?? null,
    netAmount: funds.amounts?.net ?? null,
    chargeStatus: funds.status,
    chargeVersion: funds.version,
    position: funds.position,
    updatedAt: new Date(),
  };
  if (row) Object.assign(row, values);
  else em.persist(em.create(OrderFundsSchema, { orderId, ...owner, ...values }));
  await postEntries(em, owner, { orderId, cause }, entries);
  return entries.map((e) => e.kind);
}
