import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Environment, PixKeyType } from '@seller-api/contracts';
import { conflict, type Sql } from '@seller-api/service-kit';
import type { FundsOwner } from '../domain/balance';
import type { AutoApprovalUsage } from '../domain/payout-controls';
import { underSellerLock } from './balances';

/**
 * The payout controls' reads and writes (docs/finance.md, "Payout controls"): the automatic approvals
 * counted by the rolling caps, the PIX keys a seller was paid to, and sellers' withdrawal suspensions.
 * In a transaction, `sql` runs on its connection (sqlInTransaction).
 */

/**
 * The seller's withdrawals cleared for the automatic approval since `since` whose money left or may
 * still leave without an operator (PENDING, APPROVED, PROCESSING, PAID): a denied, canceled or failed
 * one moved nothing, so it no longer counts. Read under the seller's lock, which every status change
 * of these statuses but the worker's (APPROVED, PROCESSING: both still counted) also takes.
 */
export async function autoApprovalUsage(
  sql: Sql,
  owner: FundsOwner,
  since: Date,
): Promise<AutoApprovalUsage> {
  const rows = await sql.query<{ count: string; amount: string }>(
    `select count(*) as count, coalesce(sum(amount), 0) as amount from withdrawals.withdrawals
      where seller_id = $1 and environment = $2 and auto_approvable and created_at > $3
        and status in ('PENDING', 'APPROVED', 'PROCESSING', 'PAID')`,
    [owner.sellerId, owner.environment, since],
  );
  return { count: Number(rows[0]?.count ?? 0), amount: Number(rows[0]?.amount ?? 0) };
}

/** Whether a withdrawal of this seller to this key was ever PAID (the key is known to work and be theirs). */
export async function isKnownPixKey(
  sql: Sql,
  owner: FundsOwner,
  pixKey: string,
  pixKeyType: PixKeyType,
): Promise<boolean> {
  const rows = await sql.query<{ known: boolean }>(
    `select exists (select 1 from withdrawals.withdrawals
      where seller_id = $1 and environment = $2 and pix_key_type = $3 and pix_key = $4 and status = 'PAID') as known`,
    [owner.sellerId, owner.environment, pixKeyType, pixKey],
  );
  return rows[0]?.known === true;
}

export interface SuspensionRow {
  id: string;
  sellerId: string;
  environment: Environment;
  /** The seller's name on its latest withdrawal, if it ever made one. */
  sellerName: string | null;
  reason: string;
  suspendedAt: Date;
  suspendedBy: string;
  liftedAt: Date | null;
  liftedBy: string | null;
  liftReason: string | null;
}

interface SuspensionRecord {
  id: string;
  seller_id: string;
  environment: Environment;
  seller_name: string | null;
  reason: string;
  suspended_at: Date;
  suspended_by: string;
  lifted_at: Date | null;
  lifted_by: string | null;
  lift_reason: string | null;
}

const SUSPENSION_COLUMNS = `s.id, s.seller_id, s.environment, s.reason, s.suspended_at, s.suspended_by,
  s.lifted_at, s.lifted_by, s.lift_reason,
  (select w.seller_name from withdrawals.withdrawals w
    where w.seller_id = s.seller_id and w.environment = s.environment
    order by w.created_at desc limit 1) as seller_name`;

const toRow = (r: SuspensionRecord): SuspensionRow => ({
  id: r.id,
  sellerId: r.seller_id,
  environment: r.environment,
  sellerName: r.seller_name,
  reason: r.reason,
  suspendedAt: new Date(r.suspended_at),
  suspendedBy: r.suspended_by,
  liftedAt: r.lifted_at ? new Date(r.lifted_at) : null,
  liftedBy: r.lifted_by,
  liftReason: r.lift_reason,
});

/** The suspension in force for this seller and environment, or null. */
export async function activeSuspension(sql: Sql, owner: FundsOwner): Promise<SuspensionRow | null> {
  const rows = await sql.query<SuspensionRecord>(
    `select ${SUSPENSION_COLUMNS} from withdrawals.seller_suspensions s
      where s.seller_id = $1 and s.environment = $2 and s.lifted_at is null`,
    [owner.sellerId, owner.environment],
  );
  return rows[0] ? toRow(rows[0]) : null;
}

/** The suspensions in force of these sellers in one environment, by seller id (the operators' queue). */
export async function activeSuspensionsOf(
  sql: Sql,
  environment: Environment,
  sellerIds: string[],
): Promise<Map<string, SuspensionRow>> {
  if (sellerIds.length === 0) return new Map();
  const rows = await sql.query<SuspensionRecord>(
    `select ${SUSPENSION_COLUMNS} from withdrawals.seller_suspensions s
      where s.environment = $1 and s.lifted_at is null and s.seller_id = any($2::uuid[])`,
    [environment, [...new Set(sellerIds)]],
  );
  return new Map(rows.map((r) => [r.seller_id, toRow(r)]));
}

/**
 * A seller's withdrawals waiting for automatic approval when the seller is suspended: kept for an
 * operator (`seller_suspended`), so lifting a suspension never lets them out unreviewed, nor lets the
 * caps count them out of their 24 h (docs/finance.md, "Payout controls").
 */
export async function keepPendingForReview(sql: Sql, owner: FundsOwner): Promise<void> {
  await sql.query(
    `update withdrawals.withdrawals
        set auto_approvable = false, review_reasons = array_append(review_reasons, 'seller_suspended')
      where seller_id = $1 and environment = $2 and status = 'PENDING' and auto_approvable`,
    [owner.sellerId, owner.environment],
  );
}

export async function insertSuspension(
  sql: Sql,
  row: Pick<SuspensionRow, 'id' | 'sellerId' | 'environment' | 'reason' | 'suspendedAt' | 'suspendedBy'>,
): Promise<void> {
  await sql.query(
    `insert into withdrawals.seller_suspensions (id, seller_id, environment, reason, suspended_at, suspended_by)
     values ($1, $2, $3, $4, $5, $6)`,
    [row.id, row.sellerId, row.environment, row.reason, row.suspendedAt, row.suspendedBy],
  );
}

/** Lifts the suspension in force; false when there was none. */
export async function liftSuspension(
  sql: Sql,
  owner: FundsOwner,
  lift: { liftedAt: Date; liftedBy: string; liftReason: string },
): Promise<string | null> {
  const rows = await sql.query<{ id: string }>(
    `update withdrawals.seller_suspensions set lifted_at = $1, lifted_by = $2, lift_reason = $3
      where seller_id = $4 and environment = $5 and lifted_at is null returning id`,
    [lift.liftedAt, lift.liftedBy, lift.liftReason, owner.sellerId, owner.environment],
  );
  return rows[0]?.id ?? null;
}

export async function suspensionById(sql: Sql, id: string): Promise<SuspensionRow> {
  const rows = await sql.query<SuspensionRecord>(
    `select ${SUSPENSION_COLUMNS} from withdrawals.seller_suspensions s where s.id = $1`,
    [id],
  );
  if (!rows[0]) throw new Error(`suspension ${id} vanished`);
  return toRow(rows[0]);
}

/**
 * An operator suspends a seller's withdrawals in one environment (docs/finance.md, "Payout controls"):
 * per environment because an operator acts on its own environment only. Taken under the seller's lock,
 * so a request that has not committed yet finishes first and every later one sees the suspension (and
 * two operators suspending at once: the second gets the 409).
 */
export async function suspendSeller(
  em: EntityManager,
  sql: Sql,
  owner: FundsOwner,
  by: { userId: string; reason: string },
  now: () => Date = () => new Date(),
): Promise<SuspensionRow> {
  return underSellerLock(em, sql, owner, async (_tx, inTx) => {
    const current = await activeSuspension(inTx, owner);
    if (current) {
      throw conflict(
        `This seller's withdrawals are already suspended in ${owner.environment} since ${current.suspendedAt.toISOString()}.`,
      );
    }
    const id = randomUUID();
    await keepPendingForReview(inTx, owner);
    await insertSuspension(inTx, {
      id,
      ...owner,
      reason: by.reason,
      suspendedAt: now(),
      suspendedBy: by.userId,
    });
    return suspensionById(inTx, id);
  });
}

/** Lifts the suspension in force, keeping it with who lifted it, when and why; none: 409. */
export async function unsuspendSeller(
  em: EntityManager,
  sql: Sql,
  owner: FundsOwner,
  by: { userId: string; reason: string },
  now: () => Date = () => new Date(),
): Promise<SuspensionRow> {
  return underSellerLock(em, sql, owner, async (_tx, inTx) => {
    const id = await liftSuspension(inTx, owner, {
      liftedAt: now(),
      liftedBy: by.userId,
      liftReason: by.reason,
    });
    if (!id) throw conflict(`This seller's withdrawals are not suspended in ${owner.environment}.`);
    return suspensionById(inTx, id);
  });
}

/** Keyset cursor of the suspensions list: (suspended_at, id) of the last row of the page. */
export interface SuspensionCursor {
  at: Date;
  id: string;
}

/** An environment's suspensions, newest first: in force only, or all; of one seller, or all. */
export async function listSuspensions(
  sql: Sql,
  query: {
    environment: Environment;
    active: boolean;
    sellerId?: string;
    after: SuspensionCursor | null;
    limit: number;
  },
): Promise<SuspensionRow[]> {
  const params: unknown[] = [];
  const param = (value: unknown) => `$${params.push(value)}`;
  const where = [`s.environment = ${param(query.environment)}`];
  if (query.active) where.push('s.lifted_at is null');
  if (query.sellerId) where.push(`s.seller_id = ${param(query.sellerId)}`);
  if (query.after)
    where.push(`(s.suspended_at, s.id) < (${param(query.after.at)}, ${param(query.after.id)})`);
  const limit = param(query.limit);
  const rows = await sql.query<SuspensionRecord>(
    `select ${SUSPENSION_COLUMNS} from withdrawals.seller_suspensions s where ${where.join(' and ')}
      order by s.suspended_at desc, s.id desc limit ${limit}`,
    params,
    // Planned at every run, as when the ORM inlined it: the text varies with the filters, and each
    // variant would otherwise take one of the connection's prepared-statement names.
    { planEachRun: true },
  );
  return rows.map(toRow);
}

/**
 * Ids of PENDING withdrawals the worker may approve now, locked (SKIP LOCKED: never waits on a request
 * or an operator): cleared by their request, below the limit, of a seller not suspended.
 */
export async function lockAutoApprovable(
  sql: Sql,
  autoApproveBelow: number,
  limit: number,
): Promise<string[]> {
  const rows = await sql.query<{ id: string }>(
    `select w.id from withdrawals.withdrawals w
      where w.status = 'PENDING' and w.auto_approvable and w.amount < $1
        and not exists (select 1 from withdrawals.seller_suspensions s
          where s.seller_id = w.seller_id and s.environment = w.environment and s.lifted_at is null)
      order by w.created_at limit $2 for update of w skip locked`,
    [autoApproveBelow, limit],
  );
  return rows.map((r) => r.id);
}

/**
 * Ids of payouts to make, locked (SKIP LOCKED): APPROVED withdrawals of sellers not suspended, and
 * PROCESSING ones whose lease ran out (already at the PSP: followed whatever the seller's state).
 */
export async function lockPayoutsDue(sql: Sql, leaseBefore: Date, limit: number): Promise<string[]> {
  const rows = await sql.query<{ id: string }>(
    `select w.id from withdrawals.withdrawals w
      where (w.status = 'APPROVED' and not exists (select 1 from withdrawals.seller_suspensions s
              where s.seller_id = w.seller_id and s.environment = w.environment and s.lifted_at is null))
         or (w.status = 'PROCESSING' and w.processing_at <= $1)
      order by w.created_at limit $2 for update of w skip locked`,
    [leaseBefore, limit],
  );
  return rows.map((r) => r.id);
}
