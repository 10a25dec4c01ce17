import type { DueDateTermsRecord } from '@seller-api/contracts';
import {
  amountPaidOf,
  dueDateAmountBounds,
  dueDateTermsProblem,
  owedOn,
  paidComponents,
  priceDueDatePayment,
  sandboxPayment,
  totalOf,
} from './due-date-payments';

// The worked example of docs/pix.md "Due-date charges": R$ 1,000.00 due Wednesday 2025-09-10, 30 days
// after due (last payable Friday 2025-10-10), fine 2 %, interest 1 % a month, rebate R$ 50.00,
// discount R$ 30.00 until 2025-09-05.
const TERMS: DueDateTermsRecord = {
  due_date: '2025-09-10',
  days_after_due: 30,
  fine: { type: 'percent', rate: 200 },
  interest: { type: 'percent_per_month', value: 100, days: 'calendar' },
  rebate: { type: 'fixed', amount: 5000 },
  discount: { type: 'fixed_until', tiers: [{ until: '2025-09-05', value: 3000 }] },
  calendar: null,
};
const CHARGE = {
  grossAmount: 100_000,
  amountComponents: null,
  dueDateTerms: TERMS,
  createdAt: new Date('2025-09-01T12:00:00.000Z'),
};
const payable = (day: string) => {
  const owed = owedOn(100_000, TERMS, day);
  if (!owed.payable) throw new Error('expected payable');
  return owed;
};

describe('owedOn', () => {
  it('prices the worked example on each day', () => {
    expect(owedOn(100_000, TERMS, '2025-09-03').final).toBe(92_000);
    expect(owedOn(100_000, TERMS, '2025-09-10').final).toBe(95_000);
    expect(owedOn(100_000, TERMS, '2025-09-15')).toMatchObject({
      final: 97_058,
      components: { original: 100_000, rebate: 5000, discount: 0, fine: 1900, interest: 158 },
    });
    expect(owedOn(100_000, TERMS, '2025-10-11')).toMatchObject({ payable: false, final: null });
  });
});

describe('dueDateTermsProblem', () => {
  it('names terms that cannot price the charge, and passes good ones', () => {
    expect(dueDateTermsProblem(100_000, TERMS)).toBeNull();
    expect(dueDateTermsProblem(4000, TERMS)).toMatch(/rebate/i);
    expect(dueDateTermsProblem(100_000, { ...TERMS, calendar: { municipality: '99' } })).not.toBeNull();
  });
});

describe('paidComponents', () => {
  it("takes the PSP's components when they add up to the amount paid", () => {
    const psp = { original: 100_000, rebate: 5000, discount: 0, fine: 1900, interest: 200 };
    expect(paidComponents(97_100, payable('2025-09-15'), psp)).toEqual(psp);
  });

  it("takes ours when the PSP's are of another original or rebate, even adding up", () => {
    const other = { original: 0, rebate: 0, discount: 0, fine: 0, interest: 97_100 };
    expect(paidComponents(97_100, payable('2025-09-15'), other)).toEqual({
      original: 100_000,
      rebate: 5000,
      discount: 0,
      fine: 1900,
      interest: 200,
    });
  });

  it("puts the difference on interest when late, ours otherwise, when the PSP's do not add up", () => {
    const wrong = { original: 100_000, rebate: 0, discount: 0, fine: 0, interest: 0 };
    expect(paidComponents(97_100, payable('2025-09-15'), wrong)).toEqual({
      original: 100_000,
      rebate: 5000,
      discount: 0,
      fine: 1900,
      interest: 200,
    });
    // Less than the fine and the base: interest stays at zero, the rest is a discount.
    const low = paidComponents(94_000, payable('2025-09-15'), null);
    expect(low).toEqual({ original: 100_000, rebate: 5000, discount: 2900, fine: 1900, interest: 0 });
    expect(totalOf(low)).toBe(94_000);
  });

  it('puts the difference on the discount when on time, never below zero', () => {
    expect(paidComponents(92_500, payable('2025-09-03'), null)).toEqual({
      original: 100_000,
      rebate: 5000,
      discount: 2500,
      fine: 0,
      interest: 0,
    });
    const high = paidComponents(96_000, payable('2025-09-03'), null);
    expect(high).toEqual({ original: 100_000, rebate: 5000, discount: 0, fine: 0, interest: 1000 });
    expect(totalOf(high)).toBe(96_000);
  });
});

describe('dueDateAmountBounds', () => {
  it('spans the largest discount to what the last payable day and a week more can come to', () => {
    // Base 95000 less the 3000 tier; at most 100000 + 2 % of it + 1 % a month for 37 days.
    expect(dueDateAmountBounds(100_000, TERMS, '2025-09-01')).toEqual({ least: 92_000, most: 103_233 });
    // Every day's price is inside.
    for (const day of ['2025-09-01', '2025-09-10', '2025-09-11', '2025-10-10']) {
      const { least, most } = dueDateAmountBounds(100_000, TERMS, '2025-09-01');
      const owed = payable(day).final;
      expect({ day, inside: owed >= least && owed <= most }).toEqual({ day, inside: true });
    }
  });

  it('counts a per-day discount from the creation day to a week past the due date, never below 1 cent', () => {
    const perDay: DueDateTermsRecord = {
      ...TERMS,
      rebate: null,
      discount: { type: 'amount_per_day_early', value: 1000, days: 'calendar' },
    };
    // 9 days to the due date and 7 more: 16000 off at most.
    expect(dueDateAmountBounds(100_000, perDay, '2025-09-01').least).toBe(84_000);
    expect(dueDateAmountBounds(10_000, perDay, '2025-09-01').least).toBe(1);
  });

  it('takes a percent discount of the original, as a PSP reading it so would, with a rebate', () => {
    const percent: DueDateTermsRecord = {
      ...TERMS,
      discount: { type: 'percent_until', tiers: [{ until: '2025-09-05', value: 1000 }] },
    };
    // Base 95000; 10 % of the original is 10000: a PSP taking 85000 is inside.
    expect(dueDateAmountBounds(100_000, percent, '2025-09-01').least).toBe(85_000);
  });
});

describe('priceDueDatePayment', () => {
  it("prices the day of the payment's instant in São Paulo", () => {
    // 02:00 UTC on the 16th is still the 15th in São Paulo.
    expect(
      priceDueDatePayment(CHARGE, { amountCents: 97_058, paidAt: new Date('2025-09-16T02:00:00.000Z') }),
    ).toMatchObject({ payable: true, day: '2025-09-15', ours: 97_058 });
    expect(
      priceDueDatePayment(CHARGE, { amountCents: 95_000, paidAt: new Date(), day: '2025-10-13' }),
    ).toEqual({ payable: false, day: '2025-10-13', lastPayableDate: '2025-10-10' });
  });
});

describe('sandboxPayment', () => {
  const now = new Date('2025-09-03T15:00:00.000Z');
  it('pays a due-date charge what is owed on the day asked, by default today', () => {
    expect(sandboxPayment(CHARGE, { date: undefined, amount: undefined }, now)).toMatchObject({
      ok: true,
      amount: 92_000,
      day: '2025-09-03',
    });
    expect(sandboxPayment(CHARGE, { date: '2025-09-15', amount: 97_058 }, now)).toMatchObject({
      ok: true,
      amount: 97_058,
      components: { fine: 1900, interest: 158 },
    });
  });

  it('refuses another amount, naming what is owed, and a day it is not payable on', () => {
    expect(sandboxPayment(CHARGE, { date: '2025-09-15', amount: 12_345 }, now)).toEqual({
      ok: false,
      message: 'The PSP refuses 12345 cents: 97058 are owed on 2025-09-15.',
    });
    expect(sandboxPayment(CHARGE, { date: '2025-10-11', amount: undefined }, now)).toEqual({
      ok: false,
      message: 'The charge is not payable on 2025-10-11: its last payable date is 2025-10-10.',
    });
    expect(sandboxPayment(CHARGE, { date: '2025-08-31', amount: undefined }, now)).toEqual({
      ok: false,
      message: 'The charge is not payable on 2025-08-31: it was made on 2025-09-01.',
    });
  });

  it('pays an immediate charge today only, its amount only', () => {
    const immediate = { ...CHARGE, grossAmount: 15_000, dueDateTerms: null };
    expect(sandboxPayment(immediate, { date: undefined, amount: undefined }, now)).toEqual({
      ok: true,
      amount: 15_000,
      day: '2025-09-03',
      components: { original: 15_000, rebate: 0, discount: 0, fine: 0, interest: 0 },
    });
    expect(sandboxPayment(immediate, { date: '2025-09-04', amount: undefined }, now)).toMatchObject({
      ok: false,
      message: expect.stringContaining('Only a due-date charge can be paid on another day'),
    });
    expect(sandboxPayment(immediate, { date: undefined, amount: 14_999 }, now)).toEqual({
      ok: false,
      message: 'The PSP refuses 14999 cents: 15000 are owed on 2025-09-03.',
    });
  });
});

describe('amountPaidOf', () => {
  it('is null before payment, the stored payment after, an immediate one for an older row', () => {
    expect(amountPaidOf({ ...CHARGE, approvedAt: null, paidOn: null })).toBeNull();
    const components = { original: 100_000, rebate: 5000, discount: 0, fine: 1900, interest: 158 };
    expect(
      amountPaidOf({
        grossAmount: 97_058,
        approvedAt: new Date('2025-09-15T15:00:00.000Z'),
        amountComponents: components,
        paidOn: '2025-09-15',
      }),
    ).toEqual({ amount: 97_058, date: '2025-09-15', components });
    expect(
      amountPaidOf({
        grossAmount: 15_000,
        approvedAt: new Date('2025-09-16T02:00:00.000Z'),
        amountComponents: null,
        paidOn: null,
      }),
    ).toEqual({
      amount: 15_000,
      date: '2025-09-15',
      components: { original: 15_000, rebate: 0, discount: 0, fine: 0, interest: 0 },
    });
  });
});
