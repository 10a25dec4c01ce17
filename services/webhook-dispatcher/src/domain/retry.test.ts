import { z } from 'zod';
import {
  DEFAULT_SCHEDULE,
  MAX_ATTEMPTS,
  RetryScheduleEnv,
  parseSchedule,
  retryAfterDelay,
  scheduledDelay,
} from './retry';

const S = 1_000;
const M = 60 * S;
const H = 60 * M;
const DEFAULT_MS = [30 * S, 2 * M, 10 * M, 30 * M, 1 * H, 2 * H, 4 * H];

describe('parseSchedule', () => {
  it('parses the default schedule', () => {
    expect(MAX_ATTEMPTS).toBe(8);
    expect(DEFAULT_SCHEDULE).toBe('30s,2m,10m,30m,1h,2h,4h');
    expect(parseSchedule(DEFAULT_SCHEDULE)).toEqual(DEFAULT_MS);
  });

  it('understands ms, s, m and h', () => {
    expect(parseSchedule('50ms,2s,3m,1h')).toEqual([50, 2 * S, 3 * M, H, H, H, H]);
    expect(parseSchedule('0ms')).toEqual([0, 0, 0, 0, 0, 0, 0]);
  });

  it('allows spaces around the commas and the whole value', () => {
    expect(parseSchedule(' 50ms , 100ms,  200ms ')).toEqual([50, 100, 200, 200, 200, 200, 200]);
  });

  it('repeats the last delay of a shorter list to fill the 7 delays', () => {
    expect(parseSchedule('50ms')).toEqual(Array(7).fill(50));
    expect(parseSchedule('10ms,20ms')).toEqual([10, 20, 20, 20, 20, 20, 20]);
  });

  it('accepts exactly 7 and refuses 8 delays', () => {
    expect(parseSchedule('1s,2s,3s,4s,5s,6s,7s')).toHaveLength(7);
    expect(() => parseSchedule('1s,2s,3s,4s,5s,6s,7s,8s')).toThrow(/8 delays; at most 7/);
  });

  it.each([
    ['', /empty/],
    ['   ', /empty/],
    ['30', /entry 1 is "30"/],
    ['30s,2x', /entry 2 is "2x"/],
    ['30s,,2m', /entry 2 is an empty entry/],
    ['30s,', /entry 2 is an empty entry/],
    ['1.5s', /entry 1 is "1.5s"/],
    ['-1s', /entry 1 is "-1s"/],
    ['30 s', /entry 1 is "30 s"/],
    ['30S', /entry 1 is "30S"/],
    ['1d', /entry 1 is "1d"/],
    ['s', /entry 1 is "s"/],
    ['99999999999999999999h', /entry 1/],
  ])('refuses %j', (text, message) => {
    expect(() => parseSchedule(text)).toThrow(message);
  });
});

describe('RetryScheduleEnv', () => {
  const shape = z.object({ WEBHOOK_RETRY_SCHEDULE: RetryScheduleEnv });

  it('parses the variable', () => {
    expect(shape.parse({ WEBHOOK_RETRY_SCHEDULE: '50ms,50ms' }).WEBHOOK_RETRY_SCHEDULE).toEqual(
      Array(7).fill(50),
    );
  });

  it('defaults to the standard schedule', () => {
    expect(shape.parse({}).WEBHOOK_RETRY_SCHEDULE).toEqual(DEFAULT_MS);
  });

  it('reports a bad value as an issue on the variable', () => {
    const result = shape.safeParse({ WEBHOOK_RETRY_SCHEDULE: '30s,soon' });
    expect(result.success).toBe(false);
    expect(result.error?.issues).toEqual([
      expect.objectContaining({
        path: ['WEBHOOK_RETRY_SCHEDULE'],
        message: expect.stringContaining('entry 2 is "soon"'),
      }),
    ]);
  });
});

describe('scheduledDelay', () => {
  const schedule = parseSchedule(DEFAULT_SCHEDULE);

  it('gives the delay before the next attempt without jitter when random() is 0', () => {
    const delays = [1, 2, 3, 4, 5, 6, 7].map((attempt) => scheduledDelay(attempt, schedule, () => 0));
    expect(delays).toEqual(DEFAULT_MS);
  });

  it('adds at most 20 % when random() is 1', () => {
    expect(scheduledDelay(1, schedule, () => 1)).toBe(36 * S);
    expect(scheduledDelay(7, schedule, () => 1)).toBe(4.8 * H);
  });

  it('stays within the jitter bounds and rounds to whole ms', () => {
    for (let i = 0; i < 200; i++) {
      const delay = scheduledDelay(1, [1001], Math.random) as number;
      expect(Number.isInteger(delay)).toBe(true);
      expect(delay).toBeGreaterThanOrEqual(1001);
      expect(delay).toBeLessThanOrEqual(1201);
    }
    expect(scheduledDelay(1, [1001], () => 0.5)).toBe(1101);
  });

  it('clamps an out-of-range random()', () => {
    expect(scheduledDelay(1, [1000], () => 5)).toBe(1200);
    expect(scheduledDelay(1, [1000], () => -1)).toBe(1000);
  });

  it('is null after the 8th attempt failed (dead), and after resends beyond it', () => {
    expect(scheduledDelay(7, schedule, () => 0)).toBe(4 * H);
    expect(scheduledDelay(MAX_ATTEMPTS, schedule, () => 0)).toBeNull();
    expect(scheduledDelay(9, schedule, () => 0)).toBeNull();
  });

  it('repeats the last delay of a short schedule', () => {
    expect(scheduledDelay(5, [10, 20], () => 0)).toBe(20);
  });

  it('refuses nonsense attempts and empty schedules', () => {
    expect(() => scheduledDelay(0, schedule)).toThrow(RangeError);
    expect(() => scheduledDelay(1.5, schedule)).toThrow(RangeError);
    expect(() => scheduledDelay(1, [])).toThrow(RangeError);
  });
});

describe('retryAfterDelay', () => {
  const now = Date.parse('2025-06-15T12:00:00Z');
  const scheduled = 30 * S;

  it('returns the scheduled delay without a usable header', () => {
    for (const header of [
      undefined,
      null,
      '',
      '   ',
      'soon',
      '-5',
      '1.5',
      '0x10',
      'Tomorrow',
      '2025-06-15T12:01:00Z',
    ]) {
      expect(retryAfterDelay(header, scheduled, now)).toBe(scheduled);
    }
  });

  it('honours delta-seconds between one and two times the scheduled delay', () => {
    expect(retryAfterDelay('45', scheduled, now)).toBe(45 * S);
    expect(retryAfterDelay(' 45 ', scheduled, now)).toBe(45 * S);
    expect(retryAfterDelay('60', scheduled, now)).toBe(60 * S);
  });

  it('holds a shorter wait up to the scheduled delay', () => {
    expect(retryAfterDelay('0', scheduled, now)).toBe(scheduled);
    expect(retryAfterDelay('5', scheduled, now)).toBe(scheduled);
  });

  it('holds a longer wait down to twice the scheduled delay', () => {
    expect(retryAfterDelay('3600', scheduled, now)).toBe(2 * scheduled);
    expect(retryAfterDelay('99999999999999999999', scheduled, now)).toBe(2 * scheduled);
  });

  it('honours an HTTP-date in its three formats', () => {
    expect(retryAfterDelay('Sun, 15 Jun 2025 12:00:50 GMT', scheduled, now)).toBe(50 * S);
    expect(retryAfterDelay('Sunday, 15-Jun-25 12:00:40 GMT', scheduled, now)).toBe(40 * S);
    expect(retryAfterDelay('Sun Jun 15 12:00:45 2025', scheduled, now)).toBe(45 * S);
  });

  it('clamps HTTP-dates too', () => {
    expect(retryAfterDelay('Sun, 15 Jun 2025 11:00:00 GMT', scheduled, now)).toBe(scheduled);
    expect(retryAfterDelay('Sun, 15 Jun 2025 12:00:10 GMT', scheduled, now)).toBe(scheduled);
    expect(retryAfterDelay('Mon, 16 Jun 2025 12:00:00 GMT', scheduled, now)).toBe(2 * scheduled);
  });

  it('uses the current clock by default', () => {
    expect(retryAfterDelay('45', scheduled)).toBe(45 * S);
  });
});
