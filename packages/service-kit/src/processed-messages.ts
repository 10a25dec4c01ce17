import type { Logger } from './logger';
import { startPeriodicJob, type PeriodicJob } from './periodic-job';
import { deleteInBatches, type Sql } from './sql';

/**
 * How long a consumer's record of a message it handled (consumer.ts, `processed_messages`) is kept:
 * far longer than a message can come back. A redelivery follows a lost acknowledgement, or a relay
 * that published and stopped before deleting its outbox row, within seconds to minutes; a failed
 * message's retries run within minutes; a message parked and replayed by an operator days later was
 * never handled, so it has no record to lose. The webhook dispatcher's events rely on it too: an
 * event's key is unique within its day's partition only (docs/webhooks.md, "History and retention").
 */
export const PROCESSED_MESSAGES_RETENTION_DAYS = 30;

const PRUNE_INTERVAL_MS = 60 * 60_000;

/**
 * Deletes the records older than PROCESSED_MESSAGES_RETENTION_DAYS, `batch` rows per statement, found
 * through the BRIN index on `processed_at` (each service's migrations: rows are written in time order,
 * so the index is a few pages and costs the writes next to nothing). Replicas running it together
 * share the work (SKIP LOCKED). Answers how many went.
 */
export async function pruneProcessedMessages(sql: Sql, schema: string, batch = 5_000): Promise<number> {
  return deleteInBatches(
    sql,
    `"${schema}".processed_messages`,
    'processed_at < now() - make_interval(days => $1)',
    [PROCESSED_MESSAGES_RETENTION_DAYS],
    batch,
  );
}

/** Runs pruneProcessedMessages every PRUNE_INTERVAL_MS, the first time one interval after start. */
export function startProcessedMessagesPruning(sql: Sql, schema: string, logger: Logger): PeriodicJob {
  return startPeriodicJob({
    name: 'processed messages pruning',
    intervalMs: PRUNE_INTERVAL_MS,
    logger,
    runAtStart: false,
    run: async () => {
      const pruned = await pruneProcessedMessages(sql, schema);
      if (pruned > 0) logger.info({ pruned }, 'old records of processed messages deleted');
    },
  });
}
