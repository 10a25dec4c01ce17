import { MESSAGES, NON_FIELD_ERRORS } from '@seller-api/contracts';
import { badRequest } from '@seller-api/service-kit';
import { documentedRoute } from './routing';

/**
 * The part of strict input (docs/errors.md, "Strict input") that no schema can see: a body on a GET,
 * and a query parameter on a route that takes none. A route's own body and query schemas refuse
 * unknown fields themselves (contracts `strictInput`), together with its other rules. PSP
 * notifications are not checked: PSPs may add parameters, and their route is tolerant.
 *
 * `query` is the query string with its `?`, or ''.
 */
export function checkStrictInput(method: string, path: string, query: string, bodyLength: number): void {
  const route = documentedRoute(method, path);
  if (!route || !route.auth) return;
  const fields = new Map<string, string[]>();
  if (method === 'GET' && bodyLength > 0) fields.set(NON_FIELD_ERRORS, [MESSAGES.getBody]);
  if (!route.query && query.length > 1) {
    for (const name of new URLSearchParams(query.slice(1)).keys())
      fields.set(name, [MESSAGES.unknownQueryParameter]);
  }
  if (fields.size > 0)
    throw badRequest(
      method === 'GET' && bodyLength > 0 ? 'Invalid request.' : 'Invalid query.',
      Object.fromEntries(fields),
    );
}
