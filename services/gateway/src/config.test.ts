import { ConfigError, callKeyOf, deriveCallKey, devInternalKey } from '@seller-api/service-kit';
import { loadGatewayConfig } from './config';

const PRIVATE_KEY = 'a-private-gateway-key-0123456789abcdef';

const problems = (source: NodeJS.ProcessEnv) => {
  try {
    loadGatewayConfig(source);
    return [];
  } catch (err) {
    return (err as ConfigError).problems;
  }
};

describe("the gateway's internal key", () => {
  it('signs for each service with its key derived for that service; the development key by default', () => {
    const config = loadGatewayConfig({});
    expect(config.INTERNAL_KEY).toBe(devInternalKey('gateway'));
    const own = loadGatewayConfig({ INTERNAL_KEY: PRIVATE_KEY });
    const toOrders = callKeyOf(own, 'gateway', 'orders');
    expect(toOrders).toMatchObject({
      caller: 'gateway',
      callee: 'orders',
      key: deriveCallKey(PRIVATE_KEY, 'orders'),
    });
    expect(callKeyOf(own, 'gateway', 'payments').key).not.toBe(toOrders.key);
    expect(toOrders.legacySecret).toBeUndefined();
  });

  it("while upgrading, also signs with a service's previous-release secret, else its own INTERNAL_SECRET", () => {
    const config = loadGatewayConfig({
      INTERNAL_SECRET: 'the-one-shared-secret',
      PAYMENTS_INTERNAL_SECRET: 'the-payments-secret',
    });
    expect(callKeyOf(config, 'gateway', 'payments', config.PAYMENTS_INTERNAL_SECRET).legacySecret).toBe(
      'the-payments-secret',
    );
    expect(callKeyOf(config, 'gateway', 'orders', config.ORDERS_INTERNAL_SECRET).legacySecret).toBe(
      'the-one-shared-secret',
    );
  });

  it('in production needs a private INTERNAL_KEY, and refuses a published or short previous secret', () => {
    expect(problems({ NODE_ENV: 'production', INTERNAL_KEY: PRIVATE_KEY })).toEqual([]);
    expect(problems({ NODE_ENV: 'production' })).toEqual(['INTERNAL_KEY: must be set in production']);
    expect(problems({ NODE_ENV: 'production', INTERNAL_KEY: devInternalKey('gateway') })).toEqual([
      'INTERNAL_KEY: is a published development value; set a private one in production',
    ]);
    expect(
      problems({
        NODE_ENV: 'production',
        INTERNAL_KEY: PRIVATE_KEY,
        WEBHOOKS_INTERNAL_SECRET: 'webhooks-internal-dev-only',
        ORDERS_INTERNAL_SECRET: 'a-sixteen-byte-secret',
      }),
    ).toEqual([
      'ORDERS_INTERNAL_SECRET: must be at least 32 bytes in production',
      'WEBHOOKS_INTERNAL_SECRET: is a published development value; set a private one in production',
    ]);
  });
});
