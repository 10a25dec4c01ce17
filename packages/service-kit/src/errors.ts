import { safeParseRequest, zodIssuesToFieldErrors, type ErrorCode } from '@seller-api/contracts';
import type { z } from 'zod';

/** An error with a documented HTTP answer. Anything else that escapes a handler becomes a 500. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    message: string,
    readonly data?: Record<string, unknown>,
    readonly headers?: Record<string, string>,
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

export const badRequest = (message: string, data?: Record<string, string[]>) =>
  new HttpError(400, 'validation_error', message, data);
export const unauthorized = (
  message = 'Invalid credentials: provide a valid API key as Authorization: Bearer mk_<env>_<token>.',
) => new HttpError(401, 'unauthorized', message);
export const forbidden = (message = 'You do not have permission to perform this action.') =>
  new HttpError(403, 'forbidden', message);
export const notFound = (message = 'Not found.') => new HttpError(404, 'not_found', message);
export const conflict = (message: string) => new HttpError(409, 'conflict', message);
export const serviceUnavailable = (message = 'Service temporarily unavailable. Retry later.') =>
  new HttpError(503, 'service_unavailable', message);

export function validationError(error: z.ZodError, message = 'Invalid request.'): HttpError {
  return new HttpError(400, 'validation_error', message, zodIssuesToFieldErrors(error));
}

/**
 * Parse a body or path parameters with a contracts schema and our messages (contracts messages.ts); a
 * failure is a 400 that lists every violation.
 */
export function parseOrThrow<S extends z.ZodType>(schema: S, value: unknown, message?: string): z.output<S> {
  const result = safeParseRequest(schema, value);
  if (!result.success) throw validationError(result.error, message);
  return result.data;
}

/** parseOrThrow for a query string: an unknown key is named as a query parameter the route does not take. */
export function parseQueryOrThrow<S extends z.ZodType>(
  schema: S,
  value: unknown,
  message = 'Invalid query.',
): z.output<S> {
  const result = safeParseRequest(schema, value, 'query');
  if (!result.success) throw validationError(result.error, message);
  return result.data;
}
