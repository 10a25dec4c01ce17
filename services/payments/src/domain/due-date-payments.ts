import {
  mostOwed,
  type AmountDueComponents,
  type AmountPaid,
  type DueDateTermsRecord,
} from '@seller-api/contracts';
import {
  addDays,
  amountDue,
  percentOf,
  rebateOf,
  brazilCalendar,
  dayNumber,
  lastPayableDate,
  todayInSaoPaulo,
  type AmountDue,
  type IsoDate,
} from '@seller-api/due-date';

/*
 * What a payment of a charge is worth (docs/pix.md "Due-date charges"): a due-date charge owes what
 * @seller-api/due-date's amountDue gives for the payment's day in São Paulo, the very function orders
 * quotes with, over the same stored terms; an immediate charge owes its amount. Pure: the stores
 * (db/psp-payments.ts) lock, decide with these and write.
 */

/** The holidays a charge's terms count: national, refined by the terms' place when they give one. */
export const calendarOf = (terms: DueDateTermsRecord) => brazilCalendar(terms.calendar ?? {});

/** The charge's original amount: its gross amount until paid, then the `original` of what was paid. */
export const originalOf = (t: {
  grossAmount: number;
  amountComponents: AmountDueComponents | null;
}): number => t.amountComponents?.original ?? t.grossAmount;

/** What a due-date charge of `original` cents owes on `day`. */
export function owedOn(original: number, terms: DueDateTermsRecord, day: IsoDate): AmountDue {
  return amountDue(original, terms, day, calendarOf(terms));
}

/** The last day a due-date charge can be paid. */
export const lastPayableOf = (terms: DueDateTermsRecord): IsoDate =>
  lastPayableDate(terms, calendarOf(terms));

/**
 * Why terms cannot price a charge of `original` cents (a place without a calendar, a rebate not below
 * the amount...), or null when they can: checked when the charge is made, so a payment never fails on
 * them.
 */
export function dueDateTermsProblem(original: number, terms: DueDateTermsRecord): string | null {
  try {
    owedOn(original, terms, terms.due_date);
    return null;
  } catch (err) {
    if (err instanceof RangeError) return err.message;
    throw err;
  }
}

/** An immediate charge's payment: its amount, nothing else. */
export const immediateComponents = (amount: number): AmountDueComponents => ({
  original: amount,
  rebate: 0,
  discount: 0,
  fine: 0,
  interest: 0,
});

/** original - rebate - discount + fine + interest. */
export const totalOf = (c: AmountDueComponents): number =>
  c.original - c.rebate - c.discount + c.fine + c.interest;

/**
 * What a payment of `paid` cents on a payable day is made of: the PSP's components when it sent them
 * and they add up to what it paid; else ours for that day, the difference (the PSP priced the day
 * otherwise: its amount wins) put on the day's variable part: interest when late, discount when on
 * time. A part that would go below zero stays at zero and the rest goes to the other side, so every
 * part is non-negative and the total is always `paid`.
 */
export function paidComponents(
  paid: number,
  owed: Extract<AmountDue, { payable: true }>,
  notified: AmountDueComponents | null,
): AmountDueComponents {
  // The PSP's parts only when they are of this charge: its original and its rebate, which no day
  // changes, and adding up to what it took.
  const ours = owed.components;
  if (
    notified &&
    totalOf(notified) === paid &&
    Object.values(notified).every((v) => v >= 0) &&
    notified.original === ours.original &&
    notified.rebate === ours.rebate
  )
    return notified;
  const c = { ...ours };
  const difference = paid - owed.final;
  if (owed.overdue) {
    c.interest += difference;
    if (c.interest < 0) {
      c.discount -= c.interest;
      c.interest = 0;
    }
  } else {
    c.discount -= difference;
    if (c.discount < 0) {
      c.interest -= c.discount;
      c.discount = 0;
    }
  }
  return c;
}

/**
 * The least and the most a PSP may take for a due-date charge of `original` cents, whatever its
 * calendar (docs/pix.md, "Paying a due-date charge"): the PSP's amount wins only between them. At
 * least the base less the largest discount the terms can give (a percent taken of the original, the
 * larger reading; a per-day discount counted over the days from the charge's creation to a week past
 * its due date, as a payer's municipality may move it), and at least 1 cent; at most the contracts' bound of what it can come to on its last payable date
 * and a week more. Outside, the payment is not applied: kept for an operator, as an immediate charge's
 * wrong amount is.
 */
export function dueDateAmountBounds(
  original: number,
  terms: DueDateTermsRecord,
  createdDay: IsoDate,
): { least: number; most: number } {
  const base = original - rebateOf(original, terms.rebate);
  const discount = terms.discount;
  // Percents of the original, not of the base: a PSP may read API Pix's rule so, and takes less then.
  let largest = 0;
  if (discount && 'tiers' in discount) {
    const first = Math.max(0, ...discount.tiers.map((tier) => tier.value));
    largest = discount.type === 'fixed_until' ? first : percentOf(original, first);
  } else if (discount) {
    const days = Math.max(0, dayNumber(addDays(terms.due_date, 7)) - dayNumber(createdDay));
    largest =
      discount.type === 'amount_per_day_early'
        ? discount.value * days
        : percentOf(original, Math.min(discount.value * days, 10_000));
  }
  return { least: Math.max(1, base - largest), most: mostOwed(terms, original) };
}

/** The day in São Paulo of an instant (a payment's `horario`). */
export const dayOf = (at: Date): IsoDate => todayInSaoPaulo(at);

/**
 * Why the sandbox refuses to pay `amount` (null: what is owed) on `day`, as the PSP would, or what it
 * pays. A due-date charge pays on any day from the day it was made to its last payable date, exactly
 * what is owed that day; an immediate one only today, exactly its amount.
 */
export function sandboxPayment(
  charge: {
    grossAmount: number;
    amountComponents: AmountDueComponents | null;
    dueDateTerms: DueDateTermsRecord | null;
    createdAt: Date;
  },
  ask: { date: IsoDate | undefined; amount: number | undefined },
  now: Date,
):
  | { ok: true; amount: number; day: IsoDate; components: AmountDueComponents }
  | { ok: false; message: string } {
  const today = dayOf(now);
  const day = ask.date ?? today;
  const terms = charge.dueDateTerms;
  const original = originalOf(charge);
  if (!terms) {
    if (day !== today)
      return {
        ok: false,
        message: `Only a due-date charge can be paid on another day: this one is payable today (${today}) only.`,
      };
    if (ask.amount !== undefined && ask.amount !== original)
      return { ok: false, message: refused(ask.amount, original, day) };
    return { ok: true, amount: original, day, components: immediateComponents(original) };
  }
  const created = dayOf(charge.createdAt);
  if (dayNumber(day) < dayNumber(created))
    return { ok: false, message: `The charge is not payable on ${day}: it was made on ${created}.` };
  const owed = owedOn(original, terms, day);
  if (!owed.payable)
    return {
      ok: false,
      message: `The charge is not payable on ${day}: its last payable date is ${owed.last_payable_date}.`,
    };
  if (ask.amount !== undefined && ask.amount !== owed.final)
    return { ok: false, message: refused(ask.amount, owed.final, day) };
  return { ok: true, amount: owed.final, day, components: owed.components };
}

const refused = (asked: number, owed: number, day: IsoDate) =>
  `The PSP refuses ${asked} cents: ${owed} are owed on ${day}.`;

/** What a paid charge paid (ChargeState, the order detail): null before payment. */
export function amountPaidOf(t: {
  grossAmount: number;
  approvedAt: Date | null;
  amountComponents: AmountDueComponents | null;
  paidOn: string | null;
}): AmountPaid | null {
  if (t.approvedAt === null) return null;
  return {
    amount: t.grossAmount,
    // A charge paid before these were kept (an earlier release) was an immediate one.
    date: t.paidOn ?? dayOf(t.approvedAt),
    components: t.amountComponents ?? immediateComponents(t.grossAmount),
  };
}

/**
 * A PSP's (or the sandbox's) payment of a PENDING due-date charge, priced for its day: `late` when the
 * day is after the last payable date (refunded, as any payment the charge can no longer take); else
 * what it paid, with ours for that day so a difference can be logged and counted (the PSP's amount
 * wins: it is the money that moved).
 */
export function priceDueDatePayment(
  charge: {
    grossAmount: number;
    amountComponents: AmountDueComponents | null;
    dueDateTerms: DueDateTermsRecord;
  },
  payment: { amountCents: number; paidAt: Date; components?: AmountDueComponents | null; day?: IsoDate },
):
  | { payable: false; day: IsoDate; lastPayableDate: IsoDate }
  | { payable: true; day: IsoDate; ours: number; components: AmountDueComponents } {
  const day = payment.day ?? dayOf(payment.paidAt);
  const owed = owedOn(originalOf(charge), charge.dueDateTerms, day);
  if (!owed.payable) return { payable: false, day, lastPayableDate: owed.last_payable_date };
  return {
    payable: true,
    day,
    ours: owed.final,
    components: paidComponents(payment.amountCents, owed, payment.components ?? null),
  };
}
