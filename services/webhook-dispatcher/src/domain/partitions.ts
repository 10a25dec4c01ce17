/**
 * The history tables partitioned by time (docs/webhooks.md, "History and retention"): which partitions
 * each keeps, makes ahead and drops. Rules only; the statements are in db/partitions.ts.
 *
 * A partition covers one period [from, to) of its table's time column, in UTC, and is named after the
 * period's start (`events_p20261128`, `deliveries_p202611`). The partition that held the table's rows
 * from before it was partitioned (`<table>_legacy`) covers everything before its upper bound.
 */

export type PeriodUnit = 'day' | 'month';

export type HistoryTableName = 'events' | 'deliveries' | 'delivery_attempts';

export interface HistoryTable {
  table: HistoryTableName;
  /** The time column the table is partitioned by. */
  column: string;
  unit: PeriodUnit;
  /** Which retention applies: the events' or the deliveries'. */
  retention: 'events' | 'deliveries';
  /** How many periods after the current one exist at any time. */
  ahead: number;
}

/**
 * Events by day: their retention is a number of days, and a read stops at it anyway. Two weeks of
 * days ahead, one more than the week an event's time may run ahead of ours (db/delivery-writes.ts). Deliveries and
 * attempts by month, on one calendar, so that a delivery's attempts are never in an older partition
 * than the delivery (an attempt starts after its delivery is made).
 */
export const HISTORY_TABLES: readonly HistoryTable[] = [
  { table: 'events', column: 'occurred_at', unit: 'day', retention: 'events', ahead: 14 },
  { table: 'deliveries', column: 'created_at', unit: 'month', retention: 'deliveries', ahead: 2 },
  { table: 'delivery_attempts', column: 'started_at', unit: 'month', retention: 'deliveries', ahead: 2 },
];

/** One period of a table: its partition's name and bounds. */
export interface Period {
  name: string;
  from: Date;
  to: Date;
}

/** The start of the period holding `at`, in UTC. */
export function periodStart(unit: PeriodUnit, at: Date): Date {
  return unit === 'day'
    ? new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()))
    : new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1));
}

/** The start of the period `n` periods after the one starting at `start`. */
export function addPeriods(unit: PeriodUnit, start: Date, n: number): Date {
  return unit === 'day'
    ? new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth(), start.getUTCDate() + n))
    : new Date(Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + n, 1));
}

/** The period starting at `from` of `spec`'s table. */
export function periodOf(spec: HistoryTable, from: Date): Period {
  const digits = from
    .toISOString()
    .slice(0, spec.unit === 'day' ? 10 : 7)
    .replace(/-/g, '');
  return { name: `${spec.table}_p${digits}`, from, to: addPeriods(spec.unit, from, 1) };
}

/** The oldest instant a table keeps: `retentionDays` before `now`. */
export function retentionHorizon(now: Date, retentionDays: number): Date {
  return new Date(now.getTime() - retentionDays * 86_400_000);
}

/** A partition as the catalog lists it; `from` is null for the legacy one (from MINVALUE). */
export interface ExistingPartition {
  name: string;
  from: Date | null;
  to: Date;
}

/**
 * The periods to make: from the one holding the retention horizon (a late event may still belong
 * there) to `ahead` periods after the current one, except those the existing partitions cover.
 */
export function periodsToMake(
  spec: HistoryTable,
  existing: readonly ExistingPartition[],
  now: Date,
  retentionDays: number,
): Period[] {
  const made: Period[] = [];
  const last = addPeriods(spec.unit, periodStart(spec.unit, now), spec.ahead);
  for (
    let start = periodStart(spec.unit, retentionHorizon(now, retentionDays));
    start <= last;
    start = addPeriods(spec.unit, start, 1)
  ) {
    const period = periodOf(spec, start);
    const covered = existing.some((p) => (p.from === null || p.from < period.to) && p.to > period.from);
    if (!covered) made.push(period);
  }
  return made;
}

/** The partitions wholly older than the retention horizon: every row in them has expired. */
export function expiredPartitions(
  existing: readonly ExistingPartition[],
  now: Date,
  retentionDays: number,
): ExistingPartition[] {
  const horizon = retentionHorizon(now, retentionDays);
  return existing.filter((p) => p.to <= horizon);
}
