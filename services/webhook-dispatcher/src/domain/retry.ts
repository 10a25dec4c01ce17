/**
 * Retry schedule of webhook deliveries (docs/webhooks.md, "Retries"): up to 8 attempts, delays before
 * attempts 2 to 8 from WEBHOOK_RETRY_SCHEDULE with up to 20 % jitter, a receiver's Retry-After honoured
 * between one and two times the scheduled delay.
 */
import { z } from 'zod';

/** Attempts of one delivery before it is `dead` (a manual resend adds one more). */
export const MAX_ATTEMPTS = 8;

/** Delays before attempts 2 to 8. */
export const DEFAULT_SCHEDULE = '30s,2m,10m,30m,1h,2h,4h';

/** Largest random extra delay, as a fraction of the scheduled one. */
export const JITTER_RATIO = 0.2;

const DELAYS = MAX_ATTEMPTS - 1;
const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 } as const;
const DURATION = /^(\d+)(ms|s|m|h)$/;

/**
 * Parses `30s,2m,10m,30m,1h,2h,4h` into milliseconds: 1 to 7 comma-separated whole numbers with a unit
 * (`ms`, `s`, `m`, `h`), spaces allowed around the commas. A shorter list repeats its last delay, so the
 * result always holds the 7 delays before attempts 2 to 8. Throws an Error naming the bad part otherwise.
 */
export function parseSchedule(text: string): number[] {
  const parts = text.split(',').map((part) => part.trim());
  if (parts.length === 1 && parts[0] === '') {
    throw new Error(`Retry schedule is empty; expected 1 to ${DELAYS} delays such as ${DEFAULT_SCHEDULE}`);
  }
  if (parts.length > DELAYS) {
    throw new Error(
      `Retry schedule has ${parts.length} delays; at most ${DELAYS} (before attempts 2 to ${MAX_ATTEMPTS})`,
    );
  }
  const delays = parts.map((part, index) => {
    const match = DURATION.exec(part);
    const amount = match ? Number(match[1]) : Number.NaN;
    const unit = match?.[2] as keyof typeof UNIT_MS | undefined;
    const ms = unit === undefined ? Number.NaN : amount * UNIT_MS[unit];
    if (!Number.isSafeInteger(ms)) {
      const shown = part === '' ? 'an empty entry' : JSON.stringify(part);
      throw new Error(
        `Retry schedule entry ${index + 1} is ${shown}; expected a whole number with a unit ms, s, m or h ` +
          '(such as 50ms, 30s, 2m, 1h)',
      );
    }
    return ms;
  });
  const last = delays[delays.length - 1] as number;
  while (delays.length < DELAYS) delays.push(last);
  return delays;
}

/**
 * WEBHOOK_RETRY_SCHEDULE for the service config: a schedule string parsed into the 7 delays in ms,
 * defaulting to DEFAULT_SCHEDULE when absent. A bad value becomes a zod issue; `loadConfig` prefixes it
 * with the variable's name ("WEBHOOK_RETRY_SCHEDULE: Retry schedule entry 2 is ...").
 */
export const RetryScheduleEnv = z
  .string()
  .transform((text, ctx) => {
    try {
      return parseSchedule(text);
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: (error as Error).message, input: text });
      return z.NEVER;
    }
  })
  .prefault(DEFAULT_SCHEDULE);

/**
 * After attempt `failedAttempt` (1-based) failed, the delay in ms before the next attempt: the scheduled
 * delay plus random jitter of up to 20 % (`delay * (1 + 0.2 * random())`, rounded). Null once
 * `failedAttempt >= MAX_ATTEMPTS`: the delivery is dead. A `schedule` shorter than needed repeats its last
 * delay.
 */
export function scheduledDelay(
  failedAttempt: number,
  schedule: readonly number[],
  random: () => number = Math.random,
): number | null {
  if (!Number.isInteger(failedAttempt) || failedAttempt < 1) {
    throw new RangeError(`failedAttempt must be a whole number from 1, got ${failedAttempt}`);
  }
  if (failedAttempt >= MAX_ATTEMPTS) return null;
  if (schedule.length === 0) throw new RangeError('The retry schedule is empty');
  const delay = (schedule[failedAttempt - 1] ?? schedule[schedule.length - 1]) as number;
  const jitter = Math.min(1, Math.max(0, random()));
  return Math.round(delay * (1 + JITTER_RATIO * jitter));
}

const HTTP_DATE = [
  // IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT
  /^[A-Za-z]{3}, \d{2} [A-Za-z]{3} \d{4} \d{2}:\d{2}:\d{2} GMT$/,
  // obsolete RFC 850: Sunday, 06-Nov-94 08:49:37 GMT
  /^[A-Za-z]{6,9}, \d{2}-[A-Za-z]{3}-\d{2} \d{2}:\d{2}:\d{2} GMT$/,
  // obsolete asctime: Sun Nov  6 08:49:37 1994
  /^[A-Za-z]{3} [A-Za-z]{3} [ \d]\d \d{2}:\d{2}:\d{2} \d{4}$/,
];

/** Retry-After as ms from `now`, or null when absent or not delta-seconds nor an HTTP-date. */
function retryAfterMs(header: string | null | undefined, now: number): number | null {
  if (header === null || header === undefined) return null;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  if (!HTTP_DATE.some((format) => format.test(value))) return null;
  // asctime carries no zone and means GMT.
  const time = Date.parse(/GMT$/.test(value) ? value : `${value} GMT`);
  return Number.isFinite(time) ? time - now : null;
}

/**
 * The delay before the next attempt once the receiver answered with `Retry-After` (delta-seconds or an
 * HTTP-date): its wait, held between `scheduledMs` and twice `scheduledMs`. An absent or invalid header, or
 * a date already past, gives `scheduledMs`.
 */
export function retryAfterDelay(
  header: string | null | undefined,
  scheduledMs: number,
  now: number = Date.now(),
): number {
  const wanted = retryAfterMs(header, now);
  if (wanted === null || !Number.isFinite(wanted)) return scheduledMs;
  return Math.min(2 * scheduledMs, Math.max(scheduledMs, Math.round(wanted)));
}
