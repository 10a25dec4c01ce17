import {
  message,
  type AmountDueDetail,
  type DueDateTermsRecord,
  type OrderDueDateDetail,
} from '@seller-api/contracts';
import {
  amountDue,
  brazilCalendar,
  effectiveDueDate,
  lastPayableDate,
  payableUntil,
  todayInSaoPaulo,
  type BusinessCalendar,
} from '@seller-api/due-date';
import { badRequest, conflict } from '@seller-api/service-kit';
import type { OrderRow } from '../db/entities';

// The order's side of due-date charges (docs/pix.md, "Due-date charges"): the dates its terms give,
// the detail's `payment.due_date`, and what is owed on a day. Payments decides what a payment must be
// with the same @seller-api/due-date functions over the same stored terms, so the quote and the money
// never disagree.

/** The holidays of the terms' place (national when none); the place was checked at create. */
export function calendarOf(terms: Pick<DueDateTermsRecord, 'calendar'>): BusinessCalendar {
  return brazilCalendar(terms.calendar ?? {});
}

/** The dates a due-date charge's terms give, and when it stops being payable (its expires_at). */
export function dueDatesOf(terms: DueDateTermsRecord): {
  effectiveDueDate: string;
  lastPayableDate: string;
  expiresAt: Date;
} {
  const calendar = calendarOf(terms);
  const last = lastPayableDate(terms, calendar);
  return {
    effectiveDueDate: effectiveDueDate(terms, calendar),
    lastPayableDate: last,
    expiresAt: payableUntil(last),
  };
}

/** The due-date columns of an order. */
export type DueDateOrder = Pick<OrderRow, 'status' | 'dueDateTerms' | 'effectiveDueDate' | 'lastPayableDate'>;

/** Overdue: still PENDING, and today in São Paulo is after the effective due date. */
export function isOverdue(order: DueDateOrder, today: string): boolean {
  return order.status === 'PENDING' && order.effectiveDueDate !== null && today > order.effectiveDueDate;
}

/**
 * `payment.due_date` of the detail and `order.due_date` of order events: the terms and their dates,
 * overdue computed at `now`; null for an immediate charge.
 */
export function orderDueDate(order: DueDateOrder, now: Date = new Date()): OrderDueDateDetail | null {
  const { dueDateTerms: terms, effectiveDueDate: effective, lastPayableDate: last } = order;
  if (!terms || !effective || !last) return null;
  return {
    ...terms,
    effective_due_date: effective,
    last_payable_date: last,
    overdue: isOverdue(order, todayInSaoPaulo(now)),
  };
}

/**
 * `GET /sellers/orders/{uuid}/amount-due/`: what the order's due-date charge costs on `date` (default
 * today in São Paulo). 409 for an immediate charge; 400 for a day before the order was created. A day
 * after the last payable date answers `payable: false` without counting anything (amountDue stops at
 * the dates), and so does an order no longer PENDING (paid, cancelled, expired...): nothing can be paid
 * on it, whatever the terms would say.
 */
export function amountDueOf(
  order: DueDateOrder & Pick<OrderRow, 'grossAmount' | 'createdAt'>,
  date: string | undefined,
  now: Date = new Date(),
): AmountDueDetail {
  const terms = order.dueDateTerms;
  if (!terms || !order.lastPayableDate)
    throw conflict('This order has an immediate charge: only a due-date charge has an amount due by date.');
  const day = date ?? todayInSaoPaulo(now);
  const first = todayInSaoPaulo(order.createdAt);
  if (day < first) throw badRequest('Invalid query.', { date: [message('minNumber', { minimum: first })] });
  const quote = amountDue(order.grossAmount, terms, day, calendarOf(terms));
  if (order.status !== 'PENDING') return { ...quote, payable: false, components: null, final: null };
  return quote;
}
