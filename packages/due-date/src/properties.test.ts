import fc from 'fast-check';
import { amountDue, effectiveDueDate, lastPayableDate, percentOf } from './amount';
import { brazilCalendar, businessDaysBefore, fixedCalendar } from './calendar';
import { addDays, dayNumber } from './dates';
import { isTierDiscount, type DueDateTerms } from './terms';

// Properties of amountDue over terms the API's schema accepts (rebate and discount tiers below the
// amount, tier dates ascending and on or before the due date, their values descending, rates at most
// 100 % a period), on the national calendar and on one with a holiday every few days.

const calendars = [brazilCalendar(), fixedCalendar(['2025-09-15', '2025-09-16', '2025-10-01', '2025-12-08'])];
const DUE_BASE = dayNumber('2025-09-01');

const charge = fc
  .record({
    amount: fc.integer({ min: 1, max: 999_999_999_999 }),
    dueOffset: fc.integer({ min: 0, max: 120 }),
    days_after_due: fc.integer({ min: 0, max: 365 }),
    fineKind: fc.constantFrom('none', 'fixed', 'percent'),
    fineValue: fc.integer({ min: 1, max: 10_000 }),
    interest: fc.option(
      fc.record({
        type: fc.constantFrom(
          'amount_per_day' as const,
          'percent_per_day' as const,
          'percent_per_month' as const,
          'percent_per_year' as const,
        ),
        value: fc.integer({ min: 1, max: 10_000 }),
        days: fc.constantFrom('calendar' as const, 'business' as const),
      }),
      { nil: undefined },
    ),
    rebateKind: fc.constantFrom('none', 'fixed', 'percent'),
    rebateShare: fc.double({ min: 0, max: 0.999, noNaN: true }),
    discountKind: fc.constantFrom(
      'none',
      'fixed_until',
      'percent_until',
      'amount_per_day_early',
      'percent_per_day_early',
    ),
    tierOffsets: fc.uniqueArray(fc.integer({ min: 0, max: 60 }), { minLength: 1, maxLength: 3 }),
    tierShares: fc.uniqueArray(fc.double({ min: 0, max: 0.999, noNaN: true }), {
      minLength: 3,
      maxLength: 3,
    }),
    perDay: fc.integer({ min: 1, max: 10_000 }),
    discountDays: fc.constantFrom('calendar' as const, 'business' as const),
    calendar: fc.integer({ min: 0, max: calendars.length - 1 }),
  })
  .map((raw) => {
    const due = DUE_BASE + raw.dueOffset;
    const below = (share: number) => Math.min(raw.amount - 1, Math.floor(share * raw.amount));
    const terms: DueDateTerms = {
      due_date: addDays('1970-01-01', due),
      days_after_due: raw.days_after_due,
      interest: raw.interest ?? null,
    };
    if (raw.fineKind === 'fixed') terms.fine = { type: 'fixed', amount: raw.fineValue };
    if (raw.fineKind === 'percent') terms.fine = { type: 'percent', rate: raw.fineValue };
    if (raw.rebateKind === 'fixed' && below(raw.rebateShare) > 0)
      terms.rebate = { type: 'fixed', amount: below(raw.rebateShare) };
    // A percent below 100 % can still round up to the whole amount (50 % of 1 cent): the schema's
    // check against the amount refuses that one too.
    const rate = Math.floor(raw.rebateShare * 10_000);
    if (raw.rebateKind === 'percent' && percentOf(raw.amount, rate) < raw.amount)
      terms.rebate = { type: 'percent', rate };
    if (raw.discountKind === 'fixed_until' || raw.discountKind === 'percent_until') {
      // Dates ascending up to the due date, values descending.
      const dates = [...raw.tierOffsets].sort((a, b) => b - a).map((back) => addDays(terms.due_date, -back));
      const shares = [...raw.tierShares].sort((a, b) => b - a);
      const values = shares.map((share) =>
        raw.discountKind === 'fixed_until' ? below(share) : Math.floor(share * 10_000),
      );
      terms.discount = {
        type: raw.discountKind,
        tiers: dates.map((until, index) => ({ until, value: values[index] as number })),
      };
    }
    if (raw.discountKind === 'amount_per_day_early' || raw.discountKind === 'percent_per_day_early')
      terms.discount = { type: raw.discountKind, value: raw.perDay, days: raw.discountDays };
    // The calendar by its index, so that a failure prints the terms and not the holiday data.
    return { amount: raw.amount, terms, cal: raw.calendar, due };
  });

describe('amountDue, for any terms the schema accepts', () => {
  it('is never below 1 cent, nor below amount - rebate - discount, and adds up', () => {
    fc.assert(
      fc.property(charge, fc.integer({ min: -90, max: 400 }), ({ amount, terms, cal, due }, offset) => {
        const calendar = calendars[cal]!;
        const result = amountDue(amount, terms, addDays('1970-01-01', due + offset), calendar);
        if (!result.payable) return;
        const { original, rebate, discount, fine, interest } = result.components;
        expect(original).toBe(amount);
        expect(result.final).toBe(original - rebate - discount + fine + interest);
        expect(result.final).toBeGreaterThanOrEqual(1);
        // Below amount - rebate by no more than the largest discount the terms give on any day.
        const base = amount - rebate;
        expect(result.final).toBeGreaterThanOrEqual(base - largestDiscount(terms, base));
        if (result.overdue) expect(result.final).toBeGreaterThanOrEqual(base);
        expect(Number.isSafeInteger(result.final)).toBe(true);
        // A discount only on or before the effective due date, a fine and interest only after it.
        if (result.overdue) expect(discount).toBe(0);
        else expect(fine + interest).toBe(0);
      }),
    );
  });

  it('does not decrease from one payable day to a later one', () => {
    fc.assert(
      fc.property(
        charge,
        fc.integer({ min: -90, max: 400 }),
        fc.integer({ min: 1, max: 60 }),
        ({ amount, terms, cal, due }, offset, step) => {
          const calendar = calendars[cal]!;
          const earlier = amountDue(amount, terms, addDays('1970-01-01', due + offset), calendar);
          const later = amountDue(amount, terms, addDays('1970-01-01', due + offset + step), calendar);
          if (!later.payable) return;
          expect(earlier.payable).toBe(true);
          expect(later.final).toBeGreaterThanOrEqual(earlier.final as number);
        },
      ),
    );
  });

  it('is payable exactly up to the last payable date, a business day', () => {
    fc.assert(
      fc.property(charge, ({ amount, terms, cal }) => {
        const calendar = calendars[cal]!;
        const last = lastPayableDate(terms, calendar);
        const effective = effectiveDueDate(terms, calendar);
        expect(calendar.isBusinessDay(last)).toBe(true);
        expect(calendar.isBusinessDay(effective)).toBe(true);
        expect(dayNumber(last)).toBeGreaterThanOrEqual(dayNumber(effective) + terms.days_after_due);
        expect(amountDue(amount, terms, last, calendar).payable).toBe(true);
        expect(amountDue(amount, terms, addDays(last, 1), calendar).payable).toBe(false);
      }),
    );
  });

  it('stops counting early days only where the discount is capped anyway', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 100_000 }),
        fc.integer({ min: 1, max: 5000 }),
        fc.constantFrom('amount_per_day_early' as const, 'percent_per_day_early' as const),
        fc.integer({ min: 0, max: 200 }),
        fc.integer({ min: 0, max: calendars.length - 1 }),
        (amount, value, type, early, cal) => {
          const calendar = calendars[cal]!;
          const terms: DueDateTerms = {
            due_date: '2025-10-01',
            days_after_due: 30,
            discount: { type, value, days: 'business' },
          };
          const date = addDays('2025-10-01', -early);
          const days = businessDaysBefore(date, effectiveDueDate(terms, calendar), calendar);
          const uncapped = type === 'amount_per_day_early' ? value * days : percentOf(amount * days, value);
          const due = amountDue(amount, terms, date, calendar);
          expect(due.components?.discount).toBe(Math.min(amount - 1, uncapped));
        },
      ),
    );
  });

  it('is the same for the same input', () => {
    fc.assert(
      fc.property(charge, fc.integer({ min: -30, max: 60 }), ({ amount, terms, cal, due }, offset) => {
        const date = addDays('1970-01-01', due + offset);
        const calendar = calendars[cal]!;
        expect(amountDue(amount, terms, date, calendar)).toEqual(amountDue(amount, terms, date, calendar));
      }),
      { numRuns: 50 },
    );
  });
});

/** The first tier (the largest), or everything but a cent for a per-day discount. */
function largestDiscount(terms: DueDateTerms, base: number): number {
  const discount = terms.discount;
  if (!discount) return 0;
  if (!isTierDiscount(discount)) return base - 1;
  const first = discount.tiers[0]!.value;
  return Math.min(base - 1, discount.type === 'fixed_until' ? first : percentOf(base, first));
}
