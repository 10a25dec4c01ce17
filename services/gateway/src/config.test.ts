import { ConfigError } from '@seller-api/service-kit';
import { loadGatewayConfig } from './config';

const CALLEES = [
  'ORDERS_INTERNAL_SECRET',
  'PAYMENTS_INTERNAL_SECRET',
  'WITHDRAWALS_INTERNAL_SECRET',
  'WEBHOOKS_INTERNAL_SECRET',
] as const;

const problems = (source: NodeJS.ProcessEnv) => {
  try {
    loadGatewayConfig(source);
    return [];
  } catch (err) {
    return (err as ConfigError).problems;
  }
};

describe("the gateway's internal secrets", () => {
  it("signs for every service with its INTERNAL_SECRET when the services' own are unset", () => {
    const config = loadGatewayConfig({ INTERNAL_SECRET: 'the-one-shared-secret' });
    for (const name of CALLEES) expect(config[name]).toBe('the-one-shared-secret');
  });

  it("signs for each service with that service's secret when given", () => {
    const config = loadGatewayConfig({
      INTERNAL_SECRET: 'the-one-shared-secret',
      PAYMENTS_INTERNAL_SECRET: 'the-payments-secret',
    });
    expect(config.PAYMENTS_INTERNAL_SECRET).toBe('the-payments-secret');
    expect(config.ORDERS_INTERNAL_SECRET).toBe('the-one-shared-secret');
  });

  it('in production, needs no INTERNAL_SECRET of its own once all four are set; names each bad one', () => {
    const four = Object.fromEntries(CALLEES.map((name) => [name, `${name.toLowerCase()}-value`]));
    expect(problems({ NODE_ENV: 'production', ...four })).toEqual([]);
    expect(problems({ NODE_ENV: 'production', ...four, WEBHOOKS_INTERNAL_SECRET: 'short' })).toEqual([
      'WEBHOOKS_INTERNAL_SECRET: Too small: expected string to have >=16 characters',
    ]);
    const { ORDERS_INTERNAL_SECRET: _unset, ...three } = four;
    expect(problems({ NODE_ENV: 'production', ...three })).toEqual([
      'INTERNAL_SECRET: must be set to a private value in production',
    ]);
  });
});
