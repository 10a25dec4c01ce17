import { Counter, Gauge } from 'prom-client';
import { sqlOf, type Metrics, type MikroORM } from '@seller-api/service-kit';
import type { EntryKind } from './domain/ledger';
import type { MismatchKind, RunOutcome } from './domain/reconciliation';
import { lastFinished } from './db/reconciliation-checkpoints';
import type { RefundHoldSweepMetrics } from './jobs/refund-hold-sweep';

export type ReconciliationMetrics = ReturnType<typeof createReconciliationMetrics>;

const OUTCOMES: RunOutcome[] = ['clean', 'healed', 'mismatches', 'stopped', 'failed'];
const MISMATCHES: MismatchKind[] = [
  'other_owner',
  'amounts_differ',
  'ledger_ahead',
  'contradicts',
  'not_moved',
  'balance_drift',
];

/**
 * The ledger reconciliation's metrics (docs/finance.md, "Reconciliation"; the alerts
 * SellerApiLedgerReconciliationMismatch and SellerApiLedgerReconciliationStalled). The runs and the
 * postings are counted by the replica that made them; what is open and when the last run finished are
 * read from the database at scrape time, so every replica reports the same, whichever ran last. A
 * failed read reports NaN (unknown) rather than failing the scrape.
 */
export function createReconciliationMetrics(metrics: Metrics, orm: MikroORM) {
  const runs = new Counter({
    name: 'ledger_reconciliation_runs_total',
    help: 'Ledger reconciliation runs by outcome (clean, healed, mismatches, stopped, failed)',
    labelNames: ['outcome'] as const,
    registers: [metrics.registry],
  });
  for (const outcome of OUTCOMES) runs.inc({ outcome }, 0);
  const healed = new Counter({
    name: 'ledger_reconciliation_healed_postings_total',
    help: 'Ledger entries posted by the reconciliation for charges whose events the ledger had missed, by entry kind',
    labelNames: ['kind'] as const,
    registers: [metrics.registry],
  });
  const sql = sqlOf(orm);
  const read = <R extends object>(text: string) => sql.query<R>(text);
  new Gauge({
    name: 'ledger_reconciliation_mismatches',
    help: 'Mismatches between the ledger and payments (or balance rows and their lines) open after the last reconciliation run, by kind',
    labelNames: ['kind'] as const,
    registers: [metrics.registry],
    async collect() {
      const rows = await read<{ kind: MismatchKind; n: string }>(
        `select kind, count(*) as n from withdrawals.reconciliation_findings group by kind`,
      ).catch(() => null);
      for (const kind of MISMATCHES) {
        this.set({ kind }, rows === null ? NaN : Number(rows.find((r) => r.kind === kind)?.n ?? 0));
      }
    },
  });
  new Gauge({
    name: 'ledger_reconciliation_last_success_timestamp_seconds',
    help: 'When a reconciliation run last finished both environments (Unix time; 0 before the first)',
    registers: [metrics.registry],
    async collect() {
      const at = await lastFinished(sql).then(
        (finished) => (finished ? finished.getTime() / 1000 : 0),
        () => NaN,
      );
      this.set(at);
    },
  });
  return {
    runFinished: (outcome: RunOutcome) => runs.inc({ outcome }),
    posted: (kinds: EntryKind[]) => {
      for (const kind of kinds) healed.inc({ kind });
    },
  };
}

/**
 * The sweep of refund holds (docs/finance.md "Refunds"). `refund_holds_unresolved` is what this
 * replica's last full pass kept because a refund was asked of the PSP and the charge is still not
 * refunded: each needs an operator (the order ids are in the log). Failures are holds a pass could not
 * decide (payments failed), tried again by the next pass.
 */
export function createRefundHoldMetrics(metrics: Metrics): RefundHoldSweepMetrics {
  const unresolved = new Gauge({
    name: 'refund_holds_unresolved',
    help: 'Refund holds kept by the last sweep because a refund was asked of the PSP and the charge is not refunded (needs an operator)',
    registers: [metrics.registry],
  });
  const failures = new Counter({
    name: 'refund_hold_sweep_failures_total',
    help: 'Refund holds the sweep could not decide (payments failed or answered something else); retried next pass',
    registers: [metrics.registry],
  });
  failures.inc(0);
  return {
    passFinished: (count) => unresolved.set(count),
    holdFailed: () => failures.inc(),
  };
}
