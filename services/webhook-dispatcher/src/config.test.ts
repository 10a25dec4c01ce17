import { ConfigError } from '@seller-api/service-kit';
import { loadDispatcherConfig } from './config';

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
});
