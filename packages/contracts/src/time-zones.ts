import { z } from 'zod';
import { MESSAGES } from './messages';
import { unlessMissing } from './common';

// An IANA name (`America/Sao_Paulo`, `UTC`, `Etc/GMT+3`) and nothing else: an offset such as `+03:00`
// or a POSIX rule means something else to PostgreSQL (signs inverted), so it never gets that far.
const NAME = /^[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+){0,2}$/;

// Formatters of the names seen so far: only names that exist are kept, so the map stays bounded by
// the time zone database (a few hundred names).
const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterOf(name: string): Intl.DateTimeFormat | null {
  const known = formatters.get(name);
  if (known) return known;
  if (name.length > 64 || !NAME.test(name)) return null;
  try {
    const formatter = new Intl.DateTimeFormat('en-US', { timeZone: name, timeZoneName: 'longOffset' });
    formatters.set(name, formatter);
    return formatter;
  } catch {
    return null;
  }
}

/** Whether `name` is a time zone of the IANA database (case-insensitive, as PostgreSQL reads it). */
export function isTimeZone(name: string): boolean {
  return formatterOf(name) !== null;
}

/**
 * How far the clock of `timeZone` is ahead of UTC at `instant`, in milliseconds (São Paulo today:
 * -3 hours). `timeZone` must be one `isTimeZone` accepts.
 */
export function timeZoneOffsetMs(instant: number, timeZone: string): number {
  const formatter = formatterOf(timeZone);
  if (!formatter) throw new RangeError(`Unknown time zone ${timeZone}`);
  const part = formatter.formatToParts(instant).find((p) => p.type === 'timeZoneName')?.value ?? 'GMT';
  // `GMT`, `GMT-03:00`, or a local mean time such as `GMT-03:06:28` before standard time zones.
  const match = /^GMT([+-])(\d{2}):(\d{2})(?::(\d{2}))?$/.exec(part);
  if (!match) return 0;
  const [, sign, hours, minutes, seconds] = match;
  const ms = ((Number(hours) * 60 + Number(minutes)) * 60 + Number(seconds ?? 0)) * 1000;
  return sign === '-' ? -ms : ms;
}

/** A query's `time_zone`: an IANA time zone name such as `America/Sao_Paulo`. */
export const timeZoneName = z
  .string({ error: unlessMissing(MESSAGES.timeZone) })
  .refine(isTimeZone, { error: MESSAGES.unknownTimeZone })
  .meta({ description: 'IANA time zone name, such as America/Sao_Paulo' });
