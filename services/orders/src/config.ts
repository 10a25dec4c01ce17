import { commonEnv, env, loadConfig } from '@seller-api/service-kit';

export const ordersEnv = {
  ...commonEnv,
  PORT: env.port.default(3001),
  METRICS_PORT: env.port.default(9001),
};

export type OrdersConfig = ReturnType<typeof loadOrdersConfig>;

export function loadOrdersConfig(source: NodeJS.ProcessEnv = process.env) {
  return loadConfig(ordersEnv, source);
}
