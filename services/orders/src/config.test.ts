import { ConfigError } from '@seller-api/service-kit';
import { loadOrdersConfig } from './config';

describe("orders' secrets for the services it calls", () => {
  it('are its own INTERNAL_SECRET when unset, and their own when given', () => {
    expect(loadOrdersConfig({ INTERNAL_SECRET: 'the-one-shared-secret' })).toMatchObject({
      PAYMENTS_INTERNAL_SECRET: 'the-one-shared-secret',
      WITHDRAWALS_INTERNAL_SECRET: 'the-one-shared-secret',
    });
    expect(
      loadOrdersConfig({
        INTERNAL_SECRET: 'the-orders-secret',
        PAYMENTS_INTERNAL_SECRET: 'the-payments-secret',
        WITHDRAWALS_INTERNAL_SECRET: 'the-withdrawals-secret',
      }),
    ).toMatchObject({
      INTERNAL_SECRET: 'the-orders-secret',
      PAYMENTS_INTERNAL_SECRET: 'the-payments-secret',
      WITHDRAWALS_INTERNAL_SECRET: 'the-withdrawals-secret',
    });
  });

  it('are checked, every bad one named', () => {
    let error: unknown;
    try {
      loadOrdersConfig({ PAYMENTS_INTERNAL_SECRET: 'short', WITHDRAWALS_INTERNAL_SECRET: 'tiny' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems.map((p) => p.split(':')[0])).toEqual([
      'PAYMENTS_INTERNAL_SECRET',
      'WITHDRAWALS_INTERNAL_SECRET',
    ]);
  });
});
