import { randomBytes } from 'node:crypto';
import { ConfigError } from '@seller-api/service-kit';
import { DEV_WEBHOOK_SECRETS_KEY, loadDispatcherConfig } from './config';

describe('dispatcher configuration', () => {
  it('has a 10 s attempt timeout by default', () => {
    expect(loadDispatcherConfig({}).WEBHOOK_ATTEMPT_TIMEOUT_MS).toBe(10_000);
  });

  it('refuses an attempt timeout that could outlast the lease of a claimed delivery', () => {
    let error: unknown;
    try {
      loadDispatcherConfig({ WEBHOOK_ATTEMPT_TIMEOUT_MS: '60000' });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual([
      'WEBHOOK_ATTEMPT_TIMEOUT_MS: Must be at most 50000: an attempt must end well within its 60 s lease',
    ]);
  });

  it('keeps events 30 days by default, and refuses a retention that is not a whole number of days', () => {
    expect(loadDispatcherConfig({}).EVENTS_RETENTION_DAYS).toBe(30);
    expect(loadDispatcherConfig({ EVENTS_RETENTION_DAYS: '7' }).EVENTS_RETENTION_DAYS).toBe(7);
    for (const value of ['0', '1.5', 'forever', '4000']) {
      expect(() => loadDispatcherConfig({ EVENTS_RETENTION_DAYS: value })).toThrow(ConfigError);
    }
  });

  it('keeps deliveries 90 days by default, and never fewer than 7', () => {
    expect(loadDispatcherConfig({}).DELIVERIES_RETENTION_DAYS).toBe(90);
    expect(loadDispatcherConfig({ DELIVERIES_RETENTION_DAYS: '7' }).DELIVERIES_RETENTION_DAYS).toBe(7);
    for (const value of ['6', '30.5', 'never', '4000']) {
      expect(() => loadDispatcherConfig({ DELIVERIES_RETENTION_DAYS: value })).toThrow(ConfigError);
    }
  });

  describe('WEBHOOK_SECRETS_KEY', () => {
    const problemsOf = (source: NodeJS.ProcessEnv): string[] => {
      try {
        loadDispatcherConfig(source);
        return [];
      } catch (err) {
        if (!(err instanceof ConfigError)) throw err;
        return err.problems;
      }
    };
    const key = randomBytes(32);

    it('takes 32 bytes in hex or base64, and a development key outside production', () => {
      expect(loadDispatcherConfig({ WEBHOOK_SECRETS_KEY: key.toString('hex') }).WEBHOOK_SECRETS_KEY).toEqual(
        key,
      );
      expect(
        loadDispatcherConfig({ WEBHOOK_SECRETS_KEY: key.toString('base64') }).WEBHOOK_SECRETS_KEY,
      ).toEqual(key);
      expect(loadDispatcherConfig({ NODE_ENV: 'test' }).WEBHOOK_SECRETS_KEY).toHaveLength(32);
      expect(loadDispatcherConfig({}).WEBHOOK_SECRETS_KEY_PREVIOUS).toBeUndefined();
    });

    it('refuses a key of another size without echoing it', () => {
      const short = randomBytes(16).toString('hex');
      const problems = problemsOf({ WEBHOOK_SECRETS_KEY: short, WEBHOOK_SECRETS_KEY_PREVIOUS: 'nope' });
      expect(problems).toEqual([
        expect.stringMatching(/^WEBHOOK_SECRETS_KEY: Must be 32 bytes/),
        expect.stringMatching(/^WEBHOOK_SECRETS_KEY_PREVIOUS: Must be 32 bytes/),
      ]);
      expect(problems.join()).not.toContain(short);
    });

    it('refuses a missing or development key in production', () => {
      const production = { NODE_ENV: 'production', INTERNAL_CALLER_KEYS: `gateway:${'g'.repeat(43)}` };
      expect(problemsOf(production)).toEqual([
        'WEBHOOK_SECRETS_KEY: Must be set in production (openssl rand -base64 32)',
      ]);
      expect(problemsOf({ ...production, WEBHOOK_SECRETS_KEY: DEV_WEBHOOK_SECRETS_KEY })).toEqual([
        'WEBHOOK_SECRETS_KEY: Must not be the development key in production',
      ]);
      expect(problemsOf({ ...production, WEBHOOK_SECRETS_KEY: key.toString('base64') })).toEqual([]);
    });

    it('refuses a previous key equal to the current one', () => {
      expect(
        problemsOf({
          WEBHOOK_SECRETS_KEY: key.toString('hex'),
          WEBHOOK_SECRETS_KEY_PREVIOUS: key.toString('base64'),
        }),
      ).toEqual(['WEBHOOK_SECRETS_KEY_PREVIOUS: Must differ from WEBHOOK_SECRETS_KEY']);
    });
  });
});
