import { callKeyOf, callerKeysOf, createRuntime, serveService, type Runtime } from '@seller-api/service-kit';
import { WITHDRAWALS_ACCESS } from './http/callers';
import type pino from 'pino';
import { PaymentsChargeRefunds } from './clients/charges';
import { PaymentsClient } from './clients/payments';
import { payoutAdaptersFromConfig } from './clients/payout-factory';
import type { WithdrawalsConfig } from './config';
import { entities } from './db/entities';
import { SCHEMA, migrations } from './db/migrations';
import type { PayoutAdapters } from './domain/payouts';
import { ledgerHandler } from './events/payments';
import { PayoutWorker } from './jobs/payouts';
import { LedgerReconciliation } from './jobs/reconciliation';
import { RefundHoldSweep } from './jobs/refund-hold-sweep';
import { LEDGER_QUEUE, topology } from './events/topology';
import { mountRoutes } from './http/routes';
import { createRefundHoldMetrics, createReconciliationMetrics } from './metrics';

export interface WithdrawalsService {
  runtime: Runtime;
  port: number;
  payouts: PayoutWorker;
  /** The ledger's reconciliation with payments (scheduled unless RECONCILE_INTERVAL_MS is 0). */
  reconciliation: LedgerReconciliation;
  /** Releases refund holds no refund completed (on the reconciliation's schedule). */
  refundHolds: RefundHoldSweep;
  stop(): Promise<void>;
}

export async function startWithdrawals(
  config: WithdrawalsConfig,
  options: { logDestination?: pino.DestinationStream; metrics?: boolean; payouts?: PayoutAdapters } = {},
): Promise<WithdrawalsService> {
  // Before any connection is opened: a payout PSP that cannot be built is a configuration error. One
  // per environment: test payouts never reach the live PSP (docs/finance.md).
  const psps = options.payouts ?? payoutAdaptersFromConfig(config);
  const runtime = await createRuntime({
    service: 'withdrawals',
    config,
    schema: SCHEMA,
    entities,
    migrations,
    topology,
    logDestination: options.logDestination,
    idempotency: true,
  });
  const toPayments = callKeyOf(config, 'withdrawals', 'payments', config.PAYMENTS_INTERNAL_SECRET);
  const payouts = new PayoutWorker(
    runtime.orm,
    psps,
    { autoApproveBelow: config.WITHDRAWAL_AUTO_APPROVE_BELOW, retryAfterMs: config.PAYOUT_RETRY_AFTER_MS },
    config.PAYOUT_INTERVAL_MS,
    runtime.logger,
  );
  const reconciliation = new LedgerReconciliation(
    runtime.orm,
    new PaymentsClient(config.PAYMENTS_URL, toPayments),
    {
      intervalMs: config.RECONCILE_INTERVAL_MS,
      driftIntervalMs: config.RECONCILE_DRIFT_INTERVAL_MS,
      graceMs: config.RECONCILE_GRACE_MS,
    },
    runtime.logger,
    createReconciliationMetrics(runtime.metrics, runtime.orm),
  );
  const refundHolds = new RefundHoldSweep(
    runtime.orm,
    new PaymentsChargeRefunds(config.PAYMENTS_URL, toPayments),
    { intervalMs: config.RECONCILE_INTERVAL_MS, graceMs: config.RECONCILE_GRACE_MS },
    runtime.logger,
    createRefundHoldMetrics(runtime.metrics),
  );
  const { server } = await serveService(runtime, {
    port: config.PORT,
    metricsPort: options.metrics === false ? undefined : config.METRICS_PORT,
    callerKeys: callerKeysOf(config, 'withdrawals'),
    access: WITHDRAWALS_ACCESS,
    mount: (app) =>
      mountRoutes(app, {
        runtime,
        minAmount: config.WITHDRAWAL_MIN_AMOUNT,
        autoApproval: {
          autoApproveBelow: config.WITHDRAWAL_AUTO_APPROVE_BELOW,
          dailyCount: config.WITHDRAWAL_AUTO_APPROVE_DAILY_COUNT,
          dailyAmount: config.WITHDRAWAL_AUTO_APPROVE_DAILY_AMOUNT,
          reviewNewPixKey: config.WITHDRAWAL_NEW_PIX_KEY_REVIEW,
        },
        onApproved: () => payouts.kick(),
        onRequested: () => {
          if (config.WITHDRAWAL_AUTO_APPROVE_BELOW > 0) payouts.kick();
        },
      }),
  });
  await runtime.broker.consume(LEDGER_QUEUE, ledgerHandler(runtime));
  payouts.start();
  reconciliation.start();
  refundHolds.start();
  const address = server.address();
  return {
    runtime,
    port: typeof address === 'object' && address ? address.port : config.PORT,
    payouts,
    reconciliation,
    refundHolds,
    stop: () =>
      runtime.stop(async () => {
        await refundHolds.stop();
        await reconciliation.stop();
        await payouts.stop();
        await Promise.all([...new Set([psps.live, psps.test])].map((psp) => psp.close?.()));
      }),
  };
}
