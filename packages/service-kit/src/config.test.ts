import { z } from 'zod';
import {
  ConfigError,
  calleeSecret,
  commonEnv,
  databaseEnv,
  devCallerKeys,
  type KeyOptions,
  devInternalKey,
  env,
  loadConfig,
} from './config';
import { deriveCallKey, signIdentity, verifyIdentity } from './identity';
import { callKeyOf, callerKeysOf } from './internal-keys';

const GOOD_KEY = 'a-private-internal-key-of-this-service-0123';
/** INTERNAL_CALLER_KEYS as a deployment sets it: private keys of two callers, derived for the callee. */
const GOOD_CALLER_KEYS = [
  `gateway:${deriveCallKey('the-gateways-private-internal-key-000000', 'orders')}`,
  `withdrawals:${deriveCallKey('the-withdrawals-private-internal-key-0000', 'orders')}`,
].join(',');

describe('loadConfig', () => {
  const shape = {
    ...commonEnv,
    PORT: env.port.default(3001),
    RATE: z.coerce.number().int().positive().default(300),
  };

  it('applies the defaults that point at the local servers', () => {
    const config = loadConfig(shape, {});
    expect(config).toMatchObject({
      PORT: 3001,
      RATE: 300,
      DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/seller_api',
      AMQP_URL: 'amqp://guest:guest@127.0.0.1:5672',
      MIGRATE_ON_START: true,
    });
  });

  it('reads the database settings for a pooler: prepared statements on and no lock address unless set', () => {
    expect(loadConfig(databaseEnv, {})).toEqual({
      DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/seller_api',
      DATABASE_PREPARED_STATEMENTS: true,
    });
    expect(
      loadConfig(databaseEnv, {
        DATABASE_URL: 'postgres://sa_orders:p@pgbouncer:6432/seller_api',
        DATABASE_LOCK_URL: 'postgres://sa_orders:p@db:5432/seller_api',
        DATABASE_PREPARED_STATEMENTS: 'false',
      }),
    ).toMatchObject({
      DATABASE_LOCK_URL: 'postgres://sa_orders:p@db:5432/seller_api',
      DATABASE_PREPARED_STATEMENTS: false,
    });
    expect(() =>
      loadConfig(databaseEnv, { DATABASE_LOCK_URL: 'db:5432', DATABASE_PREPARED_STATEMENTS: 'off' }),
    ).toThrow(
      /DATABASE_LOCK_URL[\s\S]*DATABASE_PREPARED_STATEMENTS|DATABASE_PREPARED_STATEMENTS[\s\S]*DATABASE_LOCK_URL/,
    );
  });

  it('names every bad variable at once, without echoing values', () => {
    let error: unknown;
    try {
      loadConfig(shape, {
        PORT: 'eighty',
        DATABASE_URL: 'not a url',
        RATE: '-1',
        LOG_LEVEL: 'loud',
        INTERNAL_SECRET: 'short',
        INTERNAL_SECRET_PREVIOUS: 'also-short',
      });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as ConfigError).message;
    for (const name of [
      'PORT',
      'DATABASE_URL',
      'RATE',
      'LOG_LEVEL',
      'INTERNAL_SECRET',
      'INTERNAL_SECRET_PREVIOUS',
    ])
      expect(message).toContain(`${name}:`);
    expect(message).not.toContain('not a url');
    expect(message).not.toContain('also-short');
    expect((error as ConfigError).problems).toHaveLength(6);
  });

  it("takes a cluster's nodes in AMQP_URL, separated by commas, and refuses what is not amqp", () => {
    const nodes = 'amqp://u:p@rabbit-0:5672, amqp://u:p@rabbit-1:5672,amqps://u:p@rabbit-2:5671';
    expect(loadConfig(shape, { AMQP_URL: nodes }).AMQP_URL).toBe(nodes);
    for (const bad of ['http://rabbit:5672', 'amqp://a:5672,,x', 'amqp://a:5672,postgres://b'])
      expect(() => loadConfig(shape, { AMQP_URL: bad })).toThrow(/AMQP_URL: Must be one amqp/);
  });

  it('treats an empty variable as unset', () => {
    expect(loadConfig(shape, { PORT: '' }).PORT).toBe(3001);
  });

  describe("a called service's secret", () => {
    const caller = { ...commonEnv, PAYMENTS_INTERNAL_SECRET: calleeSecret() };
    const problems = (source: NodeJS.ProcessEnv, options?: KeyOptions) => {
      try {
        loadConfig(caller, source, options);
        return [];
      } catch (err) {
        return (err as ConfigError).problems;
      }
    };

    it("is not filled from INTERNAL_SECRET: the caller signs with its own when the callee's is unset", () => {
      const config = loadConfig(caller, { INTERNAL_SECRET: 'the-one-shared-secret' }, { service: 'orders' });
      expect(config.PAYMENTS_INTERNAL_SECRET).toBeUndefined();
      expect(callKeyOf(config, 'orders', 'payments', config.PAYMENTS_INTERNAL_SECRET).legacySecret).toBe(
        'the-one-shared-secret',
      );
      const split = loadConfig(
        caller,
        { INTERNAL_SECRET: 'the-callers-own-secret', PAYMENTS_INTERNAL_SECRET: 'the-payments-secret' },
        { service: 'orders' },
      );
      expect(callKeyOf(split, 'orders', 'payments', split.PAYMENTS_INTERNAL_SECRET).legacySecret).toBe(
        'the-payments-secret',
      );
      // Neither set (an upgraded deployment): no previous-release form is sent.
      const upgraded = loadConfig(caller, {}, { service: 'orders' });
      expect(callKeyOf(upgraded, 'orders', 'payments', upgraded.PAYMENTS_INTERNAL_SECRET).legacySecret).toBe(
        undefined,
      );
    });

    it('is checked like INTERNAL_SECRET, each bad one named once, never echoed', () => {
      expect(problems({ PAYMENTS_INTERNAL_SECRET: 'short' })).toEqual([
        'PAYMENTS_INTERNAL_SECRET: Too small: expected string to have >=16 characters',
      ]);
      // Unset, a bad INTERNAL_SECRET is named once, as itself.
      expect(problems({ INTERNAL_SECRET: 'short' }).map((p) => p.split(':')[0])).toEqual(['INTERNAL_SECRET']);
      const both = problems({ INTERNAL_SECRET: 'short', PAYMENTS_INTERNAL_SECRET: 'tiny' });
      expect(both.map((p) => p.split(':')[0])).toEqual(['INTERNAL_SECRET', 'PAYMENTS_INTERNAL_SECRET']);
      expect(both.join('\n')).not.toMatch(/short|tiny/);
    });

    it('is refused in production when short or published, naming each variable that has it', () => {
      const production = { NODE_ENV: 'production', INTERNAL_CALLER_KEYS: GOOD_CALLER_KEYS };
      const good = 'a-private-previous-release-secret-0123';
      expect(problems({ ...production, INTERNAL_SECRET: good, PAYMENTS_INTERNAL_SECRET: good })).toEqual([]);
      // Unset, it is not required: a deployment done upgrading has none.
      expect(problems(production)).toEqual([]);
      // A value docker-compose once published: refused (today for its length, and it is published too).
      const compose = problems({
        ...production,
        INTERNAL_SECRET: good,
        PAYMENTS_INTERNAL_SECRET: 'change-me-in-dev-only',
      });
      expect(compose.map((p) => p.split(':')[0])).toEqual(['PAYMENTS_INTERNAL_SECRET']);
      expect(
        problems({
          ...production,
          INTERNAL_SECRET: 'test-withdrawals-secret-0123456789',
          PAYMENTS_INTERNAL_SECRET: 'test-withdrawals-secret-0123456789',
        }),
      ).toEqual([
        'INTERNAL_SECRET: is a published development value; set a private one in production',
        'PAYMENTS_INTERNAL_SECRET: is a published development value; set a private one in production',
      ]);
    });

    it('a service that only signs needs no INTERNAL_CALLER_KEYS, only its INTERNAL_KEY', () => {
      const production = { NODE_ENV: 'production', INTERNAL_KEY: GOOD_KEY };
      const signer = { service: 'gateway' as const, signs: true, verifiesIdentities: false };
      expect(problems(production, signer)).toEqual([]);
      expect(problems({ NODE_ENV: 'production' }, signer)).toEqual([
        'INTERNAL_KEY: must be set in production',
      ]);
    });
  });
});

describe('internal keys (docs/deploy.md, "Internal keys")', () => {
  const shape = { ...commonEnv, PAYMENTS_INTERNAL_SECRET: calleeSecret() };
  /** Orders: it signs (to payments and withdrawals) and verifies the gateway's calls. */
  const ORDERS = { service: 'orders' as const, signs: true };
  const production = {
    NODE_ENV: 'production',
    INTERNAL_KEY: GOOD_KEY,
    INTERNAL_CALLER_KEYS: GOOD_CALLER_KEYS,
  };
  const problems = (source: NodeJS.ProcessEnv, options: KeyOptions = ORDERS) => {
    try {
      loadConfig(shape, source, options);
      return [];
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      return (err as ConfigError).problems;
    }
  };
  const names = (source: NodeJS.ProcessEnv, options?: KeyOptions) =>
    problems(source, options).map((p) => p.split(':')[0]);

  it('loads in production with private keys of the right length', () => {
    const config = loadConfig(shape, production, ORDERS);
    expect(config).toMatchObject({ NODE_ENV: 'production', INTERNAL_KEY: GOOD_KEY });
    const keys = callerKeysOf(config, 'orders');
    expect([...keys.keys.keys()]).toEqual(['gateway', 'withdrawals']);
    expect(keys.legacySecrets).toEqual([]);
    // A caller repeated while its key is replaced: both kept, in order.
    const rotating = `${GOOD_CALLER_KEYS},gateway:${deriveCallKey('the-gateways-next-private-key-00000000', 'orders')}`;
    const rotated = callerKeysOf(
      loadConfig(shape, { ...production, INTERNAL_CALLER_KEYS: rotating }, ORDERS),
      'orders',
    );
    expect(rotated.keys.get('gateway')).toHaveLength(2);
    expect(rotated.keys.get('withdrawals')).toHaveLength(1);
  });

  it('refuses in production a missing INTERNAL_KEY where the service signs, and only there', () => {
    const { INTERNAL_KEY: _key, ...withoutKey } = production;
    expect(problems(withoutKey)).toEqual(['INTERNAL_KEY: must be set in production']);
    expect(problems(withoutKey, { service: 'payments' })).toEqual([]);
    expect(problems(withoutKey, { service: 'payments', signs: false })).toEqual([]);
  });

  it('refuses in production a missing INTERNAL_CALLER_KEYS unless the service verifies no calls', () => {
    const { INTERNAL_CALLER_KEYS: _keys, ...withoutCallers } = production;
    expect(problems(withoutCallers)).toEqual(['INTERNAL_CALLER_KEYS: must be set in production']);
    expect(problems({ ...withoutCallers, INTERNAL_CALLER_KEYS: '' })).toEqual([
      'INTERNAL_CALLER_KEYS: must be set in production',
    ]);
    expect(problems(withoutCallers, { ...ORDERS, verifiesIdentities: false })).toEqual([]);
  });

  it('refuses a key of 31 bytes, and takes one of 32', () => {
    expect(names({ ...production, INTERNAL_KEY: 'k'.repeat(31) })).toEqual(['INTERNAL_KEY']);
    expect(problems({ ...production, INTERNAL_KEY: 'k'.repeat(32) })).toEqual([]);
    expect(names({ ...production, INTERNAL_CALLER_KEYS: `gateway:${'k'.repeat(31)}` })).toEqual([
      'INTERNAL_CALLER_KEYS',
    ]);
    // One short key among good ones is enough to refuse.
    expect(
      names({ ...production, INTERNAL_CALLER_KEYS: `${GOOD_CALLER_KEYS},orders:${'k'.repeat(31)}` }),
    ).toEqual(['INTERNAL_CALLER_KEYS']);
    // Outside production too: a short key signs nothing safely anywhere.
    expect(names({ INTERNAL_KEY: 'k'.repeat(31) }, ORDERS)).toEqual(['INTERNAL_KEY']);
  });

  it("refuses in production any service's development key, and a development key derived for a callee", () => {
    for (const service of ['gateway', 'orders', 'webhook-dispatcher'])
      expect(problems({ ...production, INTERNAL_KEY: devInternalKey(service) })).toEqual([
        'INTERNAL_KEY: is a published development value; set a private one in production',
      ]);
    // What a callee is given for the gateway's development key, hidden among private ones.
    const derived = `${GOOD_CALLER_KEYS},payments:${deriveCallKey(devInternalKey('gateway'), 'orders')}`;
    expect(problems({ ...production, INTERNAL_CALLER_KEYS: derived })).toEqual([
      'INTERNAL_CALLER_KEYS: is a published development value; set a private one in production',
    ]);
    // A development key derived for another callee, or given as is, is as public.
    const elsewhere = `gateway:${deriveCallKey(devInternalKey('withdrawals'), 'webhook-dispatcher')}`;
    expect(names({ ...production, INTERNAL_CALLER_KEYS: elsewhere })).toEqual(['INTERNAL_CALLER_KEYS']);
    expect(names({ ...production, INTERNAL_CALLER_KEYS: `gateway:${devInternalKey('gateway')}` })).toEqual([
      'INTERNAL_CALLER_KEYS',
    ]);
    // The whole development default, as a deployment that copied it would set it.
    expect(names({ ...production, INTERNAL_CALLER_KEYS: devCallerKeys('orders') })).toEqual([
      'INTERNAL_CALLER_KEYS',
    ]);
  });

  it("refuses in production docker-compose's old fallback 'change-me-in-dev-only' as INTERNAL_SECRET", () => {
    expect(names({ ...production, INTERNAL_SECRET: 'change-me-in-dev-only' })).toEqual(['INTERNAL_SECRET']);
    expect(names({ ...production, INTERNAL_SECRET_PREVIOUS: 'change-me-in-dev-only' })).toEqual([
      'INTERNAL_SECRET_PREVIOUS',
    ]);
    // Outside production the previous release's rule holds (16 characters): it is accepted there.
    expect(loadConfig(shape, { INTERNAL_SECRET: 'change-me-in-dev-only' }, ORDERS).INTERNAL_SECRET).toBe(
      'change-me-in-dev-only',
    );
  });

  it('refuses a malformed INTERNAL_CALLER_KEYS, in any environment', () => {
    const key = 'k'.repeat(40);
    for (const malformed of [
      `gateway=${key}`,
      `gateway ${key}`,
      `:${key}`,
      'gateway:',
      `Gateway:${key}`,
      `1gateway:${key}`,
      `gateway:${key}:extra and space`,
      ',',
    ]) {
      expect({ malformed, names: names({ ...production, INTERNAL_CALLER_KEYS: malformed }) }).toEqual({
        malformed,
        names: ['INTERNAL_CALLER_KEYS'],
      });
      expect(names({ INTERNAL_CALLER_KEYS: malformed })).toEqual(['INTERNAL_CALLER_KEYS']);
    }
    // Spaces around the entries are forgiven.
    expect(problems({ ...production, INTERNAL_CALLER_KEYS: ` gateway:${key} , orders:${key}x ` })).toEqual(
      [],
    );
    // One key for two callers (either could sign as the other), `legacy` or an unknown caller: refused.
    for (const entries of [`gateway:${key},orders:${key}`, `legacy:${key}`, `stranger:${key}`])
      expect(names({ ...production, INTERNAL_CALLER_KEYS: entries })).toEqual(['INTERNAL_CALLER_KEYS']);
  });

  it('names every bad variable in one error, without echoing any value', () => {
    const values = {
      INTERNAL_KEY: devInternalKey('orders'),
      INTERNAL_CALLER_KEYS: `gateway:${deriveCallKey(devInternalKey('gateway'), 'orders')}`,
      INTERNAL_SECRET: 'change-me-in-dev-only',
      INTERNAL_SECRET_PREVIOUS: 'test-withdrawals-secret-0123456789',
      PAYMENTS_INTERNAL_SECRET: 'short-and-secret',
    };
    let error: unknown;
    try {
      loadConfig(shape, { NODE_ENV: 'production', ...values }, ORDERS);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const { message, problems: named } = error as ConfigError;
    expect(named.map((p) => p.split(':')[0]).sort()).toEqual(Object.keys(values).sort());
    for (const value of Object.values(values)) {
      expect(message).not.toContain(value);
      // Nor a part of it long enough to matter.
      expect(message).not.toContain(value.slice(-12));
    }
    // Two malformed or missing at once: both named, once each.
    expect(
      names({ NODE_ENV: 'production', INTERNAL_CALLER_KEYS: 'not-a-pair', INTERNAL_SECRET: 'short' }).sort(),
    ).toEqual(['INTERNAL_CALLER_KEYS', 'INTERNAL_KEY', 'INTERNAL_SECRET']);
  });

  it("fills in development and tests each service's development keys, which sign and verify together", () => {
    for (const NODE_ENV of ['development', 'test', undefined]) {
      const orders = loadConfig(shape, { NODE_ENV }, ORDERS);
      expect(orders.INTERNAL_KEY).toBe(devInternalKey('orders'));
      expect(orders.INTERNAL_CALLER_KEYS).toBe(devCallerKeys('orders'));
    }
    const gateway = loadConfig(
      shape,
      { NODE_ENV: 'test' },
      { service: 'gateway', signs: true, verifiesIdentities: false },
    );
    const orders = loadConfig(shape, { NODE_ENV: 'test' }, ORDERS);
    const identity = {
      user_id: '0b8e8f2c-7e0a-4d3b-9a57-3f3c1d0e5a11',
      seller_id: '1c9f9a3d-8f1b-4e4c-8b68-4a4d2e1f6b22',
      environment: 'test' as const,
      role: 'seller' as const,
    };
    const headers = signIdentity(
      callKeyOf(gateway, 'gateway', 'orders'),
      identity,
      'GET',
      '/sellers/orders/',
    );
    expect(verifyIdentity(callerKeysOf(orders, 'orders'), headers, 'GET', '/sellers/orders/')).toEqual({
      caller: 'gateway',
      identity,
    });
    // Every service's development key is known to every callee outside production.
    expect([...callerKeysOf(orders, 'orders').keys.keys()]).toEqual([
      'gateway',
      'orders',
      'payments',
      'withdrawals',
      'webhook-dispatcher',
    ]);
    // An explicit value wins over the default; no service named, nothing is filled.
    expect(loadConfig(shape, { INTERNAL_KEY: GOOD_KEY }, ORDERS).INTERNAL_KEY).toBe(GOOD_KEY);
    expect(loadConfig(shape, {}).INTERNAL_KEY).toBeUndefined();
    // Production fills nothing.
    expect(names({ NODE_ENV: 'production' })).toEqual(['INTERNAL_KEY', 'INTERNAL_CALLER_KEYS']);
  });
});
