import { startPeriodicJob, type PeriodicJob, type Runtime } from '@seller-api/service-kit';
import { deleteExpiredEvents } from '../db/events';

const EVENT_RETENTION_INTERVAL_MS = 10 * 60_000;

/**
 * Deletes expired events (db/events.ts, deleteExpiredEvents) at start and then
 * EVENT_RETENTION_INTERVAL_MS after each run; every replica runs it, the batches' SKIP LOCKED sharing
 * the work.
 */
export function startEventRetention(runtime: Runtime, retentionDays: number): PeriodicJob {
  return startPeriodicJob({
    name: 'event retention',
    intervalMs: EVENT_RETENTION_INTERVAL_MS,
    logger: runtime.logger,
    failureMessage: 'event retention failed; will retry',
    run: async () => {
      const deleted = await deleteExpiredEvents(runtime.sql, retentionDays);
      if (deleted > 0) runtime.logger.info({ deleted }, 'expired events deleted');
    },
  });
}
