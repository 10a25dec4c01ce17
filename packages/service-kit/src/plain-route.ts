import type http from 'node:http';
import type { Express } from 'express';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Identity } from '@seller-api/contracts';
import { readBody } from './body';
import { HttpError, unauthorized } from './errors';
import { errorAnswer, observeRequest, requestIdOf, route as asyncRoute } from './http';
import type { CallerAccess } from './caller-access';
import { hasFreshIdentity, identityOf, verifyIdentity, type CallerKeys } from './identity';
import {
  JsonText,
  idempotentRequestOf,
  keyedRequest,
  sendAnswer,
  type Answer,
  type IdempotentRequest,
} from './idempotency';
import type { Logger } from './logger';
import type { Metrics } from './metrics';
import { traceServerRequest, tracingEnabled } from './telemetry';

/** What a plain route's handler gets: the verified caller, the parsed JSON body, its Idempotency-Key. */
export interface PlainRequest {
  identity: Identity;
  /** The service that signed the call (identity.ts). */
  caller: string;
  body: unknown;
  requestId: string;
  /** The keyed request (idempotency.ts), or null without an Idempotency-Key. */
  keyed: IdempotentRequest | null;
}

/**
 * A hot route served on plain node:http ahead of express (`withPlainRoutes`). The service mounts the
 * same handler on express too, which serves every request this path leaves to it.
 */
export interface PlainRoute {
  method: string;
  /** The exact path, which is also the route template of its metrics. */
  path: string;
  handle(request: PlainRequest): Promise<Answer>;
}

/**
 * Mounts `plain` on express as well, for the requests `withPlainRoutes` leaves to it (a query string,
 * another content type): the same handler, behind express's identity check and body parser. Returns
 * the route, for the service's list of plain routes.
 */
export function mountPlainRoute(app: Express, plain: PlainRoute): PlainRoute {
  const handler = asyncRoute(async (req, res) => {
    const answer = await plain.handle({
      identity: identityOf(req),
      caller: req.caller ?? '',
      body: req.body,
      requestId: req.requestId,
      keyed: keyedRequest(req),
    });
    sendAnswer(res, answer);
  });
  app.all(plain.path, (req, res, next) => (req.method === plain.method ? handler(req, res, next) : next()));
  return plain;
}

// The bodies taken here: JSON in UTF-8, not compressed. Anything else keeps express's own handling.
const JSON_TYPES = new Set([
  'application/json',
  'application/json; charset=utf-8',
  'application/json;charset=utf-8',
]);

const invalidJson = () => new HttpError(400, 'invalid_json', 'Request body is not valid JSON.');

/** The ordinary shape of a request: a JSON body of a declared length, no query string. */
function plainShape(req: IncomingMessage, url: string): boolean {
  const { headers } = req;
  const type = headers['content-type'];
  return (
    !url.includes('?') &&
    headers['content-length'] !== undefined &&
    headers['transfer-encoding'] === undefined &&
    (headers['content-encoding'] === undefined || headers['content-encoding'] === 'identity') &&
    type !== undefined &&
    JSON_TYPES.has(type.toLowerCase())
  );
}

/** As body-parser's strict JSON: an object or an array, `{}` for an empty body. */
function parseJson(raw: Buffer): unknown {
  if (raw.length === 0) return {};
  const text = raw.toString('utf8');
  const first = /\S/.exec(text)?.[0];
  if (first !== '{' && first !== '[') throw invalidJson();
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw invalidJson();
  }
}

/** A JSON answer on a plain node:http response. */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers?: Record<string, string>,
): void {
  const json = body instanceof JsonText ? body.text : JSON.stringify(body);
  res.writeHead(status, {
    ...headers,
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(json),
  });
  res.end(json);
}

/**
 * Serves `routes` on plain node:http and hands every other request to `app` (express). Express's
 * routing, request decoration and body parser cost more per request than some handlers do; a route
 * taken here keeps what the kit's express apps give every request: the request id, the metrics and
 * access log by route template, the server span when tracing is on, the caller's signed identity
 * (401 without it) and its access table (403 outside its row), and errors in the documented shape. Requests of another shape (a query string,
 * another content type, a compressed or chunked body) go to express, which answers them as before.
 */
export function withPlainRoutes(
  app: http.RequestListener,
  routes: PlainRoute[],
  {
    keys,
    access,
    metrics,
    logger,
  }: { keys: CallerKeys; access: CallerAccess; metrics: Metrics; logger: Logger },
): http.RequestListener {
  const byKey = new Map(routes.map((route) => [`${route.method} ${route.path}`, route]));
  const tracing = tracingEnabled();
  return (req, res) => {
    const url = req.url ?? '/';
    const method = req.method ?? 'GET';
    const route = byKey.get(`${method} ${url}`);
    if (!route || !plainShape(req, url)) return app(req, res);

    const requestId = requestIdOf(req.headers);
    res.setHeader('X-Request-Id', requestId);
    observeRequest(metrics, logger, req, res, { id: requestId, path: url, route: () => route.path });
    const run = () => {
      serve(req, res, route, keys, access, requestId).catch((err: unknown) =>
        sendErrorAnswer(res, err, { id: requestId, method, path: url }, logger),
      );
    };
    if (tracing) traceServerRequest(req, res, { untrustedCallers: false, route: () => route.path }, run);
    else run();
  };
}

async function serve(
  req: IncomingMessage,
  res: ServerResponse,
  route: PlainRoute,
  keys: CallerKeys,
  access: CallerAccess,
  requestId: string,
): Promise<void> {
  if (!hasFreshIdentity(req.headers)) {
    // Refused before the body is read, as express's identity check does; the body is drained.
    req.resume();
    throw unauthorized();
  }
  // The signature covers the body's exact bytes (identity.ts): read first, then checked.
  const raw = await readBody(req);
  const verified = verifyIdentity(keys, req.headers, route.method, route.path, raw);
  if (!verified) throw unauthorized();
  const { identity } = verified;
  access.check(verified.caller, route.method, route.path, identity.role);
  const body = parseJson(raw);
  const keyed = idempotentRequestOf(identity, {
    method: route.method,
    path: route.path,
    headers: req.headers,
    body: raw,
  });
  const answer = await route.handle({ identity, caller: verified.caller, body, requestId, keyed });
  sendJson(res, answer.status, answer.body, answer.headers);
}

/** What a request failed with (`errorAnswer`), answered on a plain node:http response. */
export function sendErrorAnswer(
  res: ServerResponse,
  err: unknown,
  request: { id: string; method: string; path: string },
  logger: Logger,
): void {
  const { status, headers, body } = errorAnswer(
    err,
    { ...request, clientGone: Boolean(res.socket?.destroyed) },
    logger,
  );
  if (res.headersSent) {
    // Too late for an error body: whatever went wrong did so mid-answer.
    res.destroy();
    return;
  }
  sendJson(res, status, body, headers);
}
