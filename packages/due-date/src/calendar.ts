import type Holidays from 'date-holidays';
import { addDays, dayNumber, fromDayNumber, isIsoDate, isWeekend, type IsoDate } from './dates';

// Business days for due-date charges (docs/pix.md, "Holidays"): a day is a business day unless it is a
// Saturday, a Sunday or a holiday on which banks are closed. The holidays come from `date-holidays`
// (its Brazilian data: national, every state, and a few cities); we count its `public` and `bank`
// days (Carnival Monday and Tuesday and Corpus Christi are bank holidays nationally) and leave out its
// `optional` ones (Ash Wednesday until 14:00, the afternoons of 24 and 31 December, when banks open)
// and `observance` ones (Mothers' Day), which close nothing.

/** Where business days are counted: what `isBusinessDay` answers for a date. */
export interface BusinessCalendar {
  /** `BR`, `BR-SP`, or `BR-SP-3550308` (a municipality by its IBGE code). */
  readonly id: string;
  isBusinessDay(date: IsoDate): boolean;
  /** The holidays of a year that close banks here, `YYYY-MM-DD` ascending, with their names. */
  holidays(year: number): readonly Holiday[];
}

export type Holiday = { date: IsoDate; name: string };

export type CalendarPlace = {
  /** A state's two letters (`SP`); its holidays are added to the national ones. */
  state?: string;
  /**
   * A municipality's IBGE code (7 digits, API Pix's `codMun`): its state's holidays, and its own where
   * the holiday data has them. When `state` is given too, it must be the municipality's.
   */
  municipality?: string;
};

/** The IBGE code of each state (the first two digits of its municipalities' codes). */
export const IBGE_STATE_CODES: Readonly<Record<string, string>> = {
  '11': 'RO',
  '12': 'AC',
  '13': 'AM',
  '14': 'RR',
  '15': 'PA',
  '16': 'AP',
  '17': 'TO',
  '21': 'MA',
  '22': 'PI',
  '23': 'CE',
  '24': 'RN',
  '25': 'PB',
  '26': 'PE',
  '27': 'AL',
  '28': 'SE',
  '29': 'BA',
  '31': 'MG',
  '32': 'ES',
  '33': 'RJ',
  '35': 'SP',
  '41': 'PR',
  '42': 'SC',
  '43': 'RS',
  '50': 'MS',
  '51': 'MT',
  '52': 'GO',
  '53': 'DF',
};

/**
 * The municipalities whose own holidays the data has, by IBGE code, with the data's name for them.
 * Any other municipality gets its state's holidays only.
 */
export const MUNICIPALITIES_WITH_HOLIDAYS: Readonly<Record<string, { state: string; region: string }>> = {
  '3550308': { state: 'SP', region: 'SP' }, // São Paulo
  '3304557': { state: 'RJ', region: 'RJ' }, // Rio de Janeiro
  '3106200': { state: 'MG', region: 'BH' }, // Belo Horizonte
  '4106902': { state: 'PR', region: 'CU' }, // Curitiba
  '2611606': { state: 'PE', region: 'RE' }, // Recife
  '5208707': { state: 'GO', region: 'GOIANIA' }, // Goiânia
};

const STATES = new Set(Object.values(IBGE_STATE_CODES));

/** Why a place cannot be a calendar, or null when it can. */
export function calendarPlaceProblem(place: CalendarPlace): string | null {
  if (place.state !== undefined && !STATES.has(place.state))
    return `Unknown state: ${JSON.stringify(place.state)}`;
  if (place.municipality !== undefined) {
    if (!/^\d{7}$/.test(place.municipality)) return 'A municipality is its 7-digit IBGE code';
    const state = IBGE_STATE_CODES[place.municipality.slice(0, 2)];
    if (state === undefined) return `No state has the IBGE code ${place.municipality.slice(0, 2)}`;
    if (place.state !== undefined && place.state !== state)
      return `Municipality ${place.municipality} is in ${state}, not ${place.state}`;
  }
  return null;
}

// The holiday types that close banks (see the top of this file).
const CLOSED: ReadonlySet<string> = new Set(['public', 'bank']);

class HolidayCalendar implements BusinessCalendar {
  private readonly years = new Map<number, { list: Holiday[]; days: Set<IsoDate> }>();

  constructor(
    readonly id: string,
    private readonly source: Holidays,
  ) {}

  isBusinessDay(date: IsoDate): boolean {
    if (isWeekend(date)) return false;
    return !this.year(Number(date.slice(0, 4))).days.has(date);
  }

  holidays(year: number): readonly Holiday[] {
    return this.year(year).list;
  }

  private year(year: number) {
    let found = this.years.get(year);
    if (!found) {
      const byDate = new Map<IsoDate, string>();
      for (const holiday of this.source.getHolidays(year)) {
        if (!CLOSED.has(holiday.type)) continue;
        // `date` is the local start, "YYYY-MM-DD hh:mm:ss"; a holiday may last more than one day.
        const first = holiday.date.slice(0, 10);
        const days = Math.max(1, Math.ceil((holiday.end.getTime() - holiday.start.getTime()) / 86_400_000));
        for (let i = 0; i < days; i++) {
          const date = addDays(first, i);
          if (date.startsWith(String(year).padStart(4, '0')) && !byDate.has(date))
            byDate.set(date, holiday.name);
        }
      }
      const list = [...byDate]
        .map(([date, name]) => ({ date, name }))
        .sort((a, b) => (a.date < b.date ? -1 : 1));
      found = { list, days: new Set(byDate.keys()) };
      this.years.set(year, found);
    }
    return found;
  }
}

const calendars = new Map<string, BusinessCalendar>();

/**
 * date-holidays, loaded with the first calendar asked for: its data (every country's) costs a process
 * about 33 MB, which a service importing this package for its other functions need not pay.
 */
let holidaysClass: typeof Holidays | undefined;
const loadHolidays = (): typeof Holidays =>
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded on first use, on purpose
  (holidaysClass ??= require('date-holidays') as typeof Holidays);

/**
 * The business-day calendar of Brazil: national holidays, plus a state's, plus a municipality's where
 * the data has them. Throws a RangeError for a place that does not exist (see calendarPlaceProblem).
 * Calendars are kept and shared: each holds the holidays of the years it was asked about.
 */
export function brazilCalendar(place: CalendarPlace = {}): BusinessCalendar {
  const problem = calendarPlaceProblem(place);
  if (problem !== null) throw new RangeError(problem);
  const state =
    place.state ?? (place.municipality ? IBGE_STATE_CODES[place.municipality.slice(0, 2)] : undefined);
  const id = ['BR', state, place.municipality].filter(Boolean).join('-');
  let calendar = calendars.get(id);
  if (!calendar) {
    const region = place.municipality ? MUNICIPALITIES_WITH_HOLIDAYS[place.municipality]?.region : undefined;
    const Holidays = loadHolidays();
    const source =
      state === undefined
        ? new Holidays('BR')
        : region === undefined
          ? new Holidays('BR', state)
          : new Holidays('BR', state, region);
    calendar = new HolidayCalendar(id, source);
    calendars.set(id, calendar);
  }
  return calendar;
}

/**
 * A calendar of weekends and the given holidays only: for tests and examples that must not depend on
 * the holiday data.
 */
export function fixedCalendar(holidays: readonly IsoDate[], id = 'fixed'): BusinessCalendar {
  for (const date of holidays) if (!isIsoDate(date)) throw new RangeError(`Not a YYYY-MM-DD date: ${date}`);
  const days = new Set(holidays);
  const sorted = [...days].sort();
  return {
    id,
    isBusinessDay: (date) => {
      dayNumber(date);
      return !isWeekend(date) && !days.has(date);
    },
    holidays: (year) =>
      sorted
        .filter((date) => date.startsWith(String(year).padStart(4, '0')))
        .map((date) => ({ date, name: 'holiday' })),
  };
}

/** `date` itself when it is a business day, else the next one. */
export function nextBusinessDay(date: IsoDate, calendar: BusinessCalendar): IsoDate {
  let day = dayNumber(date);
  // Brazil never has more than a few non-business days in a row (Carnival: Saturday to Tuesday);
  // the bound only keeps a calendar that closes every day from looping forever.
  for (let i = 0; i < 366; i++, day++) {
    const candidate = fromDayNumber(day);
    if (calendar.isBusinessDay(candidate)) return candidate;
  }
  throw new RangeError(`Calendar ${calendar.id} has no business day in the year after ${date}`);
}

/** The business days `d` with `from < d <= to` (0 when `to` is not after `from`). */
export function businessDaysAfter(from: IsoDate, to: IsoDate, calendar: BusinessCalendar): number {
  const start = dayNumber(from);
  const end = dayNumber(to);
  let count = 0;
  for (let day = start + 1; day <= end; day++) if (calendar.isBusinessDay(fromDayNumber(day))) count++;
  return count;
}

/**
 * The business days `d` with `from <= d < to` (0 when `to` is not after `from`), counted back from
 * `to` and no further than `limit`: a caller that needs no more (a capped discount) stops early.
 */
export function businessDaysBefore(
  from: IsoDate,
  to: IsoDate,
  calendar: BusinessCalendar,
  limit = Number.POSITIVE_INFINITY,
): number {
  const start = dayNumber(from);
  let count = 0;
  for (let day = dayNumber(to) - 1; day >= start && count < limit; day--)
    if (calendar.isBusinessDay(fromDayNumber(day))) count++;
  return count;
}
