import { commonEnv, env, loadConfig } from '@seller-api/service-kit';

export const webhooksEnv = {
  ...commonEnv,
  PORT: env.port.default(3004),
  METRICS_PORT: env.port.default(9004),
};

export type DispatcherConfig = ReturnType<typeof loadDispatcherConfig>;

export function loadDispatcherConfig(source: NodeJS.ProcessEnv = process.env) {
  return loadConfig(webhooksEnv, source);
}
