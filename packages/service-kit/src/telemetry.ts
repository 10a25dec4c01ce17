import {
  ProxyTracerProvider,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  context,
  propagation,
  trace,
  type Attributes,
  type Context,
  type Link,
  type Span,
} from '@opentelemetry/api';
import type { RequestHandler } from 'express';
import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * The spans the kit makes itself: the server span of every request, the outbox's publish, the
 * consumer's processing. They are made explicitly, not by auto-instrumentation, because the outbox
 * and the webhook deliveries cross time and processes through database rows, and because they must
 * not depend on module load order. With no SDK registered (OTEL_EXPORTER_OTLP_ENDPOINT unset) every
 * helper here returns before allocating anything.
 */
export const tracer = trace.getTracer('@seller-api/service-kit');

/** A serialized W3C trace context (`traceparent`, `tracestate`), as stored in database rows. */
export type TraceCarrier = Record<string, string>;

// The provider the API hands out until an SDK registers one; comparing with it costs nothing.
const NOOP_PROVIDER = new ProxyTracerProvider().getDelegate();

/** True once an SDK has registered a tracer provider (see tracing.ts). */
export function tracingEnabled(): boolean {
  const provider = trace.getTracerProvider();
  return !(provider instanceof ProxyTracerProvider) || provider.getDelegate() !== NOOP_PROVIDER;
}

/** The active span's context to store with work done later, or null when nothing is being traced. */
export function currentTraceContext(): TraceCarrier | null {
  if (!trace.getActiveSpan()) return null;
  const carrier: TraceCarrier = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent ? carrier : null;
}

/** The context a stored or received carrier describes (the root context when there is none). */
export function contextFrom(carrier: Record<string, unknown> | null | undefined): Context {
  return carrier ? propagation.extract(ROOT_CONTEXT, carrier) : ROOT_CONTEXT;
}

/**
 * Adds the W3C trace context of `ctx` (the active one by default) to an internal request's headers.
 * Without an SDK the API's no-op propagator writes nothing and allocates nothing.
 */
export function injectTraceContext(headers: Record<string, string>, ctx: Context = context.active()): void {
  propagation.inject(ctx, headers);
}

/** Only `traceparent` and `tracestate`, for requests that leave the system (no baggage). */
export function w3cTraceHeaders(ctx: Context): { traceparent?: string; tracestate?: string } {
  const carrier: TraceCarrier = {};
  propagation.inject(ctx, carrier);
  return {
    ...(carrier.traceparent ? { traceparent: carrier.traceparent } : {}),
    ...(carrier.tracestate ? { tracestate: carrier.tracestate } : {}),
  };
}

export interface HttpClientSpan {
  span: Span;
  /** The span's context, to inject into the request. */
  context: Context;
  /** Records the answer's status (null: none came) or the error, and ends the span. */
  end(statusCode: number | null, error: string | null): void;
}

/**
 * An HTTP CLIENT span for a call made on behalf of stored work (a webhook delivery), a child of the
 * context stored with it. Call only when `tracingEnabled()`.
 */
export function startHttpClientSpan(
  method: string,
  parent: TraceCarrier | null,
  attributes: Attributes,
): HttpClientSpan {
  const parentContext = contextFrom(parent);
  const span = tracer.startSpan(
    method,
    { kind: SpanKind.CLIENT, attributes: { 'http.request.method': method, ...attributes } },
    parentContext,
  );
  return {
    span,
    context: trace.setSpan(parentContext, span),
    end(statusCode, error) {
      if (statusCode !== null) span.setAttribute('http.response.status_code', statusCode);
      if (error !== null || statusCode === null || statusCode >= 400)
        span.setStatus({ code: SpanStatusCode.ERROR, message: error ?? `HTTP ${statusCode}` });
      span.end();
    },
  };
}

/** Ends a span with the error it failed with. */
export function failSpan(span: Span, err: unknown): void {
  span.recordException(err instanceof Error ? err : String(err));
  span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
}

const UNTRACED = /^\/(healthz|readyz|metrics)\b/;

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/;

/** A link to the trace a caller says it is in (its `traceparent` alone), or none. */
function callerLink(header: string | string[] | undefined): Link[] {
  const match = typeof header === 'string' ? TRACEPARENT.exec(header.trim()) : null;
  if (!match?.[1] || !match[2] || /^0+$/.test(match[1]) || /^0+$/.test(match[2])) return [];
  return [{ context: { traceId: match[1], spanId: match[2], traceFlags: TraceFlags.NONE, isRemote: true } }];
}

/**
 * The SERVER span of each request; the rest of the request runs in its context (the request and
 * response emitters too, so body parsers' callbacks keep it). Named and labelled by route template,
 * never by raw path: paths can carry ids, queries can carry keys. Installed by createHttpApp only when
 * tracing is on.
 *
 * Behind the gateway a service continues the caller's trace (W3C `traceparent`, `tracestate`,
 * `baggage`). A public entry point (`untrustedCallers`: the gateway) does not: its span starts a new
 * trace, linked to the caller's `traceparent`, so a client decides neither what is sampled nor what
 * `tracestate` and `baggage` ride along to every service, outbox row and webhook.
 */
export function serverSpans({
  untrustedCallers = false,
}: { untrustedCallers?: boolean } = {}): RequestHandler {
  return (req, res, next) => {
    if (UNTRACED.test(req.path)) return next();
    traceServerRequest(
      req,
      res,
      {
        untrustedCallers,
        route: () =>
          req.route?.path
            ? `${req.baseUrl}${String(req.route.path)}`
            : ((res.locals.routeTemplate as string | undefined) ?? null),
      },
      next,
    );
  };
}

/**
 * Runs `handle` in the SERVER span of a request (serverSpans, for a handler outside express). `route`
 * is asked when the response ends, once it is known. Only to be called while tracing is on.
 */
export function traceServerRequest(
  req: IncomingMessage,
  res: ServerResponse,
  options: { untrustedCallers: boolean; route: () => string | null },
  handle: () => void,
): void {
  const method = req.method ?? '';
  const parent = options.untrustedCallers ? ROOT_CONTEXT : propagation.extract(ROOT_CONTEXT, req.headers);
  const span = tracer.startSpan(
    method,
    {
      kind: SpanKind.SERVER,
      attributes: { 'http.request.method': method },
      links: options.untrustedCallers ? callerLink(req.headers.traceparent) : [],
    },
    parent,
  );
  const active = trace.setSpan(parent, span);
  let ended = false;
  const end = () => {
    if (ended) return;
    ended = true;
    const route = options.route();
    if (route) {
      span.updateName(`${method} ${route}`);
      span.setAttribute('http.route', route);
    }
    span.setAttribute('http.response.status_code', res.statusCode);
    if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    if (!res.writableFinished) span.setAttribute('http.aborted', true);
    span.end();
  };
  res.once('finish', end);
  res.once('close', end);
  context.bind(active, req);
  context.bind(active, res);
  context.with(active, handle);
}
