import type { MikroORM } from '@mikro-orm/postgresql';
import { sqlInTransaction, sqlOf, type Sql } from '@seller-api/service-kit';
import { addPeriods, periodStart, type HistoryTable } from '../domain/partitions';
import { isPartitioned, makePartitions } from './partitions';

/**
 * The upgrade of an existing installation's history tables to partitioned ones, without stopping
 * reads or writes (docs/deploy.md, "Partitioned history"). For each table not partitioned yet:
 *
 * 1. a check that every row lies below the cutover (`<table>_before_partitioning`), added without
 *    checking the rows (a moment's lock), then validated, which reads the table while writes go on;
 * 2. the swap (`webhooks.partition_history`, Migration20261220PartitionedHistory): the old table
 *    becomes the partition `<table>_legacy` as it is, bounded by the cutover; a rename and an attach.
 *
 * The cutover is the start of the period after the ones made ahead (a week for events, three months
 * for deliveries): far enough that no row written while the validation reads the table reaches it,
 * and beyond the events a skewed clock may still send (db/delivery-writes.ts). Steps that need an
 * exclusive lock wait at most LOCK_WAIT for it, so a long transaction delays the upgrade, never the
 * traffic queued behind the lock, and are tried again. Every step checks what is done: the upgrade
 * can be stopped and run again.
 */

const LOCK_WAIT = '1s';
const LOCK_TRIES = 30;

export interface UpgradeStep {
  table: string;
  step: 'partitioned already' | 'bound added' | 'bound validated' | 'swapped';
  cutover?: Date;
}

export async function partitionHistoryTable(
  orm: MikroORM,
  spec: HistoryTable,
  now: Date,
  report: (step: UpgradeStep) => void,
): Promise<void> {
  const sql = sqlOf(orm);
  const table = `webhooks.${spec.table}`;
  if (await isPartitioned(sql, spec.table)) {
    report({ table: spec.table, step: 'partitioned already' });
    return;
  }
  const bound = `${spec.table}_before_partitioning`;

  const existing = await boundOf(sql, table, bound);
  // A bound from an earlier run is kept while it is still far enough ahead (dropStaleBound drops one
  // that is not, if this upgrade is never run again).
  const margin = addPeriods(spec.unit, periodStart(spec.unit, now), spec.ahead);
  let cutover = existing?.cutover;
  if (!cutover || cutover < margin) {
    const next = addPeriods(spec.unit, periodStart(spec.unit, now), spec.ahead + 1);
    cutover = next;
    await withLockWait(orm, async (tx) => {
      await tx.query(`alter table ${table} drop constraint if exists ${bound}`);
      await tx.query(
        `alter table ${table} add constraint ${bound} check (${spec.column} < '${next.toISOString()}') not valid`,
      );
    });
    report({ table: spec.table, step: 'bound added', cutover });
  }
  await sql.query(`alter table ${table} validate constraint ${bound}`);
  report({ table: spec.table, step: 'bound validated', cutover });

  await withLockWait(orm, (tx) => tx.query(`call webhooks.partition_history($1)`, [spec.table]));
  // The coming periods at once, not at the retention job's next run.
  await makePartitions(sql, spec, now, 0);
  report({ table: spec.table, step: 'swapped' });
}

/**
 * Drops the bound an upgrade left on a table it did not swap (stopped, and not run again) once the
 * cutover is a period away: past it, the check would refuse every new row. Waits at most LOCK_WAIT
 * for its lock, else leaves it for the next run. Answers whether it dropped one.
 */
export async function dropStaleBound(sql: Sql, spec: HistoryTable, now: Date): Promise<boolean> {
  const table = `webhooks.${spec.table}`;
  const bound = `${spec.table}_before_partitioning`;
  const existing = await boundOf(sql, table, bound);
  if (!existing || existing.cutover > addPeriods(spec.unit, periodStart(spec.unit, now), 2)) return false;
  try {
    await sql.query(
      `do $$ begin
         set local lock_timeout = '${LOCK_WAIT}';
         alter table ${table} drop constraint if exists ${bound};
       end $$`,
    );
    return true;
  } catch (err) {
    if ((err as { code?: string }).code === '55P03') return false;
    throw err;
  }
}

async function boundOf(sql: Sql, table: string, name: string): Promise<{ cutover: Date } | null> {
  const rows = await sql.query<{ cutover: Date | null }>(
    `select (regexp_match(pg_get_constraintdef(c.oid), '''([^'']+)'''))[1]::timestamptz as cutover
       from pg_constraint c where c.conrelid = to_regclass($1) and c.conname = $2`,
    [table, name],
  );
  const cutover = rows[0]?.cutover;
  return cutover ? { cutover: new Date(cutover) } : null;
}

/** Runs `work` in a transaction that waits at most LOCK_WAIT for each lock, LOCK_TRIES times. */
async function withLockWait(orm: MikroORM, work: (tx: Sql) => Promise<unknown>): Promise<void> {
  const sql = sqlOf(orm);
  for (let tries = 1; ; tries += 1) {
    try {
      await orm.em.fork().transactional(async (em) => {
        const tx = sqlInTransaction(sql, em);
        await tx.query(`set local lock_timeout = '${LOCK_WAIT}'`);
        await work(tx);
      });
      return;
    } catch (err) {
      // 55P03: lock_not_available, the lock wait ran out.
      if ((err as { code?: string }).code !== '55P03' || tries >= LOCK_TRIES) throw err;
    }
  }
}
