import { ConfigError, callKeyOf, callerKeysOf, deriveCallKey, devInternalKey } from '@seller-api/service-kit';
import { loadOrdersConfig } from './config';

describe("orders' keys", () => {
  it('signs with its INTERNAL_KEY (the development one by default) and verifies with INTERNAL_CALLER_KEYS', () => {
    const config = loadOrdersConfig({});
    expect(config.INTERNAL_KEY).toBe(devInternalKey('orders'));
    expect(callKeyOf(config, 'orders', 'payments').key).toBe(
      deriveCallKey(devInternalKey('orders'), 'payments'),
    );
    expect(callerKeysOf(config, 'orders').keys.get('gateway')).toEqual([
      deriveCallKey(devInternalKey('gateway'), 'orders'),
    ]);
  });

  it("keeps the previous release's secrets only while they are given, checked, every bad one named", () => {
    expect(loadOrdersConfig({}).PAYMENTS_INTERNAL_SECRET).toBeUndefined();
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

describe('local webhook targets', () => {
  it('refuses local webhook targets in production, naming each variable', () => {
    const production = {
      NODE_ENV: 'production',
      INTERNAL_KEY: 'a-private-orders-key-0123456789abcdef',
      INTERNAL_CALLER_KEYS: `gateway:${deriveCallKey('a-private-gateway-key-0123456789abcdef', 'orders')}`,
    };
    expect(loadOrdersConfig(production).WEBHOOK_ALLOW_PRIVATE_TARGETS).toBe(false);
    let error: unknown;
    try {
      loadOrdersConfig({
        ...production,
        WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
        WEBHOOK_ALLOW_LOOPBACK_TARGETS: 'true',
      });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual([
      'WEBHOOK_ALLOW_PRIVATE_TARGETS: Must not be true in production',
      'WEBHOOK_ALLOW_LOOPBACK_TARGETS: Must not be true in production',
    ]);
  });
});

describe('the overdue job', () => {
  it('runs every minute by default, or as OVERDUE_INTERVAL_MS says', () => {
    expect(loadOrdersConfig({}).OVERDUE_INTERVAL_MS).toBe(60_000);
    expect(loadOrdersConfig({ OVERDUE_INTERVAL_MS: '250' }).OVERDUE_INTERVAL_MS).toBe(250);
  });

  it.each(['0', '-1', '1.5', 'soon'])('refuses OVERDUE_INTERVAL_MS=%s, naming it', (value) => {
    let error: unknown;
    try {
      loadOrdersConfig({ OVERDUE_INTERVAL_MS: value });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems.map((p) => p.split(':')[0])).toEqual(['OVERDUE_INTERVAL_MS']);
  });
});
