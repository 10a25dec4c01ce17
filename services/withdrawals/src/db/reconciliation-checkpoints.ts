import type { Sql } from '@seller-api/service-kit';
import { Environment } from '@seller-api/contracts';

/**
 * How far the reconciliation has got (docs/finance.md, "Reconciliation"): per environment, how far
 * payments' changes have been checked (`reconciliation_checkpoints`), and when the balance rows were
 * last checked (`reconciliation_balance_check`). Its open mismatches: reconciliation-findings.ts.
 */

export interface Checkpoint {
  /** Payments' changes before this have been checked. */
  checkedBefore: Date;
  /** When a run last finished this environment's window from the checkpoint; null before. */
  finishedAt: Date | null;
}

export async function readCheckpoint(sql: Sql, environment: Environment): Promise<Checkpoint | null> {
  const [row] = await sql.query<{ checked_before: Date | string; finished_at: Date | string | null }>(
    `select checked_before, finished_at from withdrawals.reconciliation_checkpoints where environment = $1`,
    [environment],
  );
  if (!row) return null;
  return {
    checkedBefore: new Date(row.checked_before),
    finishedAt: row.finished_at === null ? null : new Date(row.finished_at),
  };
}

/**
 * Moves the checkpoint forward to `checkedBefore`, never back; `finishedAt` records a window done to its
 * end (the page's progress leaves it as it was).
 */
export async function advanceCheckpoint(
  sql: Sql,
  environment: Environment,
  checkedBefore: Date,
  finishedAt: Date | null = null,
): Promise<void> {
  await sql.query(
    `insert into withdrawals.reconciliation_checkpoints as c (environment, checked_before, finished_at)
     values ($1, $2, $3)
     on conflict (environment) do update
       set checked_before = greatest(c.checked_before, excluded.checked_before),
           finished_at = coalesce(excluded.finished_at, c.finished_at)`,
    [environment, checkedBefore.toISOString(), finishedAt?.toISOString() ?? null],
  );
}

/** When both environments' windows were last finished (the older of the two); null if one never was. */
export async function lastFinished(sql: Sql): Promise<Date | null> {
  const [row] = await sql.query<{ at: Date | string | null; n: string }>(
    `select min(finished_at) as at, count(finished_at) as n from withdrawals.reconciliation_checkpoints`,
  );
  return row && Number(row.n) === Environment.options.length && row.at !== null ? new Date(row.at) : null;
}

/** When the balance rows were last compared with their lines by a run that changes things; null before. */
export async function lastBalanceCheck(sql: Sql): Promise<Date | null> {
  const [row] = await sql.query<{ checked_at: Date | string }>(
    `select checked_at from withdrawals.reconciliation_balance_check`,
  );
  return row ? new Date(row.checked_at) : null;
}

export async function recordBalanceCheck(sql: Sql, at: Date): Promise<void> {
  await sql.query(
    `insert into withdrawals.reconciliation_balance_check (singleton, checked_at) values (true, $1)
     on conflict (singleton) do update set checked_at = excluded.checked_at`,
    [at.toISOString()],
  );
}
