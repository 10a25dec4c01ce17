import { startPeriodicJob, withReplicaLock, type PeriodicJob, type Runtime } from '@seller-api/service-kit';
import { deleteExpiredEvents } from '../db/events';
import { dropStaleBound } from '../db/history-upgrade';
import {
  databaseNow,
  dropExpiredPartitions,
  isPartitioned,
  listPartitions,
  makePartitions,
} from '../db/partitions';
import { HISTORY_TABLES } from '../domain/partitions';

const HISTORY_RETENTION_INTERVAL_MS = 10 * 60_000;
// How long a starting replica waits for another's run to end: the periods it makes must exist before
// this one takes a message.
const FIRST_RUN_WAIT_MS = 30_000;

/** How long each kind of history is kept, in days (EVENTS_RETENTION_DAYS, DELIVERIES_RETENTION_DAYS). */
export interface HistoryRetention {
  events: number;
  deliveries: number;
}

/**
 * Keeps the history tables' partitions (db/partitions.ts): makes the coming periods, drops the expired
 * ones, and deletes the expired events still in the rows from before partitioning. Once before the
 * intake takes its first message (a new installation has only the current period until then), then
 * HISTORY_RETENTION_INTERVAL_MS after each run. One replica at a time runs it (a replica lock), so
 * the statements that change the tables never race, and a replica that dies mid-run leaves it to the
 * next run of any other. A table not partitioned yet (an installation upgraded in place, before its
 * upgrade: docs/deploy.md) has its expired events deleted in batches, as before. A failed run is
 * logged ("history retention failed"): the periods made ahead (two weeks of days, two months) are the
 * time there is to mend it before a write finds none.
 */
export async function startHistoryRetention(
  runtime: Runtime,
  retention: HistoryRetention,
): Promise<PeriodicJob> {
  const run = async (waitMs: number) => {
    await withReplicaLock(runtime.orm, { key: 'webhooks:history-retention', waitMs }, async (lost) =>
      keepHistory(runtime, retention, await databaseNow(runtime.sql), lost),
    );
  };
  await run(FIRST_RUN_WAIT_MS).catch((err: unknown) =>
    runtime.logger.error({ err: (err as Error).message }, 'history retention failed; will retry'),
  );
  return startPeriodicJob({
    name: 'history retention',
    intervalMs: HISTORY_RETENTION_INTERVAL_MS,
    logger: runtime.logger,
    failureMessage: 'history retention failed; will retry',
    runAtStart: false,
    run: () => run(0),
  });
}

/**
 * One run of the job, at `now` (PostgreSQL's clock, which the writes and reads compare with); stops
 * between steps once `lost` (the replica lock's connection gone: another replica may run it now).
 */
export async function keepHistory(
  runtime: Pick<Runtime, 'sql' | 'logger'>,
  retention: HistoryRetention,
  now: Date,
  lost?: AbortSignal,
): Promise<void> {
  const { sql, logger } = runtime;
  for (const spec of HISTORY_TABLES) {
    lost?.throwIfAborted();
    const days = retention[spec.retention];
    if (!(await isPartitioned(sql, spec.table))) {
      if (await dropStaleBound(sql, spec, now)) {
        logger.warn({ table: spec.table }, 'an unfinished history upgrade was undone: run it again');
      }
      if (spec.table === 'events') {
        const deleted = await deleteExpiredEvents(sql, 'events', days);
        if (deleted > 0) logger.info({ deleted }, 'expired events deleted');
      }
      continue;
    }
    const made = await makePartitions(sql, spec, now, days);
    const { dropped, kept } = await dropExpiredPartitions(sql, spec, now, days, lost);
    if (made.length > 0 || dropped.length > 0) logger.info({ made, dropped }, 'history partitions kept');
    if (kept.length > 0) {
      logger.warn({ kept }, 'expired deliveries partitions kept: they hold pending deliveries');
    }
    if (spec.table === 'events' && (await listPartitions(sql, 'events')).some((p) => p.from === null)) {
      const deleted = await deleteExpiredEvents(sql, 'events_legacy', days);
      if (deleted > 0) logger.info({ deleted }, 'expired events deleted');
    }
  }
}
