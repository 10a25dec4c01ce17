// Calendar dates as `YYYY-MM-DD` strings, the form the API and API Pix use. The arithmetic runs on
// whole days since 1970-01-01 (UTC midnight), so no time zone or daylight saving change can move a
// date: a due date is a day in São Paulo, never an instant.

/** A calendar date, `YYYY-MM-DD`. */
export type IsoDate = string;

const DAY_MS = 86_400_000;
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Whether `value` is a real calendar date written `YYYY-MM-DD` (years 0001 to 9999). */
export function isIsoDate(value: unknown): value is IsoDate {
  if (typeof value !== 'string') return false;
  const match = ISO_DATE.exec(value);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  if (year < 1 || month < 1 || month > 12 || day < 1) return false;
  return day <= daysInMonth(year, month);
}

function daysInMonth(year: number, month: number): number {
  // Day 0 of the next month is the last day of this one.
  const date = new Date(0);
  date.setUTCFullYear(year, month, 0);
  return date.getUTCDate();
}

/** Days since 1970-01-01; throws a RangeError on anything but a real `YYYY-MM-DD` date. */
export function dayNumber(date: IsoDate): number {
  if (!isIsoDate(date)) throw new RangeError(`Not a YYYY-MM-DD date: ${JSON.stringify(date)}`);
  const [year, month, day] = date.split('-').map(Number) as [number, number, number];
  const at = new Date(0);
  // setUTCFullYear, not Date.UTC: Date.UTC reads years 0-99 as 1900-1999.
  at.setUTCFullYear(year, month - 1, day);
  return Math.round(at.getTime() / DAY_MS);
}

/** The `YYYY-MM-DD` of a day number. */
export function fromDayNumber(days: number): IsoDate {
  const at = new Date(days * DAY_MS);
  const year = String(at.getUTCFullYear()).padStart(4, '0');
  const month = String(at.getUTCMonth() + 1).padStart(2, '0');
  const day = String(at.getUTCDate()).padStart(2, '0');
  return `${year}-${month}-${day}`;
}

/** `date` moved by `days` (negative goes back). */
export function addDays(date: IsoDate, days: number): IsoDate {
  return fromDayNumber(dayNumber(date) + days);
}

/** Calendar days from `from` to `to`: positive when `to` is later. */
export function daysBetween(from: IsoDate, to: IsoDate): number {
  return dayNumber(to) - dayNumber(from);
}

/** 0 Sunday ... 6 Saturday. */
export function weekday(date: IsoDate): number {
  // 1970-01-01 was a Thursday (4).
  return (((dayNumber(date) + 4) % 7) + 7) % 7;
}

export function isWeekend(date: IsoDate): boolean {
  const day = weekday(date);
  return day === 0 || day === 6;
}

/**
 * Since Brazil's last daylight saving time ended (2019-02-17 02:00 UTC) São Paulo has been UTC-3 all
 * year: its day is the UTC date three hours earlier. Earlier instants go through the time zone
 * database, built on first use: a DateTimeFormat with a time zone loads ICU's zone data (about 8 MB of
 * a process) and costs tens of microseconds to make. calendar.test.ts compares both over years of
 * instants, so a change of the law (and of the zone data) shows there.
 */
const FIXED_OFFSET_SINCE = Date.parse('2019-02-17T02:00:00.000Z');
const OFFSET_MS = 3 * 3_600_000;
let zoned: Intl.DateTimeFormat | undefined;

/** The date in São Paulo of an instant, read from the time zone database (en-CA: YYYY-MM-DD). */
export function zonedDayInSaoPaulo(now: Date): IsoDate {
  zoned ??= new Intl.DateTimeFormat('en-CA', {
    timeZone: 'America/Sao_Paulo',
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
  });
  return zoned.format(now);
}

/** Today's date in São Paulo, where every due date of the API is a day. */
export function todayInSaoPaulo(now: Date = new Date()): IsoDate {
  const at = now.getTime();
  if (at >= FIXED_OFFSET_SINCE) return new Date(at - OFFSET_MS).toISOString().slice(0, 10);
  return zonedDayInSaoPaulo(now);
}

/**
 * The instant a day starts in São Paulo. Brazil has kept UTC-3 all year since 2019 (no daylight
 * saving), and every due date the API takes is today or later, so the offset is fixed.
 */
export function startOfDayInSaoPaulo(date: IsoDate): Date {
  dayNumber(date);
  return new Date(`${date}T03:00:00.000Z`);
}

/** When a charge payable through `lastPayable` (a São Paulo day) stops being payable: the next midnight. */
export function payableUntil(lastPayable: IsoDate): Date {
  return startOfDayInSaoPaulo(addDays(lastPayable, 1));
}
