import { MESSAGES } from '@seller-api/contracts';

// Brazil has had no daylight saving time since 2019: São Paulo is UTC-03:00 all year.
const SAO_PAULO_OFFSET = '-03:00';
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/** A date alone means the end of that day in America/Sao_Paulo; a datetime is taken as written. */
export function endOfDayOrInstant(value: string): Date {
  return new Date(DATE_ONLY.test(value) ? `${value}T23:59:59.999${SAO_PAULO_OFFSET}` : value);
}

/** A date alone means the start of that day in America/Sao_Paulo. */
export function startOfDayOrInstant(value: string): Date {
  return new Date(DATE_ONLY.test(value) ? `${value}T00:00:00.000${SAO_PAULO_OFFSET}` : value);
}

export const DAY_MS = 24 * 60 * 60 * 1000;
export const DEFAULT_EXPIRATION_MS = DAY_MS;
export const MAX_EXPIRATION_MS = 30 * DAY_MS;

/** `payment.expiration_date` (docs/orders.md): in the future, at most 30 days away, default 24 hours. */
export function resolveExpiration(
  value: string | undefined,
  now: Date,
): { expiresAt: Date } | { error: string } {
  if (value === undefined) return { expiresAt: new Date(now.getTime() + DEFAULT_EXPIRATION_MS) };
  const expiresAt = endOfDayOrInstant(value);
  if (Number.isNaN(expiresAt.getTime())) return { error: MESSAGES.dateOrDatetime };
  if (expiresAt.getTime() <= now.getTime()) return { error: MESSAGES.expirationPast };
  if (expiresAt.getTime() - now.getTime() > MAX_EXPIRATION_MS) return { error: MESSAGES.expirationTooFar };
  return { expiresAt };
}
