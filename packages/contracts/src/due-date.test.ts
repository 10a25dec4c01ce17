import { z } from 'zod';
import {
  AmountDueQuery,
  AmountDueResponse,
  DUE_DATE_TERMS_SHAPE,
  DueDateTermsSchema,
  addDueDateTermsIssues,
  dueDateAmountIssues,
  dueDateClockIssues,
  type DueDateTermsOutput,
} from './due-date';
import { safeParseRequest, zodIssuesToFieldErrors } from './errors';
import { MESSAGES, message } from './messages';
import { strictInput } from './strict';

const Terms = strictInput(DueDateTermsSchema);

const errorsOf = (value: unknown, schema: z.ZodType = Terms) => {
  const result = safeParseRequest(schema, value);
  if (result.success) throw new Error(`expected a failure, got ${JSON.stringify(result.data)}`);
  return zodIssuesToFieldErrors(result.error);
};
const parse = (value: unknown): DueDateTermsOutput => {
  const result = safeParseRequest(Terms, value);
  if (!result.success) throw new Error(JSON.stringify(zodIssuesToFieldErrors(result.error)));
  return result.data;
};

const notWith = (type: string) => message('notWithType', { type });

describe('DueDateTermsSchema', () => {
  it('takes every shape, with the defaults filled in', () => {
    expect(parse({ due_date: '2025-09-10' })).toEqual({ due_date: '2025-09-10', days_after_due: 30 });
    expect(
      parse({
        due_date: '2025-09-10',
        days_after_due: 0,
        fine: { type: 'percent', rate: 200 },
        interest: { type: 'percent_per_month', value: 100 },
        rebate: { type: 'fixed', amount: 5000 },
        discount: {
          type: 'fixed_until',
          tiers: [
            { until: '2025-09-05', value: 3000 },
            { until: '2025-09-10', value: 1000 },
          ],
        },
      }),
    ).toEqual({
      due_date: '2025-09-10',
      days_after_due: 0,
      fine: { type: 'percent', rate: 200 },
      interest: { type: 'percent_per_month', value: 100, days: 'calendar' },
      rebate: { type: 'fixed', amount: 5000 },
      discount: {
        type: 'fixed_until',
        tiers: [
          { until: '2025-09-05', value: 3000 },
          { until: '2025-09-10', value: 1000 },
        ],
      },
    });
    expect(
      parse({
        due_date: '2025-09-10',
        fine: null,
        rebate: { type: 'percent', rate: 9999 },
        discount: { type: 'percent_per_day_early', value: 10 },
      }),
    ).toEqual({
      due_date: '2025-09-10',
      days_after_due: 30,
      fine: null,
      rebate: { type: 'percent', rate: 9999 },
      discount: { type: 'percent_per_day_early', value: 10, days: 'calendar' },
    });
    expect(
      parse({
        due_date: '2025-09-10',
        interest: { type: 'amount_per_day', value: 999_999_999_999, days: 'business' },
        discount: { type: 'amount_per_day_early', value: 100, days: 'business' },
      }).discount,
    ).toEqual({ type: 'amount_per_day_early', value: 100, days: 'business' });
  });

  it.each([
    ['a missing due date', {}, { due_date: [MESSAGES.required] }],
    ['a due date that is not a date', { due_date: '2025-02-30' }, { due_date: [MESSAGES.date] }],
    [
      'days_after_due over 365',
      { due_date: '2025-09-10', days_after_due: 366 },
      { days_after_due: ['Must be at most 365.'] },
    ],
    [
      'days_after_due below 0',
      { due_date: '2025-09-10', days_after_due: -1 },
      { days_after_due: ['Must be at least 0.'] },
    ],
    [
      'a fine of another type',
      { due_date: '2025-09-10', fine: { type: 'daily', amount: 1 } },
      { 'fine.type': ['Must be one of: fixed, percent.'] },
    ],
    [
      'a fixed fine with a rate',
      { due_date: '2025-09-10', fine: { type: 'fixed', rate: 200 } },
      { 'fine.amount': [MESSAGES.required], 'fine.rate': [notWith('fixed')] },
    ],
    [
      'a fine over 100 %',
      { due_date: '2025-09-10', fine: { type: 'percent', rate: 10_001 } },
      { 'fine.rate': ['Must be at most 10000.'] },
    ],
    [
      'a fine in reais',
      { due_date: '2025-09-10', fine: { type: 'fixed', amount: 2.5 } },
      { 'fine.amount': [MESSAGES.amount] },
    ],
    [
      'a zero fine',
      { due_date: '2025-09-10', fine: { type: 'fixed', amount: 0 } },
      { 'fine.amount': ['Must be at least 1.'] },
    ],
    [
      'a rebate of 100 %',
      { due_date: '2025-09-10', rebate: { type: 'percent', rate: 10_000 } },
      { 'rebate.rate': ['Must be less than 10000.'] },
    ],
    [
      'a percent rebate with an amount',
      { due_date: '2025-09-10', rebate: { type: 'percent', amount: 100, rate: 100 } },
      { 'rebate.amount': [notWith('percent')] },
    ],
    [
      'interest without a value',
      { due_date: '2025-09-10', interest: { type: 'percent_per_day' } },
      { 'interest.value': [MESSAGES.required] },
    ],
    [
      'interest over 100 % a period',
      { due_date: '2025-09-10', interest: { type: 'percent_per_year', value: 10_001 } },
      { 'interest.value': ['Must be at most 10000.'] },
    ],
    [
      'interest counted in other days',
      { due_date: '2025-09-10', interest: { type: 'percent_per_day', value: 1, days: 'working' } },
      { 'interest.days': ['Must be one of: calendar, business.'] },
    ],
    [
      'a discount without tiers',
      { due_date: '2025-09-10', discount: { type: 'fixed_until' } },
      { 'discount.tiers': [MESSAGES.required] },
    ],
    [
      'a tier discount with per-day fields',
      {
        due_date: '2025-09-10',
        discount: {
          type: 'percent_until',
          tiers: [{ until: '2025-09-01', value: 100 }],
          value: 5,
          days: 'business',
        },
      },
      { 'discount.value': [notWith('percent_until')], 'discount.days': [notWith('percent_until')] },
    ],
    [
      'a per-day discount with tiers',
      {
        due_date: '2025-09-10',
        discount: { type: 'amount_per_day_early', tiers: [{ until: '2025-09-01', value: 100 }] },
      },
      { 'discount.value': [MESSAGES.required], 'discount.tiers': [notWith('amount_per_day_early')] },
    ],
    [
      'an empty list of tiers',
      { due_date: '2025-09-10', discount: { type: 'fixed_until', tiers: [] } },
      { 'discount.tiers': [MESSAGES.notEmpty] },
    ],
    [
      'more than three tiers',
      {
        due_date: '2025-09-10',
        discount: {
          type: 'fixed_until',
          tiers: [
            { until: '2025-09-01', value: 400 },
            { until: '2025-09-02', value: 300 },
            { until: '2025-09-03', value: 200 },
            { until: '2025-09-04', value: 100 },
          ],
        },
      },
      { 'discount.tiers': ['Must have at most 3 items.'] },
    ],
    [
      'a percent discount of 100 %',
      { due_date: '2025-09-10', discount: { type: 'percent_per_day_early', value: 10_000 } },
      { 'discount.value': ['Must be less than 10000.'] },
    ],
    [
      'a tier after the due date',
      {
        due_date: '2025-09-10',
        discount: { type: 'fixed_until', tiers: [{ until: '2025-09-11', value: 100 }] },
      },
      { 'discount.tiers.0.until': [MESSAGES.tierAfterDueDate] },
    ],
    [
      'an unknown field',
      { due_date: '2025-09-10', fine: { type: 'fixed', amount: 100, grace_days: 2 } },
      { 'fine.grace_days': [MESSAGES.unknownField] },
    ],
  ] as [string, unknown, Record<string, string[]>][])(
    'refuses %s, on its field',
    (_what, value, expected) => {
      expect(errorsOf(value)).toEqual(expected);
    },
  );

  it('refuses tiers out of order, naming each', () => {
    expect(
      errorsOf({
        due_date: '2025-09-10',
        discount: {
          type: 'percent_until',
          tiers: [
            { until: '2025-09-05', value: 500 },
            { until: '2025-09-05', value: 600 },
            { until: '2025-09-01', value: 10_000 },
          ],
        },
      }),
    ).toEqual({
      'discount.tiers.1.until': [MESSAGES.tierDateAscending],
      'discount.tiers.1.value': [MESSAGES.tierValueDescending],
      'discount.tiers.2.until': [MESSAGES.tierDateAscending],
      'discount.tiers.2.value': [message('lessThan', { maximum: 10_000 }), MESSAGES.tierValueDescending],
    });
  });

  it('lists every broken field at once', () => {
    expect(
      errorsOf({
        due_date: '10/09/2025',
        days_after_due: 400,
        fine: { type: 'percent' },
        interest: { type: 'percent_per_week', value: 1 },
        rebate: { type: 'fixed', amount: '50.00' },
        discount: {
          type: 'fixed_until',
          tiers: [
            { until: '2025-09-05', value: 100 },
            { until: '2025-09-04', value: 200 },
          ],
          days: 'calendar',
        },
      }),
    ).toEqual({
      due_date: [MESSAGES.date],
      days_after_due: ['Must be at most 365.'],
      'fine.rate': [MESSAGES.required],
      'interest.type': [
        'Must be one of: amount_per_day, percent_per_day, percent_per_month, percent_per_year.',
      ],
      'rebate.amount': [MESSAGES.amount],
      'discount.days': [notWith('fixed_until')],
      'discount.tiers.1.until': [MESSAGES.tierDateAscending],
      'discount.tiers.1.value': [MESSAGES.tierValueDescending],
    });
  });

  it('reports the tier dates against the due date inside a larger object, with its path', () => {
    const Payment = strictInput(
      z
        .object({ gross_amount: z.int().min(1), ...DUE_DATE_TERMS_SHAPE })
        .superRefine((payment, ctx) => addDueDateTermsIssues(payment, ctx), {
          when: (payload) => typeof payload.value === 'object' && payload.value !== null,
        }),
    );
    const Body = z.object({ payment: Payment });
    expect(
      errorsOf(
        {
          payment: {
            gross_amount: 0,
            due_date: '2025-09-10',
            discount: { type: 'fixed_until', tiers: [{ until: '2025-09-12', value: 100 }] },
          },
        },
        Body,
      ),
    ).toEqual({
      'payment.gross_amount': ['Must be at least 1.'],
      'payment.discount.tiers.0.until': [MESSAGES.tierAfterDueDate],
    });
  });
});

describe('the rules against the amount and the clock', () => {
  const below = (amount: number) => message('belowAmount', { amount });

  it('refuses a rebate or a discount that comes to the amount', () => {
    const terms = parse({
      due_date: '2025-09-10',
      rebate: { type: 'fixed', amount: 5000 },
      discount: {
        type: 'fixed_until',
        tiers: [
          { until: '2025-09-01', value: 6000 },
          { until: '2025-09-05', value: 5000 },
          { until: '2025-09-10', value: 4999 },
        ],
      },
    });
    expect(dueDateAmountIssues(terms, 5000)).toEqual([
      { path: ['rebate', 'amount'], message: below(5000) },
      { path: ['discount', 'tiers', 0, 'value'], message: below(5000) },
      { path: ['discount', 'tiers', 1, 'value'], message: below(5000) },
    ]);
    expect(dueDateAmountIssues(terms, 6001)).toEqual([]);
  });

  it('refuses a percent rebate that rounds to the whole amount, and a per-day amount not below it', () => {
    const terms = parse({
      due_date: '2025-09-10',
      rebate: { type: 'percent', rate: 5000 },
      discount: { type: 'amount_per_day_early', value: 1 },
    });
    // Half of 1 cent rounds up to 1 cent.
    expect(dueDateAmountIssues(terms, 1)).toEqual([
      { path: ['rebate', 'rate'], message: below(1) },
      { path: ['discount', 'value'], message: below(1) },
    ]);
    expect(dueDateAmountIssues(terms, 2)).toEqual([]);
  });

  it('refuses terms whose most owed does not fit API Pix values', () => {
    const tooBig = message('amountTooBig', {
      what: 'The amount owed on the last payable date',
      maximum: 999_999_999_999,
    });
    const fined = parse({ due_date: '2025-09-10', fine: { type: 'fixed', amount: 1 } });
    expect(dueDateAmountIssues(fined, 999_999_999_999)).toEqual([{ path: ['fine'], message: tooBig }]);
    expect(dueDateAmountIssues(fined, 999_999_999_998)).toEqual([]);
    // 1 % a day for 30 + 7 days on 900,000,000,000 cents is 333,000,000,000 more.
    const daily = parse({ due_date: '2025-09-10', interest: { type: 'percent_per_day', value: 100 } });
    expect(dueDateAmountIssues(daily, 900_000_000_000)).toEqual([
      { path: ['interest', 'value'], message: tooBig },
    ]);
    expect(dueDateAmountIssues(daily, 700_000_000_000)).toEqual([]);
  });

  it('refuses a due date before today in São Paulo', () => {
    expect(dueDateClockIssues({ due_date: '2025-09-09' }, '2025-09-10')).toEqual([
      { path: ['due_date'], message: MESSAGES.dueDatePast },
    ]);
    expect(dueDateClockIssues({ due_date: '2025-09-10' }, '2025-09-10')).toEqual([]);
  });

  it('refuses a due date more than ten years ahead', () => {
    expect(dueDateClockIssues({ due_date: '2035-09-10' }, '2025-09-10')).toEqual([]);
    expect(dueDateClockIssues({ due_date: '2035-09-11' }, '2025-09-10')).toEqual([
      { path: ['due_date'], message: 'Must be at most 10 years from today.' },
    ]);
    // The calendar's last years stay out of reach: no last payable date past 9999-12-31.
    expect(dueDateClockIssues({ due_date: '9999-12-20' }, '2026-11-28')).toHaveLength(1);
  });

  it('fills the amount into its message', () => {
    expect(message('belowAmount', { amount: 100 })).toBe('Must come to less than the amount (100 cents).');
  });
});

describe('AmountDueQuery', () => {
  it('takes a date or none, and nothing else', () => {
    expect(safeParseRequest(AmountDueQuery, {})).toMatchObject({ success: true, data: {} });
    expect(safeParseRequest(AmountDueQuery, { date: '2025-09-15' })).toMatchObject({
      success: true,
      data: { date: '2025-09-15' },
    });
    expect(errorsOf({ date: '2025-02-30', when: 'today' }, AmountDueQuery)).toEqual({
      date: [MESSAGES.date],
      when: [MESSAGES.unknownField],
    });
  });
});

describe('AmountDueResponse', () => {
  it('takes a payable day and a day that is not', () => {
    const dates = {
      effective_due_date: '2025-09-10',
      last_payable_date: '2025-10-10',
    };
    expect(
      AmountDueResponse.safeParse({
        message: 'Amount due.',
        data: {
          date: '2025-09-15',
          ...dates,
          payable: true,
          overdue: true,
          days_late: 5,
          components: { original: 100_000, rebate: 5000, discount: 0, fine: 1900, interest: 158 },
          final: 97_058,
        },
      }).success,
    ).toBe(true);
    expect(
      AmountDueResponse.safeParse({
        message: 'Amount due.',
        data: {
          date: '2025-10-11',
          ...dates,
          payable: false,
          overdue: true,
          days_late: 31,
          components: null,
          final: null,
        },
      }).success,
    ).toBe(true);
    expect(
      AmountDueResponse.safeParse({
        message: 'Amount due.',
        data: {
          date: '2025-10-11',
          ...dates,
          payable: false,
          overdue: true,
          days_late: -1,
          components: null,
          final: 1.5,
        },
      }).success,
    ).toBe(false);
  });
});
