import type { Identity } from '@seller-api/contracts';
import {
  HttpError,
  IDEMPOTENCY_KEY_HEADER,
  assertJson,
  checkIdempotencyKey,
  pspClientHeaders,
  readBody,
  signIdentity,
  unauthorized,
  type CallKey,
  type Logger,
} from '@seller-api/service-kit';
import { environmentOfKey, hashApiKey, type KeyHolder } from '../domain/api-keys';
import type { KeyHolders } from '../db/key-holders';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { authorize, bearerToken } from './auth';
import { rateLimitHeaders, tooManyRequests, type RateLimiter, type RateLimitResult } from './rate-limit';
import { pspHostOf, verifiedPspClient, type PspClientCheck } from './psp-client';
import { matchRoute, type Upstream } from './routing';
import { checkStrictInput } from './strict-input';
import type { TurnBatch } from './turn-batch';
import { UpstreamClient, hopHeaders, type UpstreamResponse } from './proxy';

export interface GatewayDeps {
  keyHolders: KeyHolders;
  keyLimiter: RateLimiter;
  ipLimiter: RateLimiter;
  /** PSP notifications per client address (PSP_RATE_LIMIT_PER_MINUTE): every one is counted. */
  pspLimiter: RateLimiter;
  /** PSP_NOTIFICATION_MAX_BYTES: the body cap of the PSP routes (the others keep the API's 1 MiB). */
  pspMaxBytes: number;
  /** Where the requests of one event-loop turn ask Redis together. */
  redisTurn: TurnBatch;
  upstreams: UpstreamClient;
  /** The gateway's key for each service, to sign what is sent to it. */
  callKeys: Record<Upstream, CallKey>;
  logger: Logger;
  /**
   * PSP_NOTIFICATION_HOST (the only Hosts the public /psp/ routes answer on; unset: any) and
   * PSP_INGRESS_ADDRESSES: where a PSP's client certificate, as the ingress verified it, is believed.
   */
  pspClients: PspClientCheck;
}

/** One public API request, as the front (api.ts) read it. */
export interface ApiRequest {
  req: IncomingMessage;
  method: string;
  /** The path after `/api/v1`, without the query. */
  path: string;
  /** The query string with its `?`, or ''. */
  query: string;
  requestId: string;
  /** The client's address and protocol, from X-Forwarded-* when the peer is a trusted proxy. */
  ip: string;
  protocol: string;
}

/**
 * The public API: match the route, authenticate the key, spend its rate budget, check the route's
 * rules, read and check the body and the Idempotency-Key, and forward with a signed identity.
 */
export function gatewayHandler(deps: GatewayDeps) {
  return async (call: ApiRequest, res: ServerResponse): Promise<void> => {
    const { req, method, path } = call;
    const rule = matchRoute(path);
    // The PSP routes exist only on the PSPs' own hosts (their Ingresses check the client certificate):
    // elsewhere they answer exactly like a route that does not exist.
    const hosts = deps.pspClients.hosts;
    if (!rule || (rule.prefix === '/psp/' && hosts !== undefined && pspHostOf(req, hosts) === null))
      throw new HttpError(404, 'not_found', `Route ${method} /api/v1${path} not found.`);

    let identity: Identity | null = null;
    const psp = rule.prefix === '/psp/';
    if (rule.role) {
      const { holder, budget } = await authenticateLimited(deps, call);
      setHeaders(res, rateLimitHeaders(budget));
      if (!budget.allowed) throw tooManyRequests(budget);
      authorize({ ...holder.identity, suspended: holder.sellerStatus === 'SUSPENDED' }, rule);
      identity = holder.identity;
    } else if (psp) await spendPspBudget(deps, call.ip);

    // Before the body is read: a flood of notifications from one address costs no buffering.
    const body = await readBody(req, psp ? deps.pspMaxBytes : undefined);
    checkStrictInput(method, path, call.query, body.length, assertJson(body));

    // Idempotency-Key: checked here, kept by the service that makes the change (docs/idempotency.md).
    const idempotencyKey = req.headers[IDEMPOTENCY_KEY_HEADER];
    if (method === 'POST' && typeof idempotencyKey === 'string') checkIdempotencyKey(idempotencyKey);
    const headers = forwardHeaders(deps, call, rule.upstream, identity, body);
    send(res, await deps.upstreams.send(rule.upstream, method, path + call.query, headers, body));
  };
}

/**
 * The key's holder and its rate budget, or 401 for a missing, malformed, unknown or revoked key.
 * Failed authentications spend the caller's IP budget, so keys cannot be guessed at speed; the key is
 * checked before that budget, which counts failures only and never blocks a valid key (a client behind
 * an address shared with a guesser keeps working). An address over its budget gets 429 for every
 * failure.
 */
async function authenticateLimited(
  deps: GatewayDeps,
  { req, ip }: ApiRequest,
): Promise<{ holder: KeyHolder; budget: RateLimitResult }> {
  const token = bearerToken(req.headers);
  const environment = token ? environmentOfKey(token) : null;
  if (token && environment) {
    const hash = hashApiKey(token);
    // Asked in the same tick, the budget and the key version share one Redis round trip (with those of
    // the other requests of this turn); the budget belongs to the key itself (its hash), so it does
    // not wait for the holder.
    const [budget, holder] = await deps.redisTurn.run(() =>
      Promise.all([deps.keyLimiter.consume(hash), deps.keyHolders.find(hash, environment)]),
    );
    if (holder) return { holder, budget };
  }
  // Known blocked by this replica: no Redis call for a failure that would be refused anyway.
  const blocked = deps.ipLimiter.isBlocked(ip);
  if (blocked) throw tooManyRequests(blocked);
  const budget = await deps.ipLimiter.consume(ip);
  if (!budget.allowed) throw tooManyRequests(budget);
  if (token) deps.logger.info({ ip }, 'rejected API key');
  throw unauthorized();
}

/**
 * A PSP notification spends its client address's budget (the address as the trusted proxies state it):
 * the PSP routes have no key to count by, and each notification costs payments a signature check and
 * its database work. Known blocked by this replica: 429 without asking Redis. Redis down: each replica
 * keeps the budget in memory, as for the keys (http/rate-limit.ts).
 */
async function spendPspBudget(deps: GatewayDeps, ip: string): Promise<void> {
  const blocked = deps.pspLimiter.isBlocked(ip);
  if (blocked) throw tooManyRequests(blocked);
  const budget = await deps.redisTurn.run(() => deps.pspLimiter.consume(ip));
  if (!budget.allowed) throw tooManyRequests(budget);
}

function forwardHeaders(
  deps: GatewayDeps,
  call: ApiRequest,
  upstream: Upstream,
  identity: Identity | null,
  body: Buffer,
) {
  const extra = hopHeaders(call, body.length > 0);
  const { headers } = call.req;
  if (identity) {
    // Signed over what is sent: the path with its query, the body's exact bytes, the Idempotency-Key.
    const sent = UpstreamClient.forwardHeaders(headers, extra);
    return Object.assign(
      sent,
      signIdentity(deps.callKeys[upstream], identity, call.method, call.path + call.query, body, sent),
    );
  } else {
    // A public route authenticates itself: a PSP's certificate, as its ingress verified it, signed for
    // the service (http/psp-client.ts), and a PSP's secret, which goes through untouched.
    const certificate = upstream === 'payments' ? verifiedPspClient(call.req, deps.pspClients) : null;
    if (certificate)
      Object.assign(
        extra,
        pspClientHeaders(deps.callKeys[upstream], certificate, call.method, call.path + call.query, body),
      );
    if (typeof headers.authorization === 'string') extra.authorization = headers.authorization;
  }
  return UpstreamClient.forwardHeaders(headers, extra);
}

function setHeaders(res: ServerResponse, headers: Record<string, string>): void {
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
}

function send(res: ServerResponse, answer: UpstreamResponse): void {
  // One writeHead with every header: the headers set earlier (request id, rate limit) are kept.
  res.writeHead(answer.status, answer.headers);
  res.end(answer.body);
}
