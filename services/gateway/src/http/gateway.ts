import type { Identity } from '@seller-api/contracts';
import { HttpError, signIdentity, unauthorized, type Logger } from '@seller-api/service-kit';
import { environmentOfKey, hashApiKey, type KeyHolder } from '../domain/api-keys';
import type { KeyHolders } from '../domain/key-holders';
import type { Request, Response } from 'express';
import { authorize, bearerToken } from './auth';
import { assertJson, readBody } from './body';
import { forwardIdempotently, idempotencyOwner, type IdempotencyStore } from './idempotency';
import { rateLimitHeaders, tooManyRequests, type RateLimiter, type RateLimitResult } from './rate-limit';
import { hostIs, matchRoute, routeTemplate } from './routing';
import { UpstreamClient, hopHeaders, type UpstreamResponse } from './proxy';

export interface GatewayDeps {
  keyHolders: KeyHolders;
  keyLimiter: RateLimiter;
  ipLimiter: RateLimiter;
  idempotency: IdempotencyStore;
  upstreams: UpstreamClient;
  internalSecret: string;
  logger: Logger;
  /** PSP_NOTIFICATION_HOST: the only Host the public /psp/ routes answer on (unset: any). */
  pspNotificationHost?: string;
}

/**
 * The public API: match the route, authenticate the key, spend its rate budget, check the route's
 * rules, read and check the body, apply Idempotency-Key, and forward with a signed identity.
 */
export function gatewayHandler(deps: GatewayDeps) {
  return async (req: Request, res: Response): Promise<void> => {
    const path = req.path;
    // Metrics and spans label a request by its documented route; anything else is `unmatched`.
    const template = routeTemplate(req.method, path);
    if (template) res.locals.routeTemplate = `/api/v1${template}`;
    const rule = matchRoute(path);
    // The PSP routes exist only on the PSP's own host (its Ingress checks the client certificate):
    // elsewhere they answer exactly like a route that does not exist.
    if (
      !rule ||
      (rule.prefix === '/psp/' &&
        deps.pspNotificationHost !== undefined &&
        !hostIs(req.headers.host, deps.pspNotificationHost))
    )
      throw new HttpError(404, 'not_found', `Route ${req.method} /api/v1${path} not found.`);

    let identity: Identity | null = null;
    if (rule.role) {
      const { holder, budget } = await authenticateLimited(deps, req);
      res.set(rateLimitHeaders(budget));
      if (!budget.allowed) throw tooManyRequests(budget);
      authorize({ ...holder.identity, suspended: holder.sellerStatus === 'SUSPENDED' }, rule);
      identity = holder.identity;
    }

    const body = await readBody(req);
    assertJson(body);

    const query = req.originalUrl.includes('?') ? req.originalUrl.slice(req.originalUrl.indexOf('?')) : '';
    const headers = forwardHeaders(deps, req, identity, path, body);
    const idempotencyKey = req.headers['idempotency-key'];
    if (req.method === 'POST' && identity && typeof idempotencyKey === 'string') {
      const request = {
        owner: idempotencyOwner(identity),
        method: req.method,
        path,
        key: idempotencyKey,
        body,
      };
      send(
        res,
        await forwardIdempotently(deps.idempotency, request, () =>
          deps.upstreams.send(rule.upstream, req.method, path + query, headers, body),
        ),
      );
      return;
    }
    send(res, await deps.upstreams.send(rule.upstream, req.method, path + query, headers, body));
  };
}

/**
 * The key's holder and its rate budget, or 401 for a missing, malformed, unknown or revoked key.
 * Failed authentications spend the caller's IP budget, so keys cannot be guessed at speed.
 */
async function authenticateLimited(
  deps: GatewayDeps,
  req: Request,
): Promise<{ holder: KeyHolder; budget: RateLimitResult }> {
  const ip = req.ip ?? 'unknown';
  const blocked = deps.ipLimiter.isBlocked(ip);
  if (blocked) throw tooManyRequests(blocked);
  const token = bearerToken(req.headers);
  const environment = token ? environmentOfKey(token) : null;
  if (token && environment) {
    const hash = hashApiKey(token);
    // Asked in the same tick, the budget and the key version share one Redis round trip; the budget
    // belongs to the key itself (its hash), so it does not wait for the holder.
    const [budget, holder] = await Promise.all([
      deps.keyLimiter.consume(hash),
      deps.keyHolders.find(hash, environment),
    ]);
    if (holder) return { holder, budget };
  }
  const budget = await deps.ipLimiter.consume(ip);
  if (!budget.allowed) throw tooManyRequests(budget);
  if (token) deps.logger.info({ ip }, 'rejected API key');
  throw unauthorized();
}

function forwardHeaders(
  deps: GatewayDeps,
  req: Request,
  identity: Identity | null,
  path: string,
  body: Buffer,
) {
  const extra = hopHeaders(req, body.length > 0);
  if (identity) Object.assign(extra, signIdentity(deps.internalSecret, identity, req.method, path));
  // A public route authenticates itself (a PSP's secret): its credentials go through untouched.
  else if (typeof req.headers.authorization === 'string') extra.authorization = req.headers.authorization;
  return UpstreamClient.forwardHeaders(req.headers, extra);
}

function send(res: Response, answer: UpstreamResponse): void {
  // One writeHead with every header: the headers set earlier (request id, rate limit) are kept.
  res.writeHead(answer.status, answer.headers);
  res.end(answer.body);
}
