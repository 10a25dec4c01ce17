import { z } from 'zod';
import { MESSAGES } from './messages';

/**
 * Schema-level message for a bad value that leaves a missing one to the parse's error map, so a
 * missing field still reads "required" (see `safeParseRequest`) rather than "must be a UUID".
 */
export function unlessMissing(message: string): z.core.$ZodErrorMap {
  return (issue) => (issue.input === undefined ? undefined : message);
}

/**
 * Any 8-4-4-4-12 hex id, as PostgreSQL's `uuid` type accepts: a well-formed id that is not RFC 9562
 * (version/variant bits) must reach the lookup and get a 404, not a 400.
 */
export const uuid = z.guid({ error: unlessMissing(MESSAGES.uuid) });

/** Money in minor units (cents), never negative: every `*_amount` is integer cents (docs/limits.md). */
export const cents = z.int().min(0);

/** Largest amount the API accepts or shows: gross is 1 to 999999999999 cents (docs/limits.md). */
export const MAX_AMOUNT = 999_999_999_999;

/**
 * Largest count a request may carry into a PostgreSQL `int` column (an item's quantity): every integer
 * field is bounded by its column, so a bigger one is a 400 on the field, never a 500 (docs/limits.md).
 */
export const MAX_INT_COLUMN = 2_147_483_647;

/** Output datetime: ISO 8601 UTC with milliseconds and `Z`, exactly what `Date#toISOString()` gives. */
export const datetime = z.iso.datetime({ precision: 3 });

const EARLIEST_INPUT = Date.parse('0001-01-02T00:00:00Z');
const LATEST_INPUT = Date.parse('9999-12-31T00:00:00Z');

/**
 * Whether an input instant is one PostgreSQL's `timestamptz` and a JavaScript Date both hold the same:
 * years 1 to 9999 (the ISO form allows year 0000, which PostgreSQL has not), so that no date a client
 * writes reaches the database as a 500 (nothing a client sends may cause a 500).
 */
export function withinDateRange(value: string): boolean {
  const time = Date.parse(value);
  // Not a date at all is the format check's to say.
  return Number.isNaN(time) || (time >= EARLIEST_INPUT && time <= LATEST_INPUT);
}
const DATE_RANGE_MESSAGE = MESSAGES.dateRange;

/** Input datetime: ISO 8601 with `Z` or an offset, any precision, since clients write it by hand. */
export const datetimeInput = z.iso.datetime({ offset: true }).refine(withinDateRange, DATE_RANGE_MESSAGE);

/**
 * Only web links: URLs here are fetched by the platform (webhooks) or shown to people (images), so
 * `javascript:`, `file:` and the like have no place. Whether `live` needs https is a domain rule.
 */
export const httpUrl = z.url({ protocol: /^https?$/, error: unlessMissing(MESSAGES.httpUrl) });

/** Calendar date `YYYY-MM-DD` (docs/api.md, "Conventions"). */
export const date = z.iso.date();

/** Input that may be a date alone or a datetime (filters, expiration_date). */
export const dateOrDatetimeInput = z
  .string()
  .refine((value) => date.safeParse(value).success || datetimeInput.safeParse(value).success, {
    error: MESSAGES.dateOrDatetime,
  })
  .refine(withinDateRange, DATE_RANGE_MESSAGE)
  .meta({ description: 'ISO 8601 date (YYYY-MM-DD) or datetime' });

export const Environment = z.enum(['test', 'live']);
export type Environment = z.infer<typeof Environment>;

export const Role = z.enum(['seller', 'operator']);
export type Role = z.infer<typeof Role>;

/** CPF or CNPJ, as `customer.tax_id_type` spells it (docs/orders.md). */
export const TaxIdType = z.enum(['CPF', 'CNPJ']);
export type TaxIdType = z.infer<typeof TaxIdType>;

export const LIST_LIMIT_DEFAULT = 20;
export const LIST_LIMIT_MAX = 100;

/** Query of every list route (docs/limits.md); values arrive as strings, hence the coercion. */
export const ListQuery = z.object({
  limit: z.coerce.number().int().min(1).max(LIST_LIMIT_MAX).default(LIST_LIMIT_DEFAULT),
  cursor: z.string().min(1).optional(),
});
export type ListQuery = z.infer<typeof ListQuery>;

/** `data` of every list response: newest first, `next_cursor` null on the last page. */
export function listResponse<T extends z.ZodType>(item: T) {
  return z.object({ results: z.array(item), next_cursor: z.string().nullable() });
}
export type ListResponse<T> = { results: T[]; next_cursor: string | null };

/** Body of a success without content, e.g. tracking update or an action route. */
export const MessageResponse = z.object({ message: z.string() });
export type MessageResponse = z.infer<typeof MessageResponse>;
/** Alias in the lower-case helper style of `dataResponse`. */
export const messageResponse = MessageResponse;

/** Body of a success with content: `{message, data}` (docs/api.md, "Answers"). */
export function dataResponse<T extends z.ZodType>(data: T) {
  return z.object({ message: z.string(), data });
}
export type DataResponse<T> = { message: string; data: T };

/** Kinds of PIX key a withdrawal pays to (docs/finance-api.md). */
export const PixKeyType = z.enum(['email', 'cpf', 'phone', 'random']);
export type PixKeyType = z.infer<typeof PixKeyType>;
