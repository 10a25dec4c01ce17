import type { EntityManager } from '@mikro-orm/postgresql';
import type { Environment } from '@seller-api/contracts';
import { sqlInTransaction, type Sql } from '@seller-api/service-kit';

/** A refund due for a look-up at the PSP (jobs/refund-checks.ts). */
export interface DueRefundCheck {
  transactionId: string;
  orderId: string;
  environment: Environment;
  endToEndId: string;
  attempt: number;
  amountCents: number;
  /** Look-ups made before this one. */
  checks: number;
}

/**
 * Claims up to `limit` refunds whose look-up is due: each one's next look-up is moved `delayMs(checks)`
 * ahead in the same statement, so replicas share the work (SKIP LOCKED) and a replica that dies after
 * claiming only delays that look-up to its next turn. A row locked by a seller's refund in progress is
 * skipped: that request is asking the PSP right now.
 */
export async function claimRefundChecks(
  sql: Sql,
  em: EntityManager,
  now: Date,
  limit: number,
  delayMs: (checks: number) => number,
): Promise<DueRefundCheck[]> {
  return em.fork().transactional(async (tx) => {
    const statements = sqlInTransaction(sql, tx);
    const due = await statements.query<{
      id: string;
      order_id: string;
      environment: Environment;
      end_to_end_id: string;
      refund_attempt: number;
      refund_checks: number;
      gross_amount: string;
    }>(
      `select id, order_id, environment, end_to_end_id, refund_attempt, refund_checks, gross_amount
         from payments.transactions
        where refund_check_at <= $1 and end_to_end_id is not null
        order by refund_check_at
        limit $2 for update skip locked`,
      [now, limit],
    );
    for (const row of due) {
      await statements.query(
        `update payments.transactions set refund_check_at = $1, refund_checks = refund_checks + 1 where id = $2`,
        [new Date(now.getTime() + delayMs(row.refund_checks + 1)), row.id],
      );
    }
    return due.map((row) => ({
      transactionId: row.id,
      orderId: row.order_id,
      environment: row.environment,
      endToEndId: row.end_to_end_id,
      attempt: Math.max(1, row.refund_attempt),
      amountCents: Number(row.gross_amount),
      checks: row.refund_checks,
    }));
  });
}

/**
 * Refunds asked of the PSP before `askedBefore` whose end has not arrived yet, per environment: the
 * alert's figure (docs/runbooks/SellerApiRefundsUnresolved.md).
 */
export async function countUnresolvedRefunds(
  sql: Sql,
  askedBefore: Date,
): Promise<Record<Environment, number>> {
  const rows = await sql.query<{ environment: Environment; count: string }>(
    `select environment, count(*) as count from payments.transactions
      where refund_check_at is not null and refund_asked_at < $1
      group by environment`,
    [askedBefore],
  );
  const counts: Record<Environment, number> = { live: 0, test: 0 };
  for (const row of rows) counts[row.environment] = Number(row.count);
  return counts;
}
