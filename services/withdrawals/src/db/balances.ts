import type { EntityManager } from '@mikro-orm/postgresql';
import { inTransaction, sqlInTransaction, type Sql, type SqlQuery } from '@seller-api/service-kit';
import { ownerKey, type FundsOwner } from '../domain/balance';
import {
  ACCOUNTS,
  emptyTotals,
  sellerBalance,
  type Account,
  type SellerBalance,
  type SellerPosition,
} from '../domain/ledger';

// The first key of the two-key advisory lock: a namespace, so these locks never meet another purpose's
// (the two-key and one-key lock spaces of PostgreSQL do not overlap either).
const LOCK_NAMESPACE = `hashtext('withdrawals.seller_funds')`;

/**
 * Serialises every change to one seller's balance (in one environment) until the transaction ends: a
 * withdrawal request, a ledger posting from a payment event, a denial, a payout. Whoever holds it reads
 * the balance after every earlier holder committed, so "check, then hold" cannot be raced. Take it
 * before any row lock, always, so two transactions never wait on each other in opposite orders.
 */
export async function lockSellerFunds(sql: Sql, owner: FundsOwner): Promise<void> {
  await sql.query(`select pg_advisory_xact_lock(${LOCK_NAMESPACE}, hashtext($1::text || ':' || $2::text))`, [
    owner.sellerId,
    owner.environment,
  ]);
}

/**
 * Runs `work` in a transaction that holds the seller's lock from its first statement: `tx` for the
 * ORM, `inTx` for hand-written statements on the same connection.
 */
export function underSellerLock<T>(
  em: EntityManager,
  sql: Sql,
  owner: FundsOwner,
  work: (tx: EntityManager, inTx: Sql) => Promise<T>,
): Promise<T> {
  return inTransaction(em, async (tx) => {
    const inTx = sqlInTransaction(sql, tx);
    await lockSellerFunds(inTx, owner);
    return work(tx, inTx);
  });
}

/**
 * The seller's balance per account, read now (within the caller's transaction, if any): the rows of
 * `withdrawals.ledger_balances`, which the database keeps equal to the sums of the journal's lines in
 * the transaction of every line (docs/finance.md, "The balance"). One lookup on their primary key,
 * whatever the length of the journal; an account without a row has no line yet.
 */
export async function accountTotals(sql: Sql, owner: FundsOwner) {
  const rows = await sql.query<{ account: Account; amount: string }>(
    `select account, amount from withdrawals.ledger_balances where seller_id = $1 and environment = $2`,
    [owner.sellerId, owner.environment],
  );
  const totals = emptyTotals();
  for (const row of rows) totals[row.account] = Number(row.amount);
  return totals;
}

/** `GET /finance/balance/`: the balance rows, read on every request. */
export async function balanceOf(sql: Sql, owner: FundsOwner): Promise<SellerBalance> {
  return sellerBalance(await accountTotals(sql, owner));
}

/** The available balance alone (for the withdrawal check). */
export async function availableOf(sql: Sql, owner: FundsOwner): Promise<number> {
  const rows = await sql.query<{ amount: string }>(
    `select amount from withdrawals.ledger_balances where seller_id = $1 and environment = $2 and account = $3`,
    [owner.sellerId, owner.environment, ACCOUNTS.SELLER_AVAILABLE],
  );
  return Number(rows[0]?.amount ?? 0);
}

/**
 * The available balance and the seller's debt (ledger.settleAvailable), read under the seller's lock:
 * every earlier holder has committed, so its lines and the balance rows they moved are both visible.
 * The lines posted next then row-lock these rows (the trigger's upsert) until commit.
 */
export async function positionOf(sql: Sql, owner: FundsOwner): Promise<SellerPosition> {
  const rows = await sql.query<{ account: Account; amount: string }>(
    `select account, amount from withdrawals.ledger_balances
      where seller_id = $1 and environment = $2 and account in ($3, $4)`,
    [owner.sellerId, owner.environment, ACCOUNTS.SELLER_AVAILABLE, ACCOUNTS.SELLER_DEBT],
  );
  const amount = (account: Account) => Number(rows.find((row) => row.account === account)?.amount ?? 0);
  return { available: amount(ACCOUNTS.SELLER_AVAILABLE), debt: amount(ACCOUNTS.SELLER_DEBT) };
}

/**
 * Takes the sellers' locks (lockSellerFunds, the same keys), in one fixed order, so two batches
 * that share sellers never wait on each other in opposite orders; every other holder takes one only.
 */
export async function lockSellers(query: SqlQuery, owners: FundsOwner[]): Promise<void> {
  const sorted = [...owners].sort((a, b) => (ownerKey(a) < ownerKey(b) ? -1 : 1));
  await query(
    `select pg_advisory_xact_lock(${LOCK_NAMESPACE}, hashtext(o.seller_id || ':' || o.environment))::text as locked
       from (select * from unnest($1::text[], $2::text[]) with ordinality as u(seller_id, environment, n)
              order by n) o`,
    [sorted.map((o) => o.sellerId), sorted.map((o) => o.environment)],
  );
}

/** The sellers' positions (positionOf), read under their locks, by ownerKey. */
export async function positionsOf(
  query: SqlQuery,
  owners: FundsOwner[],
): Promise<Map<string, SellerPosition>> {
  const rows = await query<{ seller_id: string; environment: string; account: string; amount: string }>(
    `select b.seller_id, b.environment, b.account, b.amount
       from unnest($1::uuid[], $2::text[]) as o(seller_id, environment)
       join withdrawals.ledger_balances b
         on b.seller_id = o.seller_id and b.environment = o.environment and b.account in ($3, $4)`,
    [
      owners.map((o) => o.sellerId),
      owners.map((o) => o.environment),
      ACCOUNTS.SELLER_AVAILABLE,
      ACCOUNTS.SELLER_DEBT,
    ],
  );
  const positions = new Map<string, SellerPosition>(
    owners.map((o) => [ownerKey(o), { available: 0, debt: 0 }]),
  );
  for (const row of rows) {
    const position = positions.get(`${row.seller_id}:${row.environment}`);
    if (!position) continue;
    if (row.account === ACCOUNTS.SELLER_AVAILABLE) position.available = Number(row.amount);
    else position.debt = Number(row.amount);
  }
  return positions;
}
