import { z } from 'zod';
import { ConfigError, calleeSecret, commonEnv, env, loadConfig } from './config';

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

  it('treats an empty variable as unset', () => {
    expect(loadConfig(shape, { PORT: '' }).PORT).toBe(3001);
  });

  it('refuses the development internal secret in production', () => {
    expect(() => loadConfig(shape, { NODE_ENV: 'production' })).toThrow(/INTERNAL_SECRET/);
    expect(
      loadConfig(shape, { NODE_ENV: 'production', INTERNAL_SECRET: 'a-long-private-secret-value' }).NODE_ENV,
    ).toBe('production');
  });

  describe("a called service's secret", () => {
    const caller = { ...commonEnv, PAYMENTS_INTERNAL_SECRET: calleeSecret() };
    const problems = (source: NodeJS.ProcessEnv, options?: { verifiesIdentities?: boolean }) => {
      try {
        loadConfig(caller, source, options);
        return [];
      } catch (err) {
        return (err as ConfigError).problems;
      }
    };

    it("is the caller's own INTERNAL_SECRET when unset, so one shared secret keeps working", () => {
      expect(loadConfig(caller, { INTERNAL_SECRET: 'the-one-shared-secret' }).PAYMENTS_INTERNAL_SECRET).toBe(
        'the-one-shared-secret',
      );
      expect(loadConfig(caller, { PAYMENTS_INTERNAL_SECRET: '' }).PAYMENTS_INTERNAL_SECRET).toBe(
        loadConfig(caller, {}).INTERNAL_SECRET,
      );
      const split = loadConfig(caller, {
        INTERNAL_SECRET: 'the-callers-own-secret',
        PAYMENTS_INTERNAL_SECRET: 'the-payments-secret',
      });
      expect(split).toMatchObject({
        INTERNAL_SECRET: 'the-callers-own-secret',
        PAYMENTS_INTERNAL_SECRET: 'the-payments-secret',
      });
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

    it('refuses the development value in production, naming each variable that has it', () => {
      const dev = commonEnv.INTERNAL_SECRET.parse(undefined);
      const production = { NODE_ENV: 'production' };
      expect(problems({ ...production, INTERNAL_SECRET: 'a-long-private-secret-value' })).toEqual([]);
      expect(problems(production)).toEqual(['INTERNAL_SECRET: must be set to a private value in production']);
      expect(
        problems({
          ...production,
          INTERNAL_SECRET: 'a-long-private-secret-value',
          PAYMENTS_INTERNAL_SECRET: dev,
        }),
      ).toEqual(['PAYMENTS_INTERNAL_SECRET: must be set to a private value in production']);
      expect(problems({ ...production, PAYMENTS_INTERNAL_SECRET: dev })).toEqual([
        'INTERNAL_SECRET: must be set to a private value in production',
        'PAYMENTS_INTERNAL_SECRET: must be set to a private value in production',
      ]);
    });

    it('a service that only signs needs no INTERNAL_SECRET once every callee secret is set', () => {
      const production = { NODE_ENV: 'production' };
      const signer = { verifiesIdentities: false };
      expect(problems({ ...production, PAYMENTS_INTERNAL_SECRET: 'the-payments-secret' }, signer)).toEqual(
        [],
      );
      // Unset, the callee's secret is INTERNAL_SECRET, which must then be private.
      expect(problems(production, signer)).toEqual([
        'INTERNAL_SECRET: must be set to a private value in production',
      ]);
    });
  });
});
