import { calleeSecret, commonEnv, env, loadConfig } from '@seller-api/service-kit';
import { z } from 'zod';

export const ordersEnv = {
  ...commonEnv,
  PORT: env.port.default(3001),
  METRICS_PORT: env.port.default(9001),
  PAYMENTS_URL: z.url().default('http://127.0.0.1:3002'),
  /** Payments' secret of the previous release, while a deployment is upgraded (docs/deploy.md). */
  PAYMENTS_INTERNAL_SECRET: calleeSecret(),
  /** How long a create-order waits for the PIX charge before answering 503. */
  PAYMENTS_TIMEOUT_MS: z.coerce.number().int().positive().default(5_000),
  /** Withdrawals' ledger, where a seller's refund reserves the order's net first (docs/finance.md). */
  WITHDRAWALS_URL: z.url().default('http://127.0.0.1:3003'),
  /** Withdrawals' secret of the previous release, while a deployment is upgraded. */
  WITHDRAWALS_INTERNAL_SECRET: calleeSecret(),
  /** How long a refund waits for that reservation before answering 503. */
  WITHDRAWALS_TIMEOUT_MS: z.coerce.number().int().positive().default(5_000),
  /**
   * How often the job looks for PENDING due-date orders past their effective due date, to send their
   * order.overdue (jobs/overdue.ts; docs/pix.md, "Due-date charges").
   */
  OVERDUE_INTERVAL_MS: z.coerce.number().int().positive().default(60_000),
  /** `true` lets `test` orders name loopback and private postback URLs (as for webhooks). */
  WEBHOOK_ALLOW_PRIVATE_TARGETS: env.bool.default(false),
  /** `true` lets `test` orders name loopback postback URLs; `npm start` sets it (docs/webhooks.md). */
  WEBHOOK_ALLOW_LOOPBACK_TARGETS: env.bool.default(false),
};

export type OrdersConfig = ReturnType<typeof loadOrdersConfig>;

export function loadOrdersConfig(source: NodeJS.ProcessEnv = process.env) {
  return loadConfig(ordersEnv, source, { service: 'orders', signs: true });
}
