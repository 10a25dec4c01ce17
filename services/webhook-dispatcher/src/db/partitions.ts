import type { Sql } from '@seller-api/service-kit';
import {
  expiredPartitions,
  periodsToMake,
  type ExistingPartition,
  type HistoryTable,
  type HistoryTableName,
} from '../domain/partitions';

/**
 * The partitions of the history tables (domain/partitions.ts; Migration20261220PartitionedHistory):
 * read from the catalog, made ahead, and detached then dropped once expired. Each statement runs on
 * its own (no transaction): a detach is concurrent, which PostgreSQL runs only outside one.
 */

/** PostgreSQL's clock: the one the writes and reads compare with (`now()`). */
export async function databaseNow(sql: Sql): Promise<Date> {
  const rows = await sql.query<{ now: string | Date }>('select now() as now');
  return new Date(rows[0]?.now ?? Date.now());
}

/** Whether `table` is partitioned yet (an installation upgraded in place may not be: docs/deploy.md). */
export async function isPartitioned(sql: Sql, table: HistoryTableName): Promise<boolean> {
  const rows = await sql.query<{ partitioned: boolean }>(
    `select c.relkind = 'p' as partitioned from pg_class c where c.oid = to_regclass($1)`,
    [`webhooks.${table}`],
  );
  return rows[0]?.partitioned === true;
}

/** A partition, and whether a detach of it was left unfinished. */
interface PartitionRow extends ExistingPartition {
  detaching: boolean;
}

// A partition's bounds, out of its catalog text: FOR VALUES FROM ('…') TO ('…'), or FROM (MINVALUE).
const PARTITIONS_SQL = `select c.relname as name, i.inhdetachpending as detaching,
         (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'FROM \\(''([^'']+)''\\)'))[1]::timestamptz as "from",
         (regexp_match(pg_get_expr(c.relpartbound, c.oid), 'TO \\(''([^'']+)''\\)'))[1]::timestamptz as "to"
    from pg_inherits i join pg_class c on c.oid = i.inhrelid
   where i.inhparent = to_regclass($1)
   order by "to"`;

async function partitionsOf(sql: Sql, table: HistoryTableName): Promise<PartitionRow[]> {
  const rows = await sql.query<{
    name: string;
    from: string | Date | null;
    to: string | Date;
    detaching: boolean;
  }>(PARTITIONS_SQL, [`webhooks.${table}`]);
  // The driver may hand timestamps over as text.
  return rows.map((r) => ({ ...r, from: r.from === null ? null : new Date(r.from), to: new Date(r.to) }));
}

/** The partitions of `table`, oldest first (none while it is not partitioned). */
export async function listPartitions(sql: Sql, table: HistoryTableName): Promise<ExistingPartition[]> {
  return partitionsOf(sql, table);
}

/** Makes the periods of `spec`'s table that `now` and its retention call for; answers their names. */
export async function makePartitions(
  sql: Sql,
  spec: HistoryTable,
  now: Date,
  retentionDays: number,
): Promise<string[]> {
  const made: string[] = [];
  for (const period of periodsToMake(spec, await listPartitions(sql, spec.table), now, retentionDays)) {
    await sql.query('call webhooks.make_history_partition($1, $2, $3, $4)', [
      spec.table,
      period.name,
      period.from,
      period.to,
    ]);
    made.push(period.name);
  }
  return made;
}

/** What a retention run did to one table. */
export interface DroppedPartitions {
  dropped: string[];
  /** Expired, but kept: a delivery in it is still pending (a paused webhook's, a manual re-send). */
  kept: string[];
}

/**
 * Detaches and drops the partitions of `spec`'s table wholly older than its retention. A detach is
 * concurrent: it never holds a lock that stops reads or writes of the parent, only waits for the
 * transactions that may still see the partition. One that was interrupted (the process died) is
 * finished first. A deliveries partition holding a pending delivery is kept until it is sent.
 */
export async function dropExpiredPartitions(
  sql: Sql,
  spec: HistoryTable,
  now: Date,
  retentionDays: number,
  lost?: AbortSignal,
): Promise<DroppedPartitions> {
  const result: DroppedPartitions = { dropped: [], kept: [] };
  const partitions = await partitionsOf(sql, spec.table);
  const expired = new Set(expiredPartitions(partitions, now, retentionDays).map((p) => p.name));
  for (const partition of partitions) {
    if (!partition.detaching && !expired.has(partition.name)) continue;
    lost?.throwIfAborted();
    if (!partition.detaching && spec.table === 'deliveries' && (await holdsPending(sql, partition.name))) {
      result.kept.push(partition.name);
      continue;
    }
    const detach = partition.detaching ? 'finalize' : 'concurrently';
    await sql.query(
      `alter table webhooks.${spec.table} detach partition webhooks."${partition.name}" ${detach}`,
    );
    await sql.query(`drop table webhooks."${partition.name}"`);
    result.dropped.push(partition.name);
  }
  // Detached by a run that died before its drop: no longer a partition, still on disk.
  for (const name of await detachedPartitions(sql, spec.table)) {
    await sql.query(`drop table webhooks."${name}"`);
    result.dropped.push(name);
  }
  return result;
}

/**
 * The tables named as `table`'s partitions that are not one: only a detach makes them (a period is made
 * and attached in one transaction by webhooks.make_history_partition).
 */
async function detachedPartitions(sql: Sql, table: HistoryTableName): Promise<string[]> {
  const rows = await sql.query<{ name: string }>(
    `select c.relname as name from pg_class c
      where c.relnamespace = 'webhooks'::regnamespace and c.relkind = 'r' and not c.relispartition
        and c.relname ~ ('^' || $1 || '_(p[0-9]+|legacy)$')`,
    [table],
  );
  return rows.map((r) => r.name);
}

/** Whether a deliveries partition holds a pending delivery: a read of its due index. */
async function holdsPending(sql: Sql, partition: string): Promise<boolean> {
  const rows = await sql.query<{ pending: boolean }>(
    `select exists (select 1 from webhooks."${partition}" where status = 'pending') as pending`,
  );
  return rows[0]?.pending === true;
}
