import type { IsoDate } from './dates';

// The terms of a due-date charge, in the API's shapes (docs/pix.md, "Due-date charges"): amounts in
// integer cents, rates in integer basis points (1 % = 100). The zod schema that checks them at the
// API is `DueDateTermsSchema` in @seller-api/contracts; these functions take terms already checked.

/** How days are counted: every day, or business days only. */
export type DayCount = 'calendar' | 'business';

/** Once, from the first day after the effective due date, on the base (amount - rebate). */
export type Fine = { type: 'fixed'; amount: number } | { type: 'percent'; rate: number };

export type InterestType = 'amount_per_day' | 'percent_per_day' | 'percent_per_month' | 'percent_per_year';

/** `value` in cents for `amount_per_day`, else basis points; `days` defaults to `calendar`. */
export type Interest = { type: InterestType; value: number; days?: DayCount };

/** Taken off the amount whatever the payment date; a percent is of the amount. */
export type Rebate = { type: 'fixed'; amount: number } | { type: 'percent'; rate: number };

/** `until` is the last day of the tier; `value` cents (`fixed_until`) or basis points. */
export type DiscountTier = { until: IsoDate; value: number };

/** Discount tiers (API Pix modalities 1 and 2): 1 to 3, `until` ascending, values descending. */
export type TierDiscount = { type: 'fixed_until' | 'percent_until'; tiers: DiscountTier[] };

/** A discount for each day paid before the effective due date (API Pix modalities 3 to 6). */
export type PerDayDiscount = {
  type: 'amount_per_day_early' | 'percent_per_day_early';
  /** Cents per day (`amount_per_day_early`) or basis points per day. */
  value: number;
  /** Defaults to `calendar`. */
  days?: DayCount;
};

export type Discount = TierDiscount | PerDayDiscount;

export function isTierDiscount(discount: Discount): discount is TierDiscount {
  return discount.type === 'fixed_until' || discount.type === 'percent_until';
}

export type DueDateTerms = {
  due_date: IsoDate;
  /** Payable for this many days after the effective due date (0 to 365; the API's default is 30). */
  days_after_due: number;
  fine?: Fine | null;
  interest?: Interest | null;
  rebate?: Rebate | null;
  discount?: Discount | null;
};

/** The largest amount or rate: API Pix writes both as `\d{1,10}\.\d{2}`. */
export const MAX_COBV_VALUE = 999_999_999_999;

/** 100 % in basis points. */
export const FULL_RATE = 10_000;
