import {
  OutboxMessageSchema,
  insertPart,
  outboxRow,
  rowsOf,
  type OutgoingMessage,
  type Sql,
} from '@seller-api/service-kit';
import type { MirroredOrder } from '../domain/order-status';
import { MIRRORED_COLUMNS, mirroredOrderOf, type MirroredRow } from './charge-mirror';

/** At most this many orders per transaction of the overdue job. */
export const OVERDUE_BATCH = 100;

// The PENDING due-date orders whose effective due date is before $1 (today in São Paulo), still payable
// today (one past its last payable date is about to expire: order.overdue would tell its payer it can
// still pay), and whose order.overdue was not queued yet, on orders_overdue_idx. SKIP LOCKED: replicas running the job at
// once claim different orders, and an order the mirror is changing waits for the next run.
const CLAIM = `select ${MIRRORED_COLUMNS} from orders.orders o
 where o.status = 'PENDING' and o.effective_due_date is not null and o.effective_due_date < $1::date
   and o.last_payable_date >= $1::date and o.overdue_notified_at is null
 order by o.effective_due_date, o.id
 limit $2 for update of o skip locked`;

/**
 * Marks a batch of overdue orders notified and queues their order.overdue, in one transaction: each
 * order gets its event once (docs/pix.md, "Due-date charges"). `event` makes an order's event. Answers
 * how many orders it notified.
 */
export async function notifyOverdueBatch(
  sql: Sql,
  today: string,
  now: Date,
  event: (order: MirroredOrder) => OutgoingMessage,
): Promise<number> {
  return sql.transaction('select 1', async (_opened, query) => {
    const claimed = (await query<MirroredRow>(CLAIM, [today, OVERDUE_BATCH])).map(mirroredOrderOf);
    if (claimed.length === 0) return 0;
    const outbox = insertPart(
      sql,
      rowsOf(
        OutboxMessageSchema,
        claimed.map((order) => outboxRow(event(order))),
      ),
      3,
    );
    // The claimed rows are locked by this transaction: nothing changes their status meanwhile.
    await query(
      `with u as (update orders.orders set overdue_notified_at = $2 where id = any($1::uuid[])),
            e as (${outbox.text})
       select 1`,
      [claimed.map((order) => order.id), now, outbox.value],
    );
    return claimed.length;
  });
}
