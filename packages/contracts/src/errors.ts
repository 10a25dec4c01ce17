import { z } from 'zod';
import { MESSAGES, requestErrorMap } from './messages';

/** Machine-readable `code` of every error body (docs/errors.md), plus the gateway's 502/504. */
export const ERROR_CODES = [
  'validation_error',
  'invalid_json',
  'unauthorized',
  'forbidden',
  'withdrawals_suspended',
  'not_found',
  'conflict',
  'insufficient_balance',
  'idempotency_conflict',
  'limit_reached',
  'payload_too_large',
  'unsupported_media_type',
  'rate_limited',
  'service_unavailable',
  'internal_error',
  'bad_gateway',
  'gateway_timeout',
] as const;
export const ErrorCode = z.enum(ERROR_CODES);
export type ErrorCode = z.infer<typeof ErrorCode>;

/** HTTP status that goes with each code, so every service answers the same pair. */
export const ERROR_STATUS: { readonly [K in ErrorCode]: number } = {
  validation_error: 400,
  invalid_json: 400,
  unauthorized: 401,
  forbidden: 403,
  // A seller whose withdrawals an operator suspended asks for one (docs/finance.md, "Payout controls").
  withdrawals_suspended: 403,
  not_found: 404,
  conflict: 409,
  // A seller's refund the available balance does not cover (docs/finance.md, "Refunds").
  insufficient_balance: 409,
  idempotency_conflict: 409,
  // An account limit (50 webhooks per seller and environment, docs/limits.md) is reached.
  limit_reached: 409,
  payload_too_large: 413,
  // A body in an encoding or content type the route does not take.
  unsupported_media_type: 415,
  rate_limited: 429,
  internal_error: 500,
  bad_gateway: 502,
  service_unavailable: 503,
  gateway_timeout: 504,
};

/** Every error body; `request_id` is always set on 5xx (docs/errors.md). */
export const ErrorBody = z.object({
  message: z.string(),
  code: ErrorCode,
  request_id: z.string().optional(),
});
export type ErrorBody = z.infer<typeof ErrorBody>;

/** Key under which issues about the whole body (no field path) are reported (docs/errors.md). */
export const NON_FIELD_ERRORS = 'non_field_errors';

/** 400 body: `data` maps a dotted field path (`customer.email`, `items.0.quantity`) to its messages. */
export const ValidationErrorBody = z.object({
  message: z.string(),
  code: z.literal('validation_error'),
  data: z.record(z.string(), z.array(z.string())),
  request_id: z.string().optional(),
});
export type ValidationErrorBody = z.infer<typeof ValidationErrorBody>;

/**
 * Maps EVERY issue (not only the first) to its dotted path; root issues go to `non_field_errors`. An
 * object's unknown keys (one zod issue) become one entry per key, under the key's own path
 * (`payment.amount`), so each is named where it was sent.
 */
export function zodIssuesToFieldErrors(error: z.ZodError): Record<string, string[]> {
  // A Map, then fromEntries: a path such as `__proto__` becomes a plain own key, never the prototype.
  const fields = new Map<string, string[]>();
  const add = (path: readonly PropertyKey[], text: string) => {
    const key = path.length === 0 ? NON_FIELD_ERRORS : path.map((part) => String(part)).join('.');
    const messages = fields.get(key) ?? [];
    if (!messages.includes(text)) messages.push(text);
    fields.set(key, messages);
  };
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys')
      for (const key of issue.keys) add([...issue.path, key], issue.message);
    else add(issue.path, issue.message);
  }
  return Object.fromEntries(fields);
}

export const VALIDATION_ERROR_MESSAGE = 'Validation error';

/** Builds the 400 body from a failed parse, so every service words it the same way. */
export function validationErrorBody(
  error: z.ZodError,
  message: string = VALIDATION_ERROR_MESSAGE,
  requestId?: string,
): ValidationErrorBody {
  const body: ValidationErrorBody = {
    message,
    code: 'validation_error',
    data: zodIssuesToFieldErrors(error),
  };
  if (requestId !== undefined) body.request_id = requestId;
  return body;
}

export const REQUIRED_MESSAGE = MESSAGES.required;

/** The parse-level error map of a query: an unknown key is a query parameter the route does not take. */
const queryErrorMap: z.core.$ZodErrorMap = (issue) =>
  issue.code === 'unrecognized_keys' ? MESSAGES.unknownQueryParameter : requestErrorMap(issue);

/**
 * `safeParse` with our messages (messages.ts): use it on every body, query and path parameter, so
 * a rule reads the same on every route.
 */
export function safeParseRequest<T extends z.ZodType>(
  schema: T,
  data: unknown,
  source: 'body' | 'query' | 'params' = 'body',
): z.ZodSafeParseResult<z.output<T>> {
  return schema.safeParse(data, { error: source === 'query' ? queryErrorMap : requestErrorMap });
}
