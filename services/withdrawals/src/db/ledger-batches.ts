import type { Environment } from '@seller-api/contracts';
import { insertPart, rowsOf, type Sql, type SqlQuery } from '@seller-api/service-kit';
import type { FundsOwner } from '../domain/balance';
import type { Entry } from '../domain/ledger';
import type { ChargeStatus, FundsPosition } from '../domain/order-funds';
import { OrderFundsSchema, type OrderFundsRow } from './entities';

/**
 * The statements of one batch of the ledger's messages (events/payments.ts), in one transaction on one
 * connection: a handful of round trips and one commit for the whole batch, where a message alone took
 * a transaction of six to nine. The rules are the same as for one message (docs/finance.md, "The
 * ledger"): the sellers' locks first, then the orders' records, read locked.
 */

interface OrderFundsRecord {
  order_id: string;
  seller_id: string;
  environment: Environment;
  gross_amount: string | null;
  fee_amount: string | null;
  net_amount: string | null;
  charge_status: ChargeStatus | null;
  charge_version: number | null;
  position: FundsPosition;
  refund_attempts: number;
  refund_held_at: string | null;
  refund_hold_seq: string;
  refund_hold_first_seq: string;
  updated_at: string;
}

const amount = (value: string | null) => (value === null ? null : Number(value));
// The ORM's pool hands timestamps over as text.
const date = (value: string | null) => (value === null ? null : new Date(value));

/** The records of these orders that exist, locked until the transaction ends, by order id. */
export async function lockOrderRecords(
  query: SqlQuery,
  orderIds: string[],
): Promise<Map<string, OrderFundsRow>> {
  const rows = await query<OrderFundsRecord>(
    `select order_id, seller_id, environment, gross_amount, fee_amount, net_amount, charge_status,
            charge_version, position, refund_attempts, refund_held_at, refund_hold_seq,
            refund_hold_first_seq, updated_at
       from withdrawals.order_funds where order_id = any($1::uuid[]) order by order_id for update`,
    [orderIds],
  );
  return new Map(
    rows.map((r) => [
      r.order_id,
      {
        orderId: r.order_id,
        sellerId: r.seller_id,
        environment: r.environment,
        grossAmount: amount(r.gross_amount),
        feeAmount: amount(r.fee_amount),
        netAmount: amount(r.net_amount),
        chargeStatus: r.charge_status,
        chargeVersion: r.charge_version,
        position: r.position,
        refundAttempts: r.refund_attempts,
        refundHeldAt: date(r.refund_held_at),
        refundHoldSeq: Number(r.refund_hold_seq),
        refundHoldFirstSeq: Number(r.refund_hold_first_seq),
        updatedAt: new Date(r.updated_at),
      },
    ]),
  );
}

/** A settled entry to store, with what it belongs to. */
export interface BatchEntry {
  id: string;
  owner: FundsOwner;
  orderId: string;
  cause: string;
  entry: Entry;
}

const RECORD_COLUMNS = [
  'gross_amount',
  'fee_amount',
  'net_amount',
  'charge_status',
  'charge_version',
  'position',
  'refund_attempts',
  'refund_held_at',
  'refund_hold_seq',
  'refund_hold_first_seq',
  'updated_at',
];

// The rest of writeLedgerBatch's statement after the new records, built once: the changed records ($2),
// the entries ($3) and their lines ($4).
const BATCH_WRITES = `changed as (
       update withdrawals.order_funds f set (${RECORD_COLUMNS.join(', ')}) = (${RECORD_COLUMNS.map((c) => `r.${c}`).join(', ')})
         from json_populate_recordset(null::withdrawals.order_funds, $2::json) r where f.order_id = r.order_id),
     entries as (
       insert into withdrawals.ledger_entries (id, seller_id, environment, kind, order_id, cause)
       select id, seller_id, environment, kind, order_id, cause
         from json_populate_recordset(null::withdrawals.ledger_entries, $3::json))
     insert into withdrawals.ledger_lines (entry_id, seller_id, environment, account, amount)
     select entry_id, seller_id, environment, account, amount
       from json_populate_recordset(null::withdrawals.ledger_lines, $4::json)`;

/**
 * Stores a batch's outcome in one statement: the new records (a plain insert: a record another seller's
 * message created meanwhile is a conflict, never overwritten), the changed ones, the entries and their
 * lines (whose statement trigger adds them to the balances once).
 */
export async function writeLedgerBatch(
  sql: Sql,
  query: SqlQuery,
  batch: { created: OrderFundsRow[]; changed: OrderFundsRow[]; entries: BatchEntry[] },
): Promise<void> {
  const created = insertPart(sql, rowsOf(OrderFundsSchema, batch.created), 1);
  const changed = insertPart(sql, rowsOf(OrderFundsSchema, batch.changed), 2);
  const lines = batch.entries.flatMap(({ id, owner, entry }) =>
    entry.lines.map((line) => ({
      entry_id: id,
      seller_id: owner.sellerId,
      environment: owner.environment,
      account: line.account,
      amount: line.amount,
    })),
  );
  const entries = batch.entries.map(({ id, owner, orderId, cause, entry }) => ({
    id,
    seller_id: owner.sellerId,
    environment: owner.environment,
    kind: entry.kind,
    order_id: orderId,
    cause,
  }));
  await query(`with created as (${created.text}), ${BATCH_WRITES}`, [
    created.value,
    changed.value,
    JSON.stringify(entries),
    JSON.stringify(lines),
  ]);
}
