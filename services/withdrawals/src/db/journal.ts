import { randomUUID } from 'node:crypto';
import type { Sql } from '@seller-api/service-kit';
import type { FundsOwner } from '../domain/balance';
import { settleEntries, type EntrySubject } from '../domain/journal';
import type { Entry } from '../domain/ledger';
import { positionOf } from './balances';

/**
 * Stores entries decided by domain/ledger.ts, in the caller's transaction (`sql` runs on its
 * connection: sqlInTransaction), which must hold the seller's lock (lockSellerFunds): each is first
 * settled against the seller's position read here (domain/journal.ts, settleEntries).
 */
export async function postEntries(
  sql: Sql,
  owner: FundsOwner,
  subject: EntrySubject,
  entries: Entry[],
): Promise<void> {
  if (entries.length === 0) return;
  await insertEntries(sql, owner, subject, settleEntries(await positionOf(sql, owner), entries).entries);
}

/** Inserts settled entries and their lines (postEntries), in the caller's transaction. */
export async function insertEntries(
  sql: Sql,
  owner: FundsOwner,
  subject: EntrySubject,
  entries: Entry[],
): Promise<void> {
  for (const entry of entries) {
    const id = randomUUID();
    await sql.query(
      `insert into withdrawals.ledger_entries (id, seller_id, environment, kind, order_id, withdrawal_id, cause)
       values ($1, $2, $3, $4, $5, $6, $7)`,
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
    const values = entry.lines
      .map((_, i) => `($${i * 5 + 1}, $${i * 5 + 2}, $${i * 5 + 3}, $${i * 5 + 4}, $${i * 5 + 5})`)
      .join(', ');
    await sql.query(
      `insert into withdrawals.ledger_lines (entry_id, seller_id, environment, account, amount) values ${values}`,
      entry.lines.flatMap((line) => [id, owner.sellerId, owner.environment, line.account, line.amount]),
    );
  }
}
