import { MESSAGES } from '@seller-api/contracts';
import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import express, { type ErrorRequestHandler, type Express, type RequestHandler } from 'express';
import { isDatabaseUnavailable } from './db-errors';
import type { Logger } from './logger';
import type { Metrics } from './metrics';
import { HttpError } from './errors';
import { serverSpans, tracingEnabled } from './telemetry';

export const REQUEST_ID_HEADER = 'x-request-id';
const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;
export const MAX_BODY_BYTES = 1024 * 1024;
/** The proxies whose X-Forwarded-* headers are believed (express's `trust proxy`, proxy-addr's names). */
export const TRUSTED_PROXIES = ['loopback', 'linklocal', 'uniquelocal'];

declare module 'express-serve-static-core' {
  interface Request {
    requestId: string;
    /**
     * The body as received: an Idempotency-Key's request fingerprint (idempotency.ts). Set by the
     * identity check (identity.ts, which hashes it) or by the JSON parser.
     */
    rawBody?: Buffer;
  }
}

/** A caller's sane request id (echoed), or a new one. */
export function requestIdOf(headers: IncomingHttpHeaders): string {
  const given = headers[REQUEST_ID_HEADER];
  return typeof given === 'string' && REQUEST_ID_PATTERN.test(given) ? given : randomUUID();
}

/** Echo a sane client request id, otherwise make one; every response and log line carries it. */
export function requestId(): RequestHandler {
  return (req, res, next) => {
    req.requestId = requestIdOf(req.headers);
    res.setHeader('X-Request-Id', req.requestId);
    next();
  };
}

/**
 * When the response finishes: the duration histogram and counter, labelled by route template, never
 * by raw path (bounded cardinality), and one access-log line (the logger scrubs keys from paths and
 * queries). `route` is asked at the end, once the router has matched.
 */
export function observeRequest(
  metrics: Metrics,
  logger: Logger,
  req: IncomingMessage,
  res: ServerResponse,
  request: { id: string; path: string; route: () => string },
): void {
  const end = metrics.httpDuration.startTimer();
  res.on('finish', () => {
    const route = request.route();
    const labels = { method: req.method ?? '', route, status_code: String(res.statusCode) };
    const seconds = end(labels);
    metrics.httpRequests.inc(labels);
    if (route !== '/healthz' && route !== '/readyz' && logger.isLevelEnabled('info')) {
      logger.info(
        {
          request_id: request.id,
          method: req.method,
          path: request.path,
          route,
          status: res.statusCode,
          duration_ms: Math.round(seconds * 10_000) / 10,
        },
        'request',
      );
    }
  });
}

/** Metrics and the access log of every request (observeRequest) in an express app. */
export function httpMetrics(metrics: Metrics, logger: Logger): RequestHandler {
  return (req, res, next) => {
    observeRequest(metrics, logger, req, res, {
      id: req.requestId,
      path: req.originalUrl,
      route: () =>
        req.route?.path
          ? `${req.baseUrl}${String(req.route.path)}`
          : ((res.locals.routeTemplate as string | undefined) ?? 'unmatched'),
    });
    next();
  };
}

/** express's JSON body parser as the services use it (the limit, `+json` types, empty bodies as `{}`). */
export function jsonParser(): RequestHandler {
  const parse = express.json({
    limit: MAX_BODY_BYTES,
    type: ['application/json', 'application/*+json'],
    // A reference to the bytes already read, kept for the Idempotency-Key's fingerprint.
    verify: (req, _res, buf) => {
      (req as express.Request).rawBody = buf;
    },
  });
  return (req, res, next) => {
    // Action routes accept an empty body with or without Content-Type.
    if (req.headers['content-length'] === '0') {
      req.body = {};
      return next();
    }
    // Already read by the identity check: parsed from its bytes, as express.json would have.
    if (req.rawBody !== undefined) return next(parseRead(req));
    parse(req, res, next);
  };
}

const JSON_TYPES = ['application/json', 'application/*+json'];

/** express.json's answer for a body already read: objects and arrays only, a 400 for anything else. */
function parseRead(req: express.Request): HttpError | undefined {
  const raw = req.rawBody ?? Buffer.alloc(0);
  if (raw.length === 0) {
    req.body = {};
    return undefined;
  }
  if (!req.is(JSON_TYPES)) return undefined;
  const text = raw.toString('utf8');
  const first = text.trimStart()[0];
  try {
    if (first !== '{' && first !== '[') throw new SyntaxError('not an object or array');
    req.body = JSON.parse(text) as unknown;
    return undefined;
  } catch {
    return new HttpError(400, 'invalid_json', 'Request body is not valid JSON.');
  }
}

export interface HttpAppOptions {
  logger: Logger;
  metrics: Metrics;
  /** The gateway reads raw bodies itself; services parse JSON here. */
  parseJson?: boolean;
  /** A public entry point: callers' trace context is linked, never continued (telemetry.serverSpans). */
  untrustedCallers?: boolean;
}

/** The express app every service starts from: request id, metrics, JSON body parsing with a limit. */
export function createHttpApp({
  metrics,
  logger,
  parseJson = true,
  untrustedCallers = false,
}: HttpAppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set('trust proxy', TRUSTED_PROXIES);
  // Decided once here, so a service without tracing pays nothing per request.
  if (tracingEnabled()) app.use(serverSpans({ untrustedCallers }));
  app.use(requestId(), httpMetrics(metrics, logger));
  if (parseJson) app.use(jsonParser());
  return app;
}

interface BodyParserError extends Error {
  type?: string;
  status?: number;
}

export interface ErrorBody {
  message: string;
  code: string;
  request_id: string;
  data?: unknown;
}

/**
 * The documented answer to whatever a request failed with: an HttpError as it says, body-parser
 * failures as 400/413/415, a client that hung up mid-body 400 (for whoever is left to hear it),
 * anything else a 500 that shows nothing of the cause (which is logged).
 */
export function errorAnswer(
  err: unknown,
  request: { id: string; method: string; path: string; clientGone?: boolean },
  logger: Logger,
): { status: number; headers?: Record<string, string>; body: ErrorBody } {
  const answer = (status: number, code: string, message: string, data?: unknown) => ({
    status,
    body:
      data === undefined
        ? { message, code, request_id: request.id }
        : { message, code, request_id: request.id, data },
  });
  if (err instanceof HttpError)
    return { ...answer(err.status, err.code, err.message, err.data), headers: err.headers };
  const parserError = err as BodyParserError;
  if (parserError?.type === 'entity.parse.failed')
    return answer(400, 'invalid_json', 'Request body is not valid JSON.');
  if (parserError?.type === 'entity.too.large')
    return answer(413, 'payload_too_large', 'Request body exceeds 1 MiB.');
  if (parserError?.type === 'encoding.unsupported' || parserError?.type === 'charset.unsupported')
    return answer(415, 'unsupported_media_type', 'Unsupported body encoding.');
  // A path parameter that is not valid percent-encoding (`%ZZ`): the router cannot decode it.
  if (err instanceof URIError)
    return answer(400, 'validation_error', 'Invalid path.', { path: [MESSAGES.percentEncoding] });
  // A body its Content-Encoding does not decode (gzip that is not gzip): body-parser's bare 400.
  if (parserError?.status === 400 && (err as { expose?: unknown }).expose === true)
    return answer(400, 'invalid_json', 'Request body could not be read: check its Content-Encoding.');
  // A client that hangs up mid-body is not a server fault: no error log. A reset of another
  // connection (the database's) while the client is still there is not the client's doing.
  if (
    parserError?.type === 'request.aborted' ||
    (request.clientGone &&
      ((err as { code?: string })?.code === 'ECONNRESET' || parserError?.message === 'aborted'))
  ) {
    logger.debug({ request_id: request.id }, 'client aborted the request');
    return answer(400, 'validation_error', 'Request aborted.');
  }
  if (isDatabaseUnavailable(err)) {
    logger.warn(
      { err: (err as Error).message, request_id: request.id, method: request.method, path: request.path },
      'database unavailable',
    );
    return {
      ...answer(503, 'service_unavailable', 'Service temporarily unavailable. Retry the request.'),
      headers: { 'Retry-After': '1' },
    };
  }
  logger.error(
    { err, request_id: request.id, method: request.method, path: request.path },
    'unhandled error',
  );
  return answer(500, 'internal_error', 'Internal server error.');
}

/** Must be the last middleware: unknown routes, then every error in the documented shape. */
export function finishHttpApp(app: Express, logger: Logger): void {
  app.use((req, _res, next) =>
    next(new HttpError(404, 'not_found', `Route ${req.method} ${req.path} not found.`)),
  );
  const handler: ErrorRequestHandler = (err: unknown, req, res, _next) => {
    void _next;
    const answer = errorAnswer(
      err,
      { id: req.requestId, method: req.method, path: req.path, clientGone: Boolean(req.socket?.destroyed) },
      logger,
    );
    if (res.headersSent) return;
    if (answer.headers) res.set(answer.headers);
    res.status(answer.status).json(answer.body);
  };
  app.use(handler);
}

/** Wrap an async handler so rejections reach the error middleware (express 5 does this too). */
export const route =
  (fn: (...args: Parameters<RequestHandler>) => Promise<unknown>): RequestHandler =>
  (req, res, next) => {
    fn(req, res, next).catch(next);
  };
