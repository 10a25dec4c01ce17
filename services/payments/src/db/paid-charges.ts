import {
  PaidChargeStatus,
  type ReconciliationCharge,
  type ReconciliationChargesQuery,
} from '@seller-api/contracts';
import { decodeCursor, encodeCursor, type Sql } from '@seller-api/service-kit';

interface Row {
  order_id: string;
  seller_id: string;
  environment: ReconciliationCharge['environment'];
  gross_amount: string;
  fee_amount: string;
  net_amount: string;
  charge_status: ReconciliationCharge['charge_status'];
  version: number;
  status_changed_at: Date | string;
}

// Written out as the index's predicate (migration 20261206), so the planner can use it.
const PAID = PaidChargeStatus.options.map((status) => `'${status}'`).join(', ');

/**
 * The charges of one environment that were ever paid (PAID, MED, REFUNDED, CHARGEBACK: no charge gets
 * there without a payment), whose last status change falls in `[changed_after, changed_before)`, oldest
 * change first, one keyset page on (status_changed_at, order_id): a charge that changes while a reader
 * pages moves past the end and is met again by a later window, never skipped. For the ledger's
 * reconciliation (docs/finance.md).
 */
export async function listPaidCharges(
  sql: Sql,
  query: ReconciliationChargesQuery,
): Promise<{ results: ReconciliationCharge[]; next: string | null }> {
  const values: unknown[] = [query.environment];
  // The next parameter's placeholder, for the value pushed right after.
  const param = () => `$${values.length + 1}`;
  const where = [`environment = $1`, `charge_status in (${PAID})`, `status_changed_at is not null`];
  if (query.changed_after) {
    where.push(`status_changed_at >= ${param()}`);
    values.push(new Date(query.changed_after).toISOString());
  }
  if (query.changed_before) {
    where.push(`status_changed_at < ${param()}`);
    values.push(new Date(query.changed_before).toISOString());
  }
  if (query.cursor) {
    const after = decodeCursor(query.cursor);
    where.push(`(status_changed_at, order_id) > (${param()}, $${values.length + 2})`);
    values.push(after.createdAt.toISOString(), after.id);
  }
  const rows = await sql.query<Row>(
    `select order_id, seller_id, environment, gross_amount, fee_amount, net_amount, charge_status, version,
            status_changed_at
       from payments.transactions
      where ${where.join(' and ')}
      order by status_changed_at, order_id
      limit ${param()}`,
    [...values, query.limit + 1],
    // Planned at every run, as when the ORM inlined it: a range whose best plan depends on its bounds.
    { planEachRun: true },
  );
  const page = rows.slice(0, query.limit);
  const last = page[page.length - 1];
  return {
    results: page.map(toCharge),
    next:
      rows.length > query.limit && last
        ? encodeCursor({ createdAt: new Date(last.status_changed_at), id: last.order_id })
        : null,
  };
}

function toCharge(row: Row): ReconciliationCharge {
  return {
    order_uuid: row.order_id,
    seller_id: row.seller_id,
    environment: row.environment,
    gross_amount: Number(row.gross_amount),
    fee_amount: Number(row.fee_amount),
    net_amount: Number(row.net_amount),
    charge_status: row.charge_status,
    version: row.version,
    status_changed_at: new Date(row.status_changed_at).toISOString(),
  };
}
