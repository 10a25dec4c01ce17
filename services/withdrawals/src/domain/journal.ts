import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { positionOf, type FundsOwner } from './balance';
import {
  availableChange,
  isBalanced,
  settleAvailable,
  UnbalancedEntryError,
  type Entry,
  type EntryKind,
} from './ledger';

/** Holds checked against the available balance before they are posted: never settled into debt. */
const HOLDS_CHECKED: ReadonlySet<EntryKind> = new Set(['withdrawal_held', 'refund_held']);

/** What an entry belongs to, and what caused it (a message id, a status), for the reader of the journal. */
export type EntrySubject = ({ orderId: string } | { withdrawalId: string }) & { cause?: string };

/**
 * Stores entries decided by domain/ledger.ts, in the caller's transaction, which must hold the seller's
 * lock (balance.lockSellerFunds): each is first settled against the seller's position read here, so the
 * available balance never goes below zero (ledger.settleAvailable). The database checks again at commit
 * that each entry balances.
 */
export async function postEntries(
  em: EntityManager,
  owner: FundsOwner,
  subject: EntrySubject,
  entries: Entry[],
): Promise<void> {
  if (entries.length === 0) return;
  let position = await positionOf(em, owner);
  for (const decided of entries) {
    const settled = settleAvailable(decided, position);
    // A withdrawal or a refund hold is checked against the available balance under the seller's lock:
    // one that would take it into debt is a bug upstream, refused here rather than settled.
    if (HOLDS_CHECKED.has(decided.kind) && settled.position.debt !== position.debt) {
      throw new Error(
        `${decided.kind} of ${-availableChange(decided)} cents exceeds the available ${position.available}`,
      );
    }
    position = settled.position;
    const entry = settled.entry;
    if (!isBalanced(entry)) throw new UnbalancedEntryError(entry);
    const id = randomUUID();
    await em.execute(
      `insert into withdrawals.ledger_entries (id, seller_id, environment, kind, order_id, withdrawal_id, cause)
       values (?, ?, ?, ?, ?, ?, ?)`,
      [
        id,
        owner.sellerId,
        owner.environment,
        entry.kind,
        'orderId' in subject ? subject.orderId : null,
        'withdrawalId' in subject ? subject.withdrawalId : null,
        subject.cause ?? null,
      ],
    );
    if (entry.lines.length === 0) continue;
    const values = entry.lines.map(() => '(?, ?, ?, ?, ?)').join(', ');
    await em.execute(
      `insert into withdrawals.ledger_lines (entry_id, seller_id, environment, account, amount) values ${values}`,
      entry.lines.flatMap((line) => [id, owner.sellerId, owner.environment, line.account, line.amount]),
    );
  }
}
