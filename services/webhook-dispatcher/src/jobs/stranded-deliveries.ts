import { startPeriodicJob, type PeriodicJob, type Runtime } from '@seller-api/service-kit';
import { moveStrandedDeliveries } from '../db/webhooks';

const STRANDED_MOVE_INTERVAL_MS = 60_000;

/**
 * Moves the deliveries a fan-out stored on a webhook a rotation had just retired to its successor
 * (db/webhooks.ts, moveStrandedDeliveries), every STRANDED_MOVE_INTERVAL_MS; then the sender
 * looks for them at once.
 */
export function startStrandedMoves(runtime: Runtime, rescan: () => void): PeriodicJob {
  return startPeriodicJob({
    name: 'stranded deliveries',
    intervalMs: STRANDED_MOVE_INTERVAL_MS,
    logger: runtime.logger,
    failureMessage: 'moving stranded deliveries failed; will retry',
    run: async () => {
      const moved = await moveStrandedDeliveries(runtime.sql);
      if (moved === 0) return;
      runtime.logger.warn({ moved }, 'deliveries stored on a retired webhook moved to its successor');
      rescan();
    },
  });
}
