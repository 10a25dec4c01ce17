import { todayInSaoPaulo } from '@seller-api/due-date';
import { startPeriodicJob, type PeriodicJob, type Runtime } from '@seller-api/service-kit';
import { OVERDUE_BATCH, notifyOverdueBatch } from '../db/overdue';
import { overdueEvent } from '../domain/order-status';

/**
 * Sends `order.overdue` once for each PENDING due-date order whose effective due date has passed in
 * São Paulo (docs/pix.md, "Due-date charges"), every `intervalMs` and at start (catching up after
 * downtime). Safe with several replicas: each batch is claimed with SKIP LOCKED, and the order is
 * marked notified in the transaction that queues its event. A paid, cancelled or expired order is
 * not PENDING and gets none. `now` is the clock (tests move it).
 */
export function startOverdueNotices(
  runtime: Runtime,
  intervalMs: number,
  now: () => Date = () => new Date(),
): PeriodicJob {
  return startPeriodicJob({
    name: 'order overdue',
    intervalMs,
    logger: runtime.logger,
    failureMessage: 'order.overdue run failed; will retry',
    run: async () => {
      const at = now();
      const today = todayInSaoPaulo(at);
      let notified = 0;
      // A full batch means more may be due: keep going before sleeping.
      for (;;) {
        const count = await notifyOverdueBatch(runtime.sql, today, at, (order) => overdueEvent(order, at));
        notified += count;
        if (count < OVERDUE_BATCH) break;
      }
      if (notified > 0) runtime.relay.wake();
    },
  });
}
