import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { FundsOwner } from '../domain/balance';
import type { EntrySubject } from '../domain/journal';
import type { Entry } from '../domain/ledger';

/** Inserts settled entries and their lines (domain/journal.ts postEntries), in the caller's transaction. */
export async function insertEntries(
  em: EntityManager,
  owner: FundsOwner,
  subject: EntrySubject,
  entries: Entry[],
): Promise<void> {
  for (const entry of entries) {
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
