import { startPeriodicJob, withReplicaLock, type PeriodicJob, type Runtime } from '@seller-api/service-kit';
import { deleteExpiredEvents } from '../db/events';
import { dropExpiredPartitions, isPartitioned, listPartitions, makePartitions } from '../db/partitions';
import { HISTORY_TABLES } from '../domain/partitions';

const HISTORY_RETENTION_INTERVAL_MS = 10 * 60_000;

/** How long each kind of history is kept, in days (EVENTS_RETENTION_DAYS, DELIVERIES_RETENTION_DAYS). */
export interface HistoryRetention {
  events: number;
  deliveries: number;
}

/**
 * Keeps the history tables' partitions (db/partitions.ts): makes the coming periods, drops the expired
 * ones, and deletes the expired events still in the rows from before partitioning. At start and then
 * HISTORY_RETENTION_INTERVAL_MS after each run; one replica at a time runs it (a replica lock), so the
 * statements that change the tables never race, and a replica that dies mid-run leaves it to the next
 * run of any other. A table not partitioned yet (an installation upgraded in place, before its
 * upgrade: docs/deploy.md) has its expired events deleted in batches, as before.
 */
export function startHistoryRetention(runtime: Runtime, retention: HistoryRetention): PeriodicJob {
  return startPeriodicJob({
    name: 'history retention',
    intervalMs: HISTORY_RETENTION_INTERVAL_MS,
    logger: runtime.logger,
    failureMessage: 'history retention failed; will retry',
    run: async () => {
      await withReplicaLock(runtime.orm, { key: 'webhooks:history-retention' }, () =>
        keepHistory(runtime, retention, new Date()),
      );
    },
  });
}

/** One run of the job, at `now`. */
export async function keepHistory(
  runtime: Pick<Runtime, 'sql' | 'logger'>,
  retention: HistoryRetention,
  now: Date,
): Promise<void> {
  const { sql, logger } = runtime;
  for (const spec of HISTORY_TABLES) {
    const days = retention[spec.retention];
    if (!(await isPartitioned(sql, spec.table))) {
      if (spec.table === 'events') {
        const deleted = await deleteExpiredEvents(sql, 'events', days);
        if (deleted > 0) logger.info({ deleted }, 'expired events deleted');
      }
      continue;
    }
    const made = await makePartitions(sql, spec, now, days);
    const { dropped, kept } = await dropExpiredPartitions(sql, spec, now, days);
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
