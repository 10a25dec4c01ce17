import { MESSAGES, NON_FIELD_ERRORS } from '@seller-api/contracts';
import { badRequest } from '@seller-api/service-kit';
import { documentedRoute } from './routing';

/**
 * The part of strict input (docs/errors.md, "Strict input") that no schema of a route can see: a body
 * on a GET, a query parameter on a route that takes none, and a field in the body of a route that takes
 * none (an action route: `{"amount": 500}` on a refund is not a partial refund). A route's own body and
 * query schemas refuse unknown fields themselves (contracts `strictInput`), together with its other
 * rules. Routes without a key are not checked: the PSP's notifications are tolerant (PSPs add
 * parameters and fields), and the documentation's take no input.
 *
 * `query` is the query string with its `?`, or ''; `body` is what `assertJson` parsed from a body of
 * `bodyBytes` bytes (undefined for none).
 */
export function checkStrictInput(
  method: string,
  path: string,
  query: string,
  bodyBytes: number,
  body: unknown,
): void {
  const route = documentedRoute(method, path);
  if (!route || !route.auth) return;
  const fields = new Map<string, string[]>();
  if (method === 'GET' && bodyBytes > 0) fields.set(NON_FIELD_ERRORS, [MESSAGES.getBody]);
  else if (!route.body && bodyBytes > 0) {
    if (body === null || typeof body !== 'object' || Array.isArray(body))
      fields.set(NON_FIELD_ERRORS, [MESSAGES.object]);
    else for (const name of Object.keys(body)) fields.set(name, [MESSAGES.unknownField]);
  }
  if (!route.query && query.length > 1) {
    for (const name of new URLSearchParams(query.slice(1)).keys())
      fields.set(name, [MESSAGES.unknownQueryParameter]);
  }
  if (fields.size > 0) throw badRequest('Invalid request.', Object.fromEntries(fields));
}
