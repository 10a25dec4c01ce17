import { z } from 'zod';
import { ConfigError, commonEnv, env, loadConfig } from './config';

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
      });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as ConfigError).message;
    for (const name of ['PORT', 'DATABASE_URL', 'RATE', 'LOG_LEVEL', 'INTERNAL_SECRET'])
      expect(message).toContain(`${name}:`);
    expect(message).not.toContain('not a url');
    expect((error as ConfigError).problems).toHaveLength(5);
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
});
