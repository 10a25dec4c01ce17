import {
  availableChange,
  isBalanced,
  settleAvailable,
  UnbalancedEntryError,
  type Entry,
  type EntryKind,
  type SellerPosition,
} from './ledger';

/** Holds checked against the available balance before they are posted: never settled into debt. */
const HOLDS_CHECKED: ReadonlySet<EntryKind> = new Set(['withdrawal_held', 'refund_held']);

/** What an entry belongs to, and what caused it (a message id, a status), for the reader of the journal. */
export type EntrySubject = ({ orderId: string } | { withdrawalId: string }) & { cause?: string };

/**
 * Settles entries decided by domain/ledger.ts one after another against the seller's position
 * (ledger.settleAvailable), so the available balance never goes below zero: answers the entries as they
 * are to be stored and the position after them. A withdrawal or a refund hold that would take the
 * balance into debt is a bug upstream, refused here rather than settled; so is an entry that does not
 * balance (the database checks that again at commit).
 */
export function settleEntries(
  start: SellerPosition,
  entries: Entry[],
): { entries: Entry[]; position: SellerPosition } {
  let position = start;
  const settledEntries: Entry[] = [];
  for (const decided of entries) {
    const settled = settleAvailable(decided, position);
    if (HOLDS_CHECKED.has(decided.kind) && settled.position.debt !== position.debt) {
      throw new Error(
        `${decided.kind} of ${-availableChange(decided)} cents exceeds the available ${position.available}`,
      );
    }
    if (!isBalanced(settled.entry)) throw new UnbalancedEntryError(settled.entry);
    position = settled.position;
    settledEntries.push(settled.entry);
  }
  return { entries: settledEntries, position };
}
