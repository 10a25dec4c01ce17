import { amountDue, divideRoundHalfUp, effectiveDueDate, lastPayableDate, percentOf } from './amount';
import { brazilCalendar, fixedCalendar } from './calendar';
import type { Discount, DueDateTerms, Interest } from './terms';

// Hand-computed values for every API Pix modality. The charge: R$ 1,000.00 due Wednesday 2025-09-10,
// on a calendar with weekends and the holidays each block names, so the counts do not depend on the
// holiday data.
const AMOUNT = 100_000;
const DUE = '2025-09-10';
const terms = (more: Partial<DueDateTerms> = {}): DueDateTerms => ({
  due_date: DUE,
  days_after_due: 30,
  ...more,
});
const plain = fixedCalendar([]);

describe('rounding', () => {
  it('divides rounding half up, exactly, past what a double holds', () => {
    expect(divideRoundHalfUp(5n, 10n)).toBe(1n);
    expect(divideRoundHalfUp(4n, 10n)).toBe(0n);
    expect(divideRoundHalfUp(15n, 10n)).toBe(2n);
    expect(divideRoundHalfUp(25n, 10n)).toBe(3n);
    expect(divideRoundHalfUp(0n, 7n)).toBe(0n);
    expect(divideRoundHalfUp(10n ** 30n + 5n, 10n)).toBe(10n ** 29n + 1n);
    expect(() => divideRoundHalfUp(-1n, 10n)).toThrow(RangeError);
    expect(() => divideRoundHalfUp(1n, 0n)).toThrow(RangeError);
  });

  it('takes a percent in basis points, half up to the cent', () => {
    expect(percentOf(150, 100)).toBe(2); // 1.5 cents
    expect(percentOf(149, 100)).toBe(1); // 1.49 cents
    expect(percentOf(100_000, 250)).toBe(2500);
    expect(percentOf(999_999_999_999, 10_000)).toBe(999_999_999_999);
  });
});

describe('fine (API Pix multa 1-2)', () => {
  it('1, fixed: once, the same on any day after the effective due date', () => {
    const fine = { type: 'fixed', amount: 1500 } as const;
    for (const date of ['2025-09-11', '2025-09-20', '2025-10-10'])
      expect(amountDue(AMOUNT, terms({ fine }), date, plain).components?.fine).toBe(1500);
    expect(amountDue(AMOUNT, terms({ fine }), DUE, plain).components?.fine).toBe(0);
  });

  it('2, percent: on the base (amount - rebate), rounded half up', () => {
    const rebate = { type: 'fixed', amount: 5000 } as const;
    const due = amountDue(
      AMOUNT,
      terms({ fine: { type: 'percent', rate: 200 }, rebate }),
      '2025-09-11',
      plain,
    );
    expect(due.components).toEqual({ original: 100_000, rebate: 5000, discount: 0, fine: 1900, interest: 0 });
    expect(due.final).toBe(96_900);
    // 2 % of 1.25 is 2.5 cents.
    expect(
      amountDue(125, terms({ fine: { type: 'percent', rate: 200 } }), '2025-09-11', plain).components?.fine,
    ).toBe(3);
  });
});

describe('interest (API Pix juros 1-8)', () => {
  // Paid Monday 2025-09-22: 12 calendar days late; business days after the due date up to that day:
  // 11, 12, 15, 17, 18, 19, 22 = 7 (16 is a holiday of this calendar).
  const calendar = fixedCalendar(['2025-09-16']);
  const PAID = '2025-09-22';
  const cases: [modality: number, interest: Interest, expected: number][] = [
    [1, { type: 'amount_per_day', value: 50, days: 'calendar' }, 600], // 0.50 x 12
    [2, { type: 'percent_per_day', value: 10, days: 'calendar' }, 1200], // 1000 x 0.1 % x 12
    [3, { type: 'percent_per_month', value: 100, days: 'calendar' }, 400], // 1000 x 1 % / 30 x 12
    [4, { type: 'percent_per_year', value: 1200, days: 'calendar' }, 395], // 1000 x 12 % / 365 x 12 = 3.9452
    [5, { type: 'amount_per_day', value: 50, days: 'business' }, 350], // 0.50 x 7
    [6, { type: 'percent_per_day', value: 10, days: 'business' }, 700], // 1000 x 0.1 % x 7
    [7, { type: 'percent_per_month', value: 100, days: 'business' }, 333], // 1000 x 1 % / 21 x 7 = 3.333
    [8, { type: 'percent_per_year', value: 1200, days: 'business' }, 333], // 1000 x 12 % / 252 x 7 = 3.333
  ];
  it.each(cases)('%i: %j -> %i cents', (_modality, interest, expected) => {
    const due = amountDue(AMOUNT, terms({ interest }), PAID, calendar);
    expect(due).toMatchObject({ payable: true, overdue: true, days_late: 12 });
    expect(due.components?.interest).toBe(expected);
    expect(due.final).toBe(AMOUNT + expected);
  });

  it('counts calendar days when `days` is left out', () => {
    const due = amountDue(AMOUNT, terms({ interest: { type: 'amount_per_day', value: 50 } }), PAID, calendar);
    expect(due.components?.interest).toBe(600);
  });

  it('is on the base and rounds half up', () => {
    const rebate = { type: 'fixed', amount: 5000 } as const;
    const interest = { type: 'percent_per_month', value: 100, days: 'calendar' } as const;
    // 950 x 1 % / 30 x 5 = 1.5833
    expect(amountDue(AMOUNT, terms({ rebate, interest }), '2025-09-15', plain).components?.interest).toBe(
      158,
    );
    // 10.00 x 1.5 % / 30 x 1 = 0.005: half a cent, up.
    const half = { type: 'percent_per_month', value: 150, days: 'calendar' } as const;
    expect(amountDue(1000, terms({ interest: half }), '2025-09-11', plain).components?.interest).toBe(1);
  });

  it('costs nothing on a day after the due date that is not a business day, in business days', () => {
    // Due Friday 2025-09-12; Saturday is overdue (the fine applies) but no business day has passed.
    const friday = terms({
      due_date: '2025-09-12',
      fine: { type: 'fixed', amount: 100 },
      interest: { type: 'amount_per_day', value: 50, days: 'business' },
    });
    expect(amountDue(AMOUNT, friday, '2025-09-13', plain)).toMatchObject({
      overdue: true,
      days_late: 1,
      components: { fine: 100, interest: 0 },
      final: 100_100,
    });
    expect(amountDue(AMOUNT, friday, '2025-09-15', plain).components?.interest).toBe(50);
  });
});

describe('rebate (API Pix abatimento 1-2)', () => {
  it('1, fixed: off the amount on any payable day', () => {
    const rebate = { type: 'fixed', amount: 5000 } as const;
    expect(amountDue(AMOUNT, terms({ rebate }), '2025-09-01', plain).final).toBe(95_000);
    expect(amountDue(AMOUNT, terms({ rebate }), DUE, plain).final).toBe(95_000);
    expect(amountDue(AMOUNT, terms({ rebate }), '2025-09-11', plain).final).toBe(95_000);
  });

  it('2, percent: of the amount, rounded half up', () => {
    expect(
      amountDue(AMOUNT, terms({ rebate: { type: 'percent', rate: 250 } }), DUE, plain).components?.rebate,
    ).toBe(2500);
    // 0.5 % of 1.00 is half a cent.
    expect(amountDue(100, terms({ rebate: { type: 'percent', rate: 50 } }), DUE, plain).final).toBe(99);
  });

  it('refuses a rebate not below the amount', () => {
    expect(() => amountDue(5000, terms({ rebate: { type: 'fixed', amount: 5000 } }), DUE, plain)).toThrow(
      RangeError,
    );
    expect(() => amountDue(5000, terms({ rebate: { type: 'percent', rate: 10_000 } }), DUE, plain)).toThrow(
      RangeError,
    );
  });
});

describe('discount (API Pix desconto 1-6)', () => {
  // Due Wednesday 2025-09-10; Monday 2025-09-08 is a holiday of this calendar. Paid Wednesday
  // 2025-09-03: 7 calendar days early; business days from then to the due date (not counted):
  // 3, 4, 5, 9 = 4.
  const calendar = fixedCalendar(['2025-09-08']);
  const discountOn = (discount: Discount, date: string, more: Partial<DueDateTerms> = {}) =>
    amountDue(AMOUNT, terms({ discount, ...more }), date, calendar).components?.discount;

  it('1, fixed until dates: the first tier whose date is on or after the payment', () => {
    const discount: Discount = {
      type: 'fixed_until',
      tiers: [
        { until: '2025-09-01', value: 3000 },
        { until: '2025-09-05', value: 2000 },
        { until: '2025-09-10', value: 1000 },
      ],
    };
    expect(
      ['2025-08-20', '2025-09-01', '2025-09-02', '2025-09-05', '2025-09-06', DUE, '2025-09-11'].map((date) =>
        discountOn(discount, date),
      ),
    ).toEqual([3000, 3000, 2000, 2000, 1000, 1000, 0]);
  });

  it('2, percent until dates: of the base, rounded half up', () => {
    const discount: Discount = {
      type: 'percent_until',
      tiers: [
        { until: '2025-09-05', value: 500 },
        { until: '2025-09-10', value: 200 },
      ],
    };
    const rebate = { type: 'fixed', amount: 5000 } as const;
    expect(discountOn(discount, '2025-09-03', { rebate })).toBe(4750); // 5 % of 950.00
    expect(discountOn(discount, '2025-09-07', { rebate })).toBe(1900); // 2 % of 950.00
    expect(amountDue(AMOUNT, terms({ discount, rebate }), '2025-09-07', calendar).final).toBe(93_100);
  });

  it.each([
    [3, { type: 'amount_per_day_early', value: 100, days: 'calendar' }, 700], // 1.00 x 7
    [4, { type: 'amount_per_day_early', value: 100, days: 'business' }, 400], // 1.00 x 4
    [5, { type: 'percent_per_day_early', value: 10, days: 'calendar' }, 700], // 1000 x 0.1 % x 7
    [6, { type: 'percent_per_day_early', value: 10, days: 'business' }, 400], // 1000 x 0.1 % x 4
  ] as [number, Discount, number][])(
    '%i: %j paid 2025-09-03 -> %i cents',
    (_modality, discount, expected) => {
      expect(discountOn(discount, '2025-09-03')).toBe(expected);
      // None on the effective due date itself, nor after it.
      expect(discountOn(discount, DUE)).toBe(0);
      expect(discountOn(discount, '2025-09-11')).toBe(0);
    },
  );

  it('counts early days up to the effective due date, not the due date', () => {
    // Due Saturday 2025-09-13, effective Monday 2025-09-15: paid Friday 12 is 3 calendar days early.
    const discount: Discount = { type: 'amount_per_day_early', value: 100 };
    expect(discountOn(discount, '2025-09-12', { due_date: '2025-09-13' })).toBe(300);
  });

  it('counts business days no further back than the cap needs, whatever the date', () => {
    // 20 years early, business days: capped at 49.99 after 50 business days of 1.00.
    const discount: Discount = { type: 'amount_per_day_early', value: 100, days: 'business' };
    const started = Date.now();
    const due = amountDue(5000, terms({ discount }), '2005-09-10', calendar);
    expect(due.components?.discount).toBe(4999);
    expect(Date.now() - started).toBeLessThan(1000);
    const percent: Discount = { type: 'percent_per_day_early', value: 100, days: 'business' };
    expect(amountDue(5000, terms({ discount: percent }), '2005-09-10', calendar).final).toBe(1);
  });

  it('never takes the amount below one cent', () => {
    const discount: Discount = { type: 'amount_per_day_early', value: 1000, days: 'calendar' };
    const due = amountDue(5000, terms({ discount }), '2025-08-11', calendar);
    expect(due.components).toMatchObject({ discount: 4999 });
    expect(due.final).toBe(1);
  });
});

describe('dates', () => {
  const national = brazilCalendar();

  it('moves a due date on a weekend or holiday to the next business day', () => {
    expect(effectiveDueDate({ due_date: '2025-09-10' }, national)).toBe('2025-09-10');
    // Saturday, then Sunday 7 September (Independence Day).
    expect(effectiveDueDate({ due_date: '2025-09-06' }, national)).toBe('2025-09-08');
    // Thursday 20 November (Black Awareness Day).
    expect(effectiveDueDate({ due_date: '2025-11-20' }, national)).toBe('2025-11-21');
    // Good Friday 2025-04-18, then the weekend, then Tiradentes on Monday 21 April.
    expect(effectiveDueDate({ due_date: '2025-04-18' }, national)).toBe('2025-04-22');
    // Carnival Monday and Tuesday 2026 (16 and 17 February) close banks; Ash Wednesday does not.
    expect(effectiveDueDate({ due_date: '2026-02-14' }, national)).toBe('2026-02-18');
  });

  it('ends the payable window on the next business day on or after due + days_after_due', () => {
    expect(lastPayableDate({ due_date: '2025-09-10', days_after_due: 30 }, national)).toBe('2025-10-10');
    // + 31 is Saturday 11 October; Sunday 12 is Our Lady of Aparecida.
    expect(lastPayableDate({ due_date: '2025-09-10', days_after_due: 31 }, national)).toBe('2025-10-13');
    // Counted from the effective due date: Saturday 6 September is due Monday 8.
    expect(lastPayableDate({ due_date: '2025-09-06', days_after_due: 0 }, national)).toBe('2025-09-08');
    expect(lastPayableDate({ due_date: '2025-09-06', days_after_due: 2 }, national)).toBe('2025-09-10');
  });

  it('is payable up to the last payable date, and has no amount after it', () => {
    const charge = terms({ fine: { type: 'fixed', amount: 100 } });
    expect(amountDue(AMOUNT, charge, '2025-10-10', national)).toMatchObject({
      payable: true,
      final: 100_100,
    });
    expect(amountDue(AMOUNT, charge, '2025-10-11', national)).toEqual({
      date: '2025-10-11',
      effective_due_date: '2025-09-10',
      last_payable_date: '2025-10-10',
      payable: false,
      overdue: true,
      days_late: 31,
      components: null,
      final: null,
    });
  });

  it('costs nothing extra on the next business day after a due date on a holiday', () => {
    const charge = terms({
      due_date: '2025-11-20',
      fine: { type: 'percent', rate: 200 },
      interest: { type: 'percent_per_day', value: 100 },
    });
    expect(amountDue(AMOUNT, charge, '2025-11-21', national)).toMatchObject({
      overdue: false,
      final: AMOUNT,
    });
    // Saturday 22: one calendar day late, 2 % fine and 1 % interest.
    expect(amountDue(AMOUNT, charge, '2025-11-22', national)).toMatchObject({ days_late: 1, final: 103_000 });
  });

  it('refuses what the schema refuses', () => {
    expect(() => amountDue(AMOUNT, terms(), '2025-02-30', plain)).toThrow(RangeError);
    expect(() => amountDue(0, terms(), DUE, plain)).toThrow(RangeError);
    expect(() => amountDue(1.5, terms(), DUE, plain)).toThrow(RangeError);
    expect(() => amountDue(AMOUNT, terms({ days_after_due: 366 }), DUE, plain)).toThrow(RangeError);
    expect(() => amountDue(AMOUNT, terms({ due_date: '10/09/2025' }), DUE, plain)).toThrow(RangeError);
    expect(() =>
      amountDue(AMOUNT, terms({ fine: { type: 'fixed', amount: -1 } }), '2025-09-11', plain),
    ).toThrow(RangeError);
  });
});
