import type { AmountDueComponents, DueDateTermsRecord } from '@seller-api/contracts';
import { money, percent } from './format';

/*
 * A due-date charge's terms in plain words for the order page (docs/pix.md, "Due-date charges"):
 * amounts in cents, rates in basis points, days calendar or business, fine and interest from the day
 * after the effective due date, discounts up to it, the rebate whatever the day.
 */

const days = (count: 'calendar' | 'business') => (count === 'business' ? 'business day' : 'calendar day');

/** "R$ 5,00" for a fixed amount, "2%" for a rate. */
const fixedOrPercent = (v: { type: 'fixed'; amount: number } | { type: 'percent'; rate: number }) =>
  v.type === 'fixed' ? money(v.amount) : percent(v.rate);

function interestText(i: NonNullable<DueDateTermsRecord['interest']>): string {
  const each = `for each ${days(i.days)} late`;
  switch (i.type) {
    case 'amount_per_day':
      return `Interest: ${money(i.value)} ${each}.`;
    case 'percent_per_day':
      return `Interest: ${percent(i.value)} a day, ${each}.`;
    case 'percent_per_month':
      // A month is 30 calendar or 21 business days; a year 365 or 252 (docs/pix.md).
      return `Interest: ${percent(i.value)} a month (1/${i.days === 'business' ? 21 : 30} of it ${each}).`;
    case 'percent_per_year':
      return `Interest: ${percent(i.value)} a year (1/${i.days === 'business' ? 252 : 365} of it ${each}).`;
  }
}

function discountTexts(d: NonNullable<DueDateTermsRecord['discount']>): string[] {
  if ('tiers' in d) {
    const value = (v: number) => (d.type === 'fixed_until' ? money(v) : percent(v));
    return d.tiers.map((t) => `Discount: ${value(t.value)} when paid on or before ${t.until}.`);
  }
  const value = d.type === 'amount_per_day_early' ? money(d.value) : percent(d.value);
  return [`Discount: ${value} for each ${days(d.days)} paid before the effective due date.`];
}

function holidaysText(calendar: DueDateTermsRecord['calendar']): string {
  const where = [
    calendar?.state ? `state ${calendar.state}` : null,
    calendar?.municipality ? `municipality ${calendar.municipality} (IBGE code)` : null,
  ].filter(Boolean);
  return where.length === 0
    ? 'Holidays: Brazilian national holidays.'
    : `Holidays: Brazilian national holidays and those of ${where.join(', ')}.`;
}

/** Each rule of the terms as a sentence, in the order they apply; holidays last. */
export function dueDateRules(terms: DueDateTermsRecord): string[] {
  const rules: string[] = [];
  if (terms.rebate)
    rules.push(`Rebate: ${fixedOrPercent(terms.rebate)} off the amount, whatever the day paid.`);
  if (terms.discount) rules.push(...discountTexts(terms.discount));
  if (terms.fine)
    rules.push(
      `Fine: ${fixedOrPercent(terms.fine)}, once, when paid after the effective due date` +
        `${terms.fine.type === 'percent' ? ' (of the amount less any rebate)' : ''}.`,
    );
  if (terms.interest) rules.push(interestText(terms.interest));
  if (rules.length === 0)
    rules.push('No fine, interest, rebate or discount: the amount is the same every day.');
  rules.push(
    `Payable until ${terms.days_after_due} days after the effective due date (the next business day if that is not one).`,
  );
  rules.push(holidaysText(terms.calendar));
  return rules;
}

/**
 * The rows of what an amount is made of (original - rebate - discount + fine + interest): a zero
 * component is left out but for the original, so an immediate payment reads as its amount alone.
 */
export function componentRows(c: AmountDueComponents): Array<{ label: string; text: string }> {
  const rows = [{ label: 'Original amount', text: money(c.original) }];
  if (c.rebate) rows.push({ label: 'Rebate', text: `− ${money(c.rebate)}` });
  if (c.discount) rows.push({ label: 'Discount', text: `− ${money(c.discount)}` });
  if (c.fine) rows.push({ label: 'Fine', text: `+ ${money(c.fine)}` });
  if (c.interest) rows.push({ label: 'Interest', text: `+ ${money(c.interest)}` });
  return rows;
}
