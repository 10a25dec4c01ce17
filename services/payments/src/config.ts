import { commonEnv, env, loadConfig } from '@seller-api/service-kit';

export const paymentsEnv = {
  ...commonEnv,
  PORT: env.port.default(3002),
  METRICS_PORT: env.port.default(9002),
};

export type PaymentsConfig = ReturnType<typeof loadPaymentsConfig>;

export function loadPaymentsConfig(source: NodeJS.ProcessEnv = process.env) {
  return loadConfig(paymentsEnv, source);
}
