import type { Response, Router } from 'express';
import {
  IDEMPOTENCY_KEY_HEADER,
  assertJson,
  checkIdempotencyKey,
  readBody,
  HttpError,
} from '@seller-api/service-kit';
import { authorize } from '../http/auth';
import { matchRoute, routeTemplate } from '../http/routing';
import { checkStrictInput } from '../http/strict-input';
import { callerOf, identityOf } from './caller';
import type { PanelContext } from './deps';
import { upstreamHeaders } from './upstream-headers';

/** The public API's own routes, with the session's identity instead of an API key's. */
export function mountProxyRoutes(api: Router, { deps, spendUserBudget }: PanelContext): void {
  api.use('/v1', async (req, res) => {
    const apiPath = req.path;
    const template = routeTemplate(req.method, apiPath);
    if (template) res.locals.routeTemplate = `/panel/api/v1${template}`;
    const rule = matchRoute(apiPath);
    if (!rule || rule.role === null || !['GET', 'POST', 'PATCH', 'DELETE'].includes(req.method)) {
      throw new HttpError(404, 'not_found', `Route ${req.method} ${apiPath} not found.`);
    }
    const caller = callerOf(res);
    const identity = identityOf(caller);
    authorize({ ...identity, suspended: caller.user.seller_status === 'SUSPENDED' }, rule);
    await spendUserBudget(caller, res);
    const body = await readBody(req);
    const parsed = assertJson(body);
    const query = req.originalUrl.includes('?') ? req.originalUrl.slice(req.originalUrl.indexOf('?')) : '';
    checkStrictInput(req.method, apiPath, query, body.length, parsed);
    const forward = () =>
      deps.upstreams.send(
        rule.upstream,
        req.method,
        apiPath + query,
        upstreamHeaders(deps, req, rule.upstream, identity, req.method, apiPath + query, body),
        body,
      );
    // A retried POST (the page sends a key per action) is answered once, as on the public API: the
    // service that makes the change keeps the key (docs/idempotency.md).
    const idempotencyKey = req.headers[IDEMPOTENCY_KEY_HEADER];
    if (req.method === 'POST' && typeof idempotencyKey === 'string') checkIdempotencyKey(idempotencyKey);
    const answer = await forward();
    res.writeHead(answer.status, { ...answer.headers, ...headersOf(res) });
    res.end(answer.body);
  });
}

function headersOf(res: Response): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(res.getHeaders())) {
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : String(value);
  }
  return out;
}
