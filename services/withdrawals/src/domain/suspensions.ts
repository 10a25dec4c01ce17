import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Environment } from '@seller-api/contracts';
import { conflict, inTransaction } from '@seller-api/service-kit';
import { lockSellerFunds } from '../db/balances';
import {
  activeSuspension,
  insertSuspension,
  keepPendingForReview,
  liftSuspension,
  suspensionById,
  type SuspensionRow,
} from '../db/payout-controls';

/**
 * An operator suspends a seller's withdrawals in one environment (docs/finance.md, "Payout controls"):
 * per environment because an operator acts on its own environment only. Taken under the seller's lock,
 * so a request that has not committed yet finishes first and every later one sees the suspension (and
 * two operators suspending at once: the second gets the 409).
 */
export async function suspendSeller(
  em: EntityManager,
  owner: { sellerId: string; environment: Environment },
  by: { userId: string; reason: string },
  now: () => Date = () => new Date(),
): Promise<SuspensionRow> {
  return inTransaction(em, async (tx) => {
    await lockSellerFunds(tx, owner);
    const current = await activeSuspension(tx, owner);
    if (current) {
      throw conflict(
        `This seller's withdrawals are already suspended in ${owner.environment} since ${current.suspendedAt.toISOString()}.`,
      );
    }
    const id = randomUUID();
    await keepPendingForReview(tx, owner);
    await insertSuspension(tx, {
      id,
      ...owner,
      reason: by.reason,
      suspendedAt: now(),
      suspendedBy: by.userId,
    });
    return suspensionById(tx, id);
  });
}

/** Lifts the suspension in force, keeping it with who lifted it, when and why; none: 409. */
export async function unsuspendSeller(
  em: EntityManager,
  owner: { sellerId: string; environment: Environment },
  by: { userId: string; reason: string },
  now: () => Date = () => new Date(),
): Promise<SuspensionRow> {
  return inTransaction(em, async (tx) => {
    await lockSellerFunds(tx, owner);
    const id = await liftSuspension(tx, owner, {
      liftedAt: now(),
      liftedBy: by.userId,
      liftReason: by.reason,
    });
    if (!id) throw conflict(`This seller's withdrawals are not suspended in ${owner.environment}.`);
    return suspensionById(tx, id);
  });
}
