import { z } from 'zod';
import { MAX_AMOUNT, cents, dataResponse, date, withinDateRange } from './common';
import { MESSAGES, message } from './messages';
import { strictInput } from './strict';

// ---------------------------------------------------------------------------------------------------
// Due-date charges (API Pix `cobv`; docs/pix.md, "Due-date charges"): the terms a charge with a due
// date carries, and what is owed on a day. Amounts are integer cents, rates integer basis points
// (1 % = 100). The schema checks every rule API Pix sets on the terms alone and reports each broken
// field at once; the rules that need the charge's amount or today's date are dueDateAmountIssues and
// dueDateClockIssues, for the route that knows them. Create-order takes the terms in its `payment`
// (orders.ts OrderPaymentInput).
// ---------------------------------------------------------------------------------------------------

/** 100 % in basis points: a rebate or a discount stays below it, a fine or an interest rate at most. */
export const FULL_RATE_BPS = 10_000;

/** At most this many days after the effective due date (our bound: API Pix sets none). */
export const MAX_DAYS_AFTER_DUE = 365;
export const DEFAULT_DAYS_AFTER_DUE = 30;

const DayCount = z.enum(['calendar', 'business']);

const positiveAmount = z.int().min(1).max(MAX_AMOUNT);
const rate = z.int().min(1).max(FULL_RATE_BPS);
const rateBelowFull = z.int().min(1).lt(FULL_RATE_BPS);

const dueDate = date.refine(withinDateRange, MESSAGES.dateRange);
const isDate = (value: unknown): value is string => dueDate.safeParse(value).success;

type Issue = { path: (string | number)[]; message: string };
type Ctx = { addIssue: (issue: { code: 'custom'; path: (string | number)[]; message: string }) => void };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * The fields a type takes and does not take: a missing one is "required", one of another type "not
 * accepted with type ...", so `{type: "fixed", rate: 200}` names both `amount` and `rate`.
 */
function checkFieldsOfType(
  raw: Record<string, unknown>,
  ctx: Ctx,
  fields: Record<string, readonly string[]>,
  optional: Record<string, readonly string[]> = {},
): void {
  const type = raw.type;
  if (typeof type !== 'string' || !(type in fields)) return;
  const wanted = fields[type] ?? [];
  const allowed = new Set([...wanted, ...(optional[type] ?? [])]);
  for (const field of wanted)
    if (raw[field] === undefined) ctx.addIssue({ code: 'custom', path: [field], message: MESSAGES.required });
  const every = new Set([...Object.values(fields).flat(), ...Object.values(optional).flat()]);
  for (const field of every)
    if (!allowed.has(field) && raw[field] !== undefined)
      ctx.addIssue({ code: 'custom', path: [field], message: message('notWithType', { type }) });
}

const onAnyObject = { when: (payload: { value: unknown }) => isRecord(payload.value) };

/** `fine`: once, from the first day after the effective due date; a percent of amount - rebate. */
export const DueDateFineInput = z
  .object({
    type: z.enum(['fixed', 'percent']),
    amount: positiveAmount.optional().meta({ description: 'Cents, with type fixed' }),
    rate: rate.optional().meta({ description: 'Basis points (200 = 2 %), with type percent; at most 10000' }),
  })
  .superRefine((value, ctx) => {
    checkFieldsOfType(value as Record<string, unknown>, ctx, { fixed: ['amount'], percent: ['rate'] });
  }, onAnyObject);

/** `rebate` (abatimento): off the amount whatever the payment date; a percent of the amount. */
export const DueDateRebateInput = z
  .object({
    type: z.enum(['fixed', 'percent']),
    amount: positiveAmount.optional().meta({ description: 'Cents, with type fixed; below the amount' }),
    rate: rateBelowFull.optional().meta({ description: 'Basis points, with type percent; below 10000' }),
  })
  .superRefine((value, ctx) => {
    checkFieldsOfType(value as Record<string, unknown>, ctx, { fixed: ['amount'], percent: ['rate'] });
  }, onAnyObject);

const INTEREST_TYPES = [
  'amount_per_day',
  'percent_per_day',
  'percent_per_month',
  'percent_per_year',
] as const;

/** `interest`: on amount - rebate, for each day (calendar or business) after the effective due date. */
export const DueDateInterestInput = z
  .object({
    type: z.enum(INTEREST_TYPES),
    value: positiveAmount.meta({
      description:
        'Cents a day with amount_per_day; otherwise basis points a day, month or year (at most 10000)',
    }),
    days: DayCount.default('calendar'),
  })
  .superRefine((value, ctx) => {
    const raw = value as Record<string, unknown>;
    if (
      typeof raw.type === 'string' &&
      raw.type.startsWith('percent_') &&
      typeof raw.value === 'number' &&
      raw.value > FULL_RATE_BPS
    )
      ctx.addIssue({
        code: 'custom',
        path: ['value'],
        message: message('maxNumber', { maximum: FULL_RATE_BPS }),
      });
  }, onAnyObject);

const DISCOUNT_TYPES = [
  'fixed_until',
  'percent_until',
  'amount_per_day_early',
  'percent_per_day_early',
] as const;

export const DueDateDiscountTierInput = z.object({
  until: dueDate.meta({ description: 'The last day of this tier, YYYY-MM-DD, on or before due_date' }),
  value: positiveAmount.meta({
    description: 'Cents with fixed_until; basis points (below 10000) with percent_until',
  }),
});

/**
 * `discount`: 1 to 3 tiers until dates (dates ascending, values descending), or an amount or a
 * percent for each day (calendar or business) paid before the effective due date.
 */
export const DueDateDiscountInput = z
  .object({
    type: z.enum(DISCOUNT_TYPES),
    tiers: z.array(DueDateDiscountTierInput).min(1).max(3).optional(),
    value: positiveAmount.optional().meta({
      description: 'With a per-day type: cents a day, or basis points a day (below 10000)',
    }),
    days: DayCount.optional().meta({ description: 'With a per-day type; default calendar' }),
  })
  .superRefine((value, ctx) => {
    const raw = value as Record<string, unknown>;
    checkFieldsOfType(
      raw,
      ctx,
      {
        fixed_until: ['tiers'],
        percent_until: ['tiers'],
        amount_per_day_early: ['value'],
        percent_per_day_early: ['value'],
      },
      { amount_per_day_early: ['days'], percent_per_day_early: ['days'] },
    );
    const percent = raw.type === 'percent_until' || raw.type === 'percent_per_day_early';
    const tooBig = message('lessThan', { maximum: FULL_RATE_BPS });
    if (raw.type === 'percent_per_day_early' && typeof raw.value === 'number' && raw.value >= FULL_RATE_BPS)
      ctx.addIssue({ code: 'custom', path: ['value'], message: tooBig });
    if ((raw.type !== 'fixed_until' && raw.type !== 'percent_until') || !Array.isArray(raw.tiers)) return;
    const tiers: unknown[] = raw.tiers;
    tiers.forEach((tier, index) => {
      if (!isRecord(tier)) return;
      const before = index > 0 ? tiers[index - 1] : undefined;
      if (percent && typeof tier.value === 'number' && tier.value >= FULL_RATE_BPS)
        ctx.addIssue({ code: 'custom', path: ['tiers', index, 'value'], message: tooBig });
      if (!isRecord(before)) return;
      if (isDate(tier.until) && isDate(before.until) && !(tier.until > before.until))
        ctx.addIssue({
          code: 'custom',
          path: ['tiers', index, 'until'],
          message: message('tierDateAscending'),
        });
      if (typeof tier.value === 'number' && typeof before.value === 'number' && !(tier.value < before.value))
        ctx.addIssue({
          code: 'custom',
          path: ['tiers', index, 'value'],
          message: message('tierValueDescending'),
        });
    });
  }, onAnyObject);

/**
 * Whose holidays count as non-business days: national by default; a state (`SP`) adds its own, a
 * municipality (IBGE code, API Pix's `codMun`) its state's and its own where the data has them. That
 * the state exists and the municipality is in it is checked by the service (the due-date package's
 * calendarPlaceProblem), with the other rules.
 */
export const CalendarPlaceInput = z
  .object({
    state: z
      .string()
      .regex(/^[A-Z]{2}$/, { error: MESSAGES.state })
      .optional(),
    municipality: z
      .string()
      .regex(/^\d{7}$/, { error: 'Must be a 7-digit IBGE municipality code.' })
      .optional()
      .meta({ description: 'IBGE code, 7 digits (São Paulo: 3550308)' }),
  })
  .meta({ description: 'The place whose holidays count; national holidays when absent' });
export type CalendarPlaceInput = z.infer<typeof CalendarPlaceInput>;

/** The fields of due-date terms, to extend another object with (create-order's `payment`). */
export const DUE_DATE_TERMS_SHAPE = {
  due_date: dueDate.meta({
    description: 'YYYY-MM-DD in São Paulo; on a weekend or holiday the charge is due the next business day',
  }),
  days_after_due: z.int().min(0).max(MAX_DAYS_AFTER_DUE).default(DEFAULT_DAYS_AFTER_DUE).meta({
    description: 'Payable for this many days after the effective due date; default 30, at most 365',
  }),
  fine: DueDateFineInput.nullable().optional(),
  interest: DueDateInterestInput.nullable().optional(),
  rebate: DueDateRebateInput.nullable().optional(),
  discount: DueDateDiscountInput.nullable().optional(),
  calendar: CalendarPlaceInput.nullable().optional(),
};

/** The fields of the terms besides `due_date` (each refused without it: orders.ts). */
export const DUE_DATE_SIBLINGS = [
  'days_after_due',
  'fine',
  'interest',
  'rebate',
  'discount',
  'calendar',
] as const;

/**
 * The rules between fields of the terms: each discount tier's date on or before `due_date`. Runs
 * over a body whose other parts failed, so add it with `{ when }` as DueDateTermsSchema does.
 */
export function addDueDateTermsIssues(raw: unknown, ctx: Ctx, path: (string | number)[] = []): void {
  if (!isRecord(raw) || !isRecord(raw.discount)) return;
  // A malformed due date is its own field's issue: nothing to compare the tiers with.
  const parsed = dueDate.safeParse(raw.due_date);
  if (!parsed.success) return;
  const due = parsed.data;
  const tiers = raw.discount.tiers;
  if (!Array.isArray(tiers)) return;
  tiers.forEach((tier: unknown, index) => {
    if (isRecord(tier) && isDate(tier.until) && tier.until > due)
      ctx.addIssue({
        code: 'custom',
        path: [...path, 'discount', 'tiers', index, 'until'],
        message: message('tierAfterDueDate'),
      });
  });
}

/** The terms, as `@seller-api/due-date` takes them. */
export type DueDateTermsOutput = {
  due_date: string;
  days_after_due: number;
  fine?: { type: 'fixed'; amount: number } | { type: 'percent'; rate: number } | null;
  interest?: { type: (typeof INTEREST_TYPES)[number]; value: number; days: 'calendar' | 'business' } | null;
  rebate?: { type: 'fixed'; amount: number } | { type: 'percent'; rate: number } | null;
  discount?:
    | { type: 'fixed_until' | 'percent_until'; tiers: { until: string; value: number }[] }
    | { type: 'amount_per_day_early' | 'percent_per_day_early'; value: number; days: 'calendar' | 'business' }
    | null;
  calendar?: { state?: string; municipality?: string } | null;
};

type Parsed = z.output<z.ZodObject<typeof DUE_DATE_TERMS_SHAPE>>;

/** The checked terms in the shapes of each type (the schema has made sure each has its fields). */
export function dueDateTermsOutput(terms: Parsed): DueDateTermsOutput {
  const out: DueDateTermsOutput = { due_date: terms.due_date, days_after_due: terms.days_after_due };
  const fixedOrPercent = (value: { type: 'fixed' | 'percent'; amount?: number; rate?: number }) =>
    value.type === 'fixed'
      ? { type: 'fixed' as const, amount: value.amount as number }
      : { type: 'percent' as const, rate: value.rate as number };
  if (terms.fine !== undefined) out.fine = terms.fine && fixedOrPercent(terms.fine);
  if (terms.rebate !== undefined) out.rebate = terms.rebate && fixedOrPercent(terms.rebate);
  if (terms.interest !== undefined) out.interest = terms.interest;
  if (terms.calendar !== undefined) out.calendar = terms.calendar;
  if (terms.discount !== undefined) {
    const discount = terms.discount;
    out.discount =
      discount === null
        ? null
        : discount.type === 'fixed_until' || discount.type === 'percent_until'
          ? { type: discount.type, tiers: discount.tiers ?? [] }
          : { type: discount.type, value: discount.value as number, days: discount.days ?? 'calendar' };
  }
  return out;
}

/**
 * Due-date terms: `due_date`, `days_after_due`, `fine`, `interest`, `rebate`, `discount`. Every broken
 * rule is an issue on its own field, all at once. Not strict by itself: a public route wraps it (or
 * the object it extends) in strictInput.
 */
export const DueDateTermsSchema = z
  .object(DUE_DATE_TERMS_SHAPE)
  .superRefine((terms, ctx) => addDueDateTermsIssues(terms, ctx), onAnyObject)
  .transform(dueDateTermsOutput);
export type DueDateTermsInput = z.input<typeof DueDateTermsSchema>;

/**
 * The rules against the charge's amount (cents), API Pix's: a rebate, each discount tier and a
 * per-day discount amount must come to less than it. Paths are relative to the terms.
 */
export function dueDateAmountIssues(terms: DueDateTermsOutput, amount: number): Issue[] {
  const issues: Issue[] = [];
  const below = message('belowAmount', { amount });
  const rebate = terms.rebate;
  if (rebate?.type === 'fixed' && rebate.amount >= amount)
    issues.push({ path: ['rebate', 'amount'], message: below });
  // A percent below 100 % can still round to the whole amount (50 % of 1 cent is 1 cent, half up).
  if (rebate?.type === 'percent' && roundedPercent(amount, rebate.rate) >= amount)
    issues.push({ path: ['rebate', 'rate'], message: below });
  const discount = terms.discount;
  if (discount?.type === 'fixed_until')
    discount.tiers.forEach((tier, index) => {
      if (tier.value >= amount) issues.push({ path: ['discount', 'tiers', index, 'value'], message: below });
    });
  if (discount?.type === 'amount_per_day_early' && discount.value >= amount)
    issues.push({ path: ['discount', 'value'], message: below });
  // API Pix writes every amount as \d{1,10}\.\d{2}: the most the charge can come to must fit.
  if (mostOwed(terms, amount) > MAX_AMOUNT)
    issues.push({
      path: terms.interest ? ['interest', 'value'] : ['fine'],
      message: message('amountTooBig', {
        what: 'The amount owed on the last payable date',
        maximum: MAX_AMOUNT,
      }),
    });
  return issues;
}

/**
 * An upper bound of what the charge can come to: the amount (the base is never more), the fine, and
 * interest for days_after_due + 7 days late (the last payable date is a business day, and Brazil never
 * has a week without one; business days late are never more than calendar days).
 */
export function mostOwed(terms: DueDateTermsOutput, amount: number): number {
  const base = BigInt(amount);
  const fine = !terms.fine
    ? 0n
    : terms.fine.type === 'fixed'
      ? BigInt(terms.fine.amount)
      : divideHalfUp(base * BigInt(terms.fine.rate), BigInt(FULL_RATE_BPS));
  const late = BigInt(terms.days_after_due + 7);
  const interest = terms.interest;
  const n = !interest ? 1 : interestPeriod(interest.type, interest.days);
  const owedInterest = !interest
    ? 0n
    : interest.type === 'amount_per_day'
      ? BigInt(interest.value) * late
      : divideHalfUp(base * BigInt(interest.value) * late, BigInt(FULL_RATE_BPS * n));
  return Number(base + fine + owedInterest);
}

/** Days in the period of an interest rate (docs/pix.md, "What is owed on a day"). */
function interestPeriod(type: (typeof INTEREST_TYPES)[number], days: 'calendar' | 'business'): number {
  if (type === 'percent_per_month') return days === 'business' ? 21 : 30;
  if (type === 'percent_per_year') return days === 'business' ? 252 : 365;
  return 1;
}

function divideHalfUp(numerator: bigint, denominator: bigint): bigint {
  return (2n * numerator + denominator) / (2n * denominator);
}

function roundedPercent(amount: number, bps: number): number {
  return Number(divideHalfUp(BigInt(amount) * BigInt(bps), BigInt(FULL_RATE_BPS)));
}

/** How far ahead a due date may be: an invoice's horizon, and far from the calendar's year 9999. */
export const MAX_DUE_DATE_YEARS = 10;

/**
 * The rules against the clock: the due date is today or later in São Paulo (`today`, YYYY-MM-DD), and
 * at most MAX_DUE_DATE_YEARS ahead (dates are compared as text: the same day that many years on).
 */
export function dueDateClockIssues(terms: Pick<DueDateTermsOutput, 'due_date'>, today: string): Issue[] {
  if (terms.due_date < today) return [{ path: ['due_date'], message: message('dueDatePast') }];
  const horizon = `${String(Number(today.slice(0, 4)) + MAX_DUE_DATE_YEARS).padStart(4, '0')}${today.slice(4)}`;
  if (terms.due_date > horizon)
    return [{ path: ['due_date'], message: message('dueDateTooFar', { years: MAX_DUE_DATE_YEARS }) }];
  return [];
}

// ---------------------------------------------------------------------------------------------------
// What is owed on a day: `GET /sellers/orders/{uuid}/amount-due/?date=YYYY-MM-DD`
// ---------------------------------------------------------------------------------------------------

/** The query of the amount-due route: the day asked about, default today in São Paulo. */
export const AmountDueQuery = strictInput(
  z.object({ date: dueDate.optional().meta({ description: 'YYYY-MM-DD; default today in São Paulo' }) }),
);
export type AmountDueQuery = z.infer<typeof AmountDueQuery>;

export const AmountDueComponents = z.object({
  original: cents.meta({ description: 'The amount of the charge' }),
  rebate: cents.meta({ description: 'Taken off whatever the payment date' }),
  discount: cents.meta({ description: 'For paying on or before the effective due date' }),
  fine: cents.meta({ description: 'After the effective due date, once' }),
  interest: cents.meta({ description: 'After the effective due date, for each day late' }),
});
export type AmountDueComponents = z.infer<typeof AmountDueComponents>;

export const AmountDueDetail = z.object({
  date: date.meta({ description: 'The day asked about (default today in São Paulo)' }),
  effective_due_date: date.meta({ description: 'The due date, or the next business day when it is not one' }),
  last_payable_date: date.meta({ description: 'The last day the charge can be paid' }),
  payable: z.boolean().meta({ description: 'Whether the charge can be paid on date' }),
  overdue: z.boolean().meta({ description: 'Whether date is after the effective due date' }),
  days_late: z
    .int()
    .min(0)
    .meta({ description: 'Calendar days from the effective due date to date; 0 when not overdue' }),
  components: AmountDueComponents.nullable().meta({ description: 'null when not payable' }),
  final: cents.nullable().meta({
    description:
      'What is owed on date: original - rebate - discount + fine + interest; null when not payable',
  }),
});
export type AmountDueDetail = z.infer<typeof AmountDueDetail>;
export const AmountDueResponse = dataResponse(AmountDueDetail);
export type AmountDueResponse = z.infer<typeof AmountDueResponse>;

// ---------------------------------------------------------------------------------------------------
// The terms as stored and passed between services, the amount a payment paid, the sandbox's pay body
// ---------------------------------------------------------------------------------------------------

const fixedOrPercent = z.union([
  z.object({ type: z.literal('fixed'), amount: cents }),
  z.object({ type: z.literal('percent'), rate: cents }),
]);

/**
 * Checked terms (DueDateTermsOutput) as orders stores them and sends them to payments with the charge,
 * and as the order detail and the order events show them: every field present, null when unset.
 */
export const DueDateTermsRecord = z.object({
  due_date: date,
  days_after_due: z.int().min(0).max(MAX_DAYS_AFTER_DUE),
  fine: fixedOrPercent.nullable(),
  interest: z.object({ type: z.enum(INTEREST_TYPES), value: cents, days: DayCount }).nullable(),
  rebate: fixedOrPercent.nullable(),
  discount: z
    .union([
      z.object({
        type: z.enum(['fixed_until', 'percent_until']),
        tiers: z.array(z.object({ until: date, value: cents })),
      }),
      z.object({
        type: z.enum(['amount_per_day_early', 'percent_per_day_early']),
        value: cents,
        days: DayCount,
      }),
    ])
    .nullable(),
  calendar: z
    .object({ state: z.string().optional(), municipality: z.string().optional() })
    .nullable()
    .meta({ description: 'The place whose holidays count; null: national holidays' }),
});
export type DueDateTermsRecord = z.infer<typeof DueDateTermsRecord>;

/** The checked terms with every field present (null when unset), as DueDateTermsRecord has them. */
export function dueDateTermsRecord(terms: DueDateTermsOutput): DueDateTermsRecord {
  return {
    due_date: terms.due_date,
    days_after_due: terms.days_after_due,
    fine: terms.fine ?? null,
    interest: terms.interest ?? null,
    rebate: terms.rebate ?? null,
    discount: terms.discount ?? null,
    calendar: terms.calendar && (terms.calendar.state || terms.calendar.municipality) ? terms.calendar : null,
  };
}

/**
 * `payment.due_date` of the order detail and `order.due_date` of order events: the terms and the dates
 * they give. null for an order paid by an immediate charge.
 */
export const OrderDueDateDetail = DueDateTermsRecord.extend({
  effective_due_date: date.meta({ description: 'The due date, or the next business day when it is not one' }),
  last_payable_date: date.meta({
    description: 'The last day the charge can be paid; after it the order expires',
  }),
  overdue: z.boolean().meta({
    description: 'PENDING and today (São Paulo) is after effective_due_date; order.overdue was sent once',
  }),
});
export type OrderDueDateDetail = z.infer<typeof OrderDueDateDetail>;

/**
 * What a payment paid: the amount, the day (São Paulo) it was priced for, and its components. For an
 * immediate charge the components are the amount and zeros.
 */
export const AmountPaid = z.object({
  amount: cents.meta({
    description: 'The amount paid, in cents: original - rebate - discount + fine + interest',
  }),
  date: date.meta({
    description: 'The day in São Paulo the payment was made (or, in the sandbox, made as if on)',
  }),
  components: AmountDueComponents,
});
export type AmountPaid = z.infer<typeof AmountPaid>;

/**
 * `POST /sandbox/orders/{uuid}/pay/` body, optional: pay as if on `date` (default today in São Paulo),
 * `amount` cents (default what is owed that day). Another amount, or a date the charge cannot be paid
 * on, is refused as the PSP would refuse it (409) and the order stays as it was.
 */
export const SandboxPayRequest = strictInput(
  z.object({
    date: dueDate.optional().meta({ description: 'YYYY-MM-DD; default today in São Paulo' }),
    amount: z
      .int()
      .min(1)
      .max(MAX_AMOUNT)
      .optional()
      .meta({ description: 'Cents; default what is owed on date' }),
  }),
);
export type SandboxPayRequest = z.infer<typeof SandboxPayRequest>;
