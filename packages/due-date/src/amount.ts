import { businessDaysAfter, businessDaysBefore, nextBusinessDay, type BusinessCalendar } from './calendar';
import { addDays, dayNumber, daysBetween, isIsoDate, type IsoDate } from './dates';
import {
  FULL_RATE,
  MAX_COBV_VALUE,
  type DayCount,
  isTierDiscount,
  type Discount,
  type DueDateTerms,
  type Fine,
  type Interest,
  type Rebate,
} from './terms';

// What a due-date charge costs on a day (docs/pix.md, "Due-date charges"). The same function answers
// the amount-due route and decides what a payment must be, so it is pure, total over checked terms
// and exact: integer cents and basis points, BigInt products, each component rounded half up once.

/** The parts of what is owed, in cents: final = original - rebate - discount + fine + interest. */
export type AmountComponents = {
  original: number;
  rebate: number;
  discount: number;
  fine: number;
  interest: number;
};

type AmountDueDates = {
  /** The date asked about. */
  date: IsoDate;
  /** The due date, moved to the next business day when it is not one. */
  effective_due_date: IsoDate;
  /** The last day the charge can be paid. */
  last_payable_date: IsoDate;
  /** Whether `date` is after the effective due date. */
  overdue: boolean;
  /** Calendar days from the effective due date to `date`; 0 when not overdue. */
  days_late: number;
};

/**
 * What is owed on a date. After the last payable date nothing can be paid, so there is no amount:
 * `components` and `final` are null, and a payment must be refused.
 */
export type AmountDue =
  | (AmountDueDates & { payable: true; components: AmountComponents; final: number })
  | (AmountDueDates & { payable: false; components: null; final: null });

const BASIS = BigInt(FULL_RATE);

/** `numerator / denominator` rounded half up, both non-negative. */
export function divideRoundHalfUp(numerator: bigint, denominator: bigint): bigint {
  if (numerator < 0n || denominator <= 0n) throw new RangeError('divideRoundHalfUp takes n >= 0, d > 0');
  return (2n * numerator + denominator) / (2n * denominator);
}

/** `amount` x `rate` basis points, rounded half up to the cent. */
export function percentOf(amount: number, rate: number): number {
  return Number(divideRoundHalfUp(BigInt(amount) * BigInt(rate), BASIS));
}

/** The due date, or the next business day when it falls on a weekend or a holiday. */
export function effectiveDueDate(terms: Pick<DueDateTerms, 'due_date'>, calendar: BusinessCalendar): IsoDate {
  return nextBusinessDay(terms.due_date, calendar);
}

/** The next business day on or after (effective due date + days_after_due). */
export function lastPayableDate(
  terms: Pick<DueDateTerms, 'due_date' | 'days_after_due'>,
  calendar: BusinessCalendar,
): IsoDate {
  checkCount(terms.days_after_due, 'days_after_due', 365);
  return nextBusinessDay(addDays(effectiveDueDate(terms, calendar), terms.days_after_due), calendar);
}

/** The rebate in cents: a fixed amount, or a percent of the amount; always below the amount. */
export function rebateOf(amount: number, rebate: Rebate | null | undefined): number {
  if (!rebate) return 0;
  const value =
    rebate.type === 'fixed'
      ? checkValue(rebate.amount, 'rebate.amount')
      : percentOf(amount, checkValue(rebate.rate, 'rebate.rate'));
  if (value >= amount) throw new RangeError('The rebate must be below the amount');
  return value;
}

/**
 * What is owed on `date` for a charge of `amount` cents under `terms`, with holidays from `calendar`.
 * Throws a RangeError only for input the API's schema refuses (a malformed date, a negative or
 * fractional value, a rebate not below the amount).
 */
export function amountDue(
  amount: number,
  terms: DueDateTerms,
  date: IsoDate,
  calendar: BusinessCalendar,
): AmountDue {
  checkValue(amount, 'amount');
  if (amount < 1) throw new RangeError('amount must be at least 1 cent');
  if (!isIsoDate(date)) throw new RangeError(`Not a YYYY-MM-DD date: ${JSON.stringify(date)}`);
  const effective = effectiveDueDate(terms, calendar);
  const last = lastPayableDate(terms, calendar);
  const overdue = dayNumber(date) > dayNumber(effective);
  const dates = {
    date,
    effective_due_date: effective,
    last_payable_date: last,
    overdue,
    days_late: overdue ? daysBetween(effective, date) : 0,
  };
  if (dayNumber(date) > dayNumber(last)) return { ...dates, payable: false, components: null, final: null };

  const rebate = rebateOf(amount, terms.rebate);
  const base = amount - rebate;
  const components: AmountComponents = { original: amount, rebate, discount: 0, fine: 0, interest: 0 };
  if (overdue) {
    components.fine = fineOf(base, terms.fine);
    components.interest = interestOf(base, terms.interest, effective, date, calendar);
  } else {
    components.discount = discountOf(base, terms.discount, effective, date, calendar);
  }
  const final = base - components.discount + components.fine + components.interest;
  // Unreachable with the schema's bounds (rates at most 100 % a period, 365 days after due); kept so
  // that a number JavaScript cannot hold exactly is never charged.
  if (!Number.isSafeInteger(final)) throw new RangeError('The amount due is too large to compute exactly');
  return { ...dates, payable: true, components, final };
}

/** On the base, once, for any day after the effective due date. */
function fineOf(base: number, fine: Fine | null | undefined): number {
  if (!fine) return 0;
  return fine.type === 'fixed'
    ? checkValue(fine.amount, 'fine.amount')
    : percentOf(base, checkValue(fine.rate, 'fine.rate'));
}

/** The number n of days a rate is for: a day, a month (30 or 21 business days), a year (365 or 252). */
export function interestPeriodDays(type: Interest['type'], days: DayCount): number {
  switch (type) {
    case 'amount_per_day':
    case 'percent_per_day':
      return 1;
    case 'percent_per_month':
      return days === 'business' ? 21 : 30;
    case 'percent_per_year':
      return days === 'business' ? 252 : 365;
  }
}

/** base x rate / n x days late, days late counted from the effective due date (not on it). */
function interestOf(
  base: number,
  interest: Interest | null | undefined,
  effective: IsoDate,
  date: IsoDate,
  calendar: BusinessCalendar,
): number {
  if (!interest) return 0;
  const value = checkValue(interest.value, 'interest.value');
  const count = interest.days ?? 'calendar';
  const late =
    count === 'business' ? businessDaysAfter(effective, date, calendar) : daysBetween(effective, date);
  if (interest.type === 'amount_per_day') return value * late;
  const n = BigInt(interestPeriodDays(interest.type, count));
  return Number(divideRoundHalfUp(BigInt(base) * BigInt(value) * BigInt(late), BASIS * n));
}

/**
 * On or before the effective due date: the first tier whose `until` is on or after `date`, or a
 * per-day discount for each day before the effective due date (`date` counted, the due date not).
 * Never more than base - 1 cent, so a charge never comes to nothing.
 */
function discountOf(
  base: number,
  discount: Discount | null | undefined,
  effective: IsoDate,
  date: IsoDate,
  calendar: BusinessCalendar,
): number {
  if (!discount) return 0;
  const cap = base - 1;
  let value: bigint;
  if (isTierDiscount(discount)) {
    const tier = discount.tiers.find((candidate) => dayNumber(candidate.until) >= dayNumber(date));
    if (!tier) return 0;
    checkValue(tier.value, 'discount.tiers.value');
    value =
      discount.type === 'fixed_until'
        ? BigInt(tier.value)
        : divideRoundHalfUp(BigInt(base) * BigInt(tier.value), BASIS);
  } else {
    const perDay = checkValue(discount.value, 'discount.value');
    // Past this many days the discount is capped anyway: business days are counted no further.
    const enough =
      perDay === 0
        ? 0
        : discount.type === 'amount_per_day_early'
          ? Math.ceil(cap / perDay)
          : Number(
              (BigInt(cap) * BASIS + BigInt(base) * BigInt(perDay) - 1n) / (BigInt(base) * BigInt(perDay)),
            );
    const early =
      (discount.days ?? 'calendar') === 'business'
        ? businessDaysBefore(date, effective, calendar, enough)
        : Math.max(0, daysBetween(date, effective));
    value =
      discount.type === 'amount_per_day_early'
        ? BigInt(perDay) * BigInt(early)
        : divideRoundHalfUp(BigInt(base) * BigInt(perDay) * BigInt(early), BASIS);
  }
  return value > BigInt(cap) ? cap : Number(value);
}

function checkValue(value: number, name: string): number {
  if (!Number.isSafeInteger(value) || value < 0 || value > MAX_COBV_VALUE)
    throw new RangeError(`${name} must be an integer from 0 to ${MAX_COBV_VALUE}`);
  return value;
}

function checkCount(value: number, name: string, maximum: number): number {
  if (!Number.isSafeInteger(value) || value < 0 || value > maximum)
    throw new RangeError(`${name} must be an integer from 0 to ${maximum}`);
  return value;
}
