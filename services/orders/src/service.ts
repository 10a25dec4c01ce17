import {
  callKeyOf,
  callerKeysOf,
  createRuntime,
  localTargets,
  serveService,
  type Runtime,
} from '@seller-api/service-kit';
import { ORDERS_ACCESS } from './http/callers';
import type pino from 'pino';
import type { OrdersConfig } from './config';
import { entities } from './db/entities';
import { SCHEMA, migrations } from './db/migrations';
import { CHARGES_QUEUE, topology } from './events/topology';
import { chargeStateHandler } from './events/charges';
import { mountRoutes } from './http/routes';
import { PaymentsClient } from './clients/payments';
import { RefundHoldsClient } from './clients/refund-holds';
import { startOverdueNotices } from './jobs/overdue';

export interface OrdersService {
  runtime: Runtime;
  port: number;
  stop(): Promise<void>;
}

export async function startOrders(
  config: OrdersConfig,
  options: { logDestination?: pino.DestinationStream; metrics?: boolean } = {},
): Promise<OrdersService> {
  const runtime = await createRuntime({
    service: 'orders',
    config,
    schema: SCHEMA,
    entities,
    migrations,
    topology,
    logDestination: options.logDestination,
    idempotency: true,
  });
  const payments = new PaymentsClient(
    config.PAYMENTS_URL,
    callKeyOf(config, 'orders', 'payments', config.PAYMENTS_INTERNAL_SECRET),
    config.PAYMENTS_TIMEOUT_MS,
  );
  const holds = new RefundHoldsClient(
    config.WITHDRAWALS_URL,
    callKeyOf(config, 'orders', 'withdrawals', config.WITHDRAWALS_INTERNAL_SECRET),
    config.WITHDRAWALS_TIMEOUT_MS,
  );
  const { server } = await serveService(runtime, {
    port: config.PORT,
    metricsPort: options.metrics === false ? undefined : config.METRICS_PORT,
    callerKeys: callerKeysOf(config, 'orders'),
    access: ORDERS_ACCESS,
    mount: (app) =>
      mountRoutes(app, {
        runtime,
        payments,
        holds,
        targets: localTargets(config),
      }),
  });
  await runtime.broker.consume(CHARGES_QUEUE, chargeStateHandler(runtime));
  const overdue = startOverdueNotices(runtime, config.OVERDUE_INTERVAL_MS);
  const address = server.address();
  return {
    runtime,
    port: typeof address === 'object' && address ? address.port : config.PORT,
    stop: () =>
      runtime.stop(async () => {
        // The job first: a run in progress finishes its transaction before the pools close.
        await overdue.stop();
        await Promise.all([payments.close(), holds.close()]);
      }),
  };
}
