import { callerKeysOf, createRuntime, serveService, type Runtime } from '@seller-api/service-kit';
import { PAYMENTS_ACCESS } from './http/callers';
import type pino from 'pino';
import type { PaymentsConfig } from './config';
import { pspsFromConfig } from './clients/psp-factory';
import { ChargeWrites } from './db/charge-writes';
import { entities } from './db/entities';
import { SCHEMA, migrations } from './db/migrations';
import { topology } from './events/topology';
import { mountPublicRoutes, mountRoutes } from './http/routes';
import type { PspSenders } from './http/psp-senders';
import { ExpiryScheduler } from './jobs/expiry';
import { RefundChecks } from './jobs/refund-checks';
import { createPaymentMetrics } from './metrics';

export interface PaymentsService {
  runtime: Runtime;
  port: number;
  stop(): Promise<void>;
}

export async function startPayments(
  config: PaymentsConfig,
  options: { logDestination?: pino.DestinationStream; metrics?: boolean } = {},
): Promise<PaymentsService> {
  // Before any connection is opened: a PSP that cannot be built is a configuration error. One per
  // environment: test charges and refunds never reach the live PSP (docs/payments.md).
  const psps = pspsFromConfig(config);
  const runtime = await createRuntime({
    service: 'payments',
    config,
    schema: SCHEMA,
    entities,
    migrations,
    topology,
    logDestination: options.logDestination,
    idempotency: true,
  });
  const metrics = createPaymentMetrics(runtime.metrics);
  const lifecycle = {
    psps,
    sql: runtime.sql,
    logger: runtime.logger,
    metrics,
    fees: { bps: config.PLATFORM_FEE_BPS, fixedAmount: config.PLATFORM_FEE_FIXED_AMOUNT },
    refundChecks: { baseMs: config.REFUND_CHECK_BASE_MS, maxMs: config.REFUND_CHECK_MAX_MS },
  };
  const routeDeps = {
    charges: {
      psps,
      feeBps: config.PLATFORM_FEE_BPS,
      feeFixedAmount: config.PLATFORM_FEE_FIXED_AMOUNT,
      writes: new ChargeWrites(runtime.sql),
    },
    lifecycle,
    pspSenders: pspSendersFromConfig(config),
    pspMaxBytes: config.PSP_NOTIFICATION_MAX_BYTES,
    callerKeys: callerKeysOf(config, 'payments'),
  };
  const expiry = new ExpiryScheduler(runtime.orm, lifecycle, config.EXPIRY_INTERVAL_MS, runtime.logger);
  const refundChecks = new RefundChecks(
    runtime.orm,
    lifecycle,
    { intervalMs: config.REFUND_CHECK_INTERVAL_MS, alertAfterMs: config.REFUND_ALERT_AFTER_MS },
    runtime.logger,
    metrics,
  );
  const { server } = await serveService(runtime, {
    port: config.PORT,
    metricsPort: options.metrics === false ? undefined : config.METRICS_PORT,
    callerKeys: routeDeps.callerKeys,
    access: PAYMENTS_ACCESS,
    mountPublic: (app, json) => mountPublicRoutes(app, runtime, routeDeps, json),
    mount: (app) => mountRoutes(app, runtime, routeDeps),
  });
  expiry.start();
  refundChecks.start();
  const address = server.address();
  return {
    runtime,
    port: typeof address === 'object' && address ? address.port : config.PORT,
    stop: () =>
      runtime.stop(async () => {
        await Promise.all([expiry.stop(), refundChecks.stop()]);
        await Promise.all([...new Set([psps.live, psps.test])].map((psp) => psp.close?.()));
      }),
  };
}

/** How each environment's PSP is recognised on notifications (docs/payments.md, "bacen-api-pix"). */
function pspSendersFromConfig(config: PaymentsConfig): PspSenders {
  const certificate = (subject: string | undefined, issuer: string | undefined) =>
    subject ? { subject, issuer: issuer ?? null } : null;
  return {
    live: {
      secret: config.PSP_WEBHOOK_SECRET ?? null,
      certificate: certificate(config.PSP_CLIENT_CERT_SUBJECT, config.PSP_CLIENT_CERT_ISSUER),
    },
    test: {
      secret: config.PSP_TEST_WEBHOOK_SECRET ?? null,
      certificate: certificate(config.PSP_TEST_CLIENT_CERT_SUBJECT, config.PSP_TEST_CLIENT_CERT_ISSUER),
    },
  };
}
