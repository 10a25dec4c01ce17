import { commonEnv, env, loadConfig } from '@seller-api/service-kit';

export const withdrawalsEnv = {
  ...commonEnv,
  PORT: env.port.default(3003),
  METRICS_PORT: env.port.default(9003),
};

export type WithdrawalsConfig = ReturnType<typeof loadWithdrawalsConfig>;

export function loadWithdrawalsConfig(source: NodeJS.ProcessEnv = process.env) {
  return loadConfig(withdrawalsEnv, source);
}
