import { randomUUID } from 'node:crypto';
import express, { type ErrorRequestHandler, type Express, type RequestHandler } from 'express';
import type { Logger } from './logger';
import type { Metrics } from './metrics';
import { HttpError } from './errors';
import { serverSpans, tracingEnabled } from './telemetry';

export const REQUEST_ID_HEADER = 'x-request-id';
const REQUEST_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;
export const MAX_BODY_BYTES = 1024 * 1024;

declare module 'express-serve-static-core' {
  interface Request {
    requestId: string;
  }
}

/** Echo a sane client request id, otherwise make one; every response and log line carries it. */
export function requestId(): RequestHandler {
  return (req, res, next) => {
    const given = req.headers[REQUEST_ID_HEADER];
    req.requestId = typeof given === 'string' && REQUEST_ID_PATTERN.test(given) ? given : randomUUID();
    res.setHeader('X-Request-Id', req.requestId);
    next();
  };
}

/**
 * Duration histogram and counter labelled by route template, never by raw path (bounded cardinality),
 * and one access-log line per request (the logger scrubs keys from paths and queries).
 */
export function httpMetrics(metrics: Metrics, logger: Logger): RequestHandler {
  return (req, res, next) => {
    const end = metrics.httpDuration.startTimer();
    res.on('finish', () => {
      const route = req.route?.path
        ? `${req.baseUrl}${String(req.route.path)}`
        : (res.locals.routeTemplate ?? 'unmatched');
      const labels = { method: req.method, route, status_code: String(res.statusCode) };
      const seconds = end(labels);
      metrics.httpRequests.inc(labels);
      if (route !== '/healthz' && route !== '/readyz' && logger.isLevelEnabled('info')) {
        logger.info(
          {
            request_id: req.requestId,
            method: req.method,
            path: req.originalUrl,
            route,
            status: res.statusCode,
            duration_ms: Math.round(seconds * 10_000) / 10,
          },
          'request',
        );
      }
    });
    next();
  };
}

function jsonParser(): RequestHandler {
  const parse = express.json({ limit: MAX_BODY_BYTES, type: ['application/json', 'application/*+json'] });
  return (req, res, next) => {
    // Action routes accept an empty body with or without Content-Type.
    if (req.headers['content-length'] === '0') {
      req.body = {};
      return next();
    }
    parse(req, res, next);
  };
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
  app.set('trust proxy', 'loopback, linklocal, uniquelocal');
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

/** Must be the last middleware: unknown routes, then every error in the documented shape. */
export function finishHttpApp(app: Express, logger: Logger): void {
  app.use((req, _res, next) =>
    next(new HttpError(404, 'not_found', `Route ${req.method} ${req.path} not found.`)),
  );
  const handler: ErrorRequestHandler = (err: unknown, req, res, _next) => {
    void _next;
    const body = (status: number, code: string, message: string, data?: unknown) =>
      res
        .status(status)
        .json(
          data === undefined
            ? { message, code, request_id: req.requestId }
            : { message, code, request_id: req.requestId, data },
        );
    if (err instanceof HttpError) {
      if (err.headers) res.set(err.headers);
      return body(err.status, err.code, err.message, err.data);
    }
    const parserError = err as BodyParserError;
    if (parserError?.type === 'entity.parse.failed')
      return body(400, 'invalid_json', 'Request body is not valid JSON.');
    if (parserError?.type === 'entity.too.large')
      return body(413, 'payload_too_large', 'Request body exceeds 1 MiB.');
    if (parserError?.type === 'encoding.unsupported' || parserError?.type === 'charset.unsupported')
      return body(415, 'validation_error', 'Unsupported body encoding.');
    // A client that hangs up mid-body is not a server fault: no error log, and nobody to answer.
    if (
      parserError?.type === 'request.aborted' ||
      (err as { code?: string })?.code === 'ECONNRESET' ||
      parserError?.message === 'aborted'
    ) {
      logger.debug({ request_id: req.requestId }, 'client aborted the request');
      return res.headersSent ? undefined : body(400, 'validation_error', 'Request aborted.');
    }
    logger.error({ err, request_id: req.requestId, method: req.method, path: req.path }, 'unhandled error');
    return body(500, 'internal_error', 'Internal server error.');
  };
  app.use(handler);
}

/** Wrap an async handler so rejections reach the error middleware (express 5 does this too). */
export const route =
  (fn: (...args: Parameters<RequestHandler>) => Promise<unknown>): RequestHandler =>
  (req, res, next) => {
    fn(req, res, next).catch(next);
  };
