import type { IncomingHttpHeaders } from 'node:http';
import { Pool, errors as undiciErrors, type Dispatcher } from 'undici';
import {
  DeadlineWindow,
  HttpError,
  guardCall,
  injectTraceContext,
  type CallGuard,
} from '@seller-api/service-kit';
import { INGRESS_CLIENT_CERT_PREFIX } from './psp-client';
import type { Upstream } from './routing';

// Never forwarded: hop-by-hop headers, the caller's key (services trust the signed identity instead),
// any identity header a caller tries to smuggle in (`x-sa-*`), an ingress's verdict on a client
// certificate (`ssl-client-*`: the gateway signs what it believes of it, psp-client.ts), and the
// caller's trace context (the gateway's own span is what the services continue).
const DROP_REQUEST = new Set([
  'connection',
  'keep-alive',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'authorization',
  'content-length',
  'expect',
  'cookie',
  'traceparent',
  'tracestate',
  'baggage',
  // Set only by a service forwarding a keyed request to another (the kit's idempotency.ts).
  'x-idempotency-route',
  'x-idempotency-fingerprint',
]);
const DROP_RESPONSE = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'content-length',
  'x-request-id',
  'date',
]);

export interface UpstreamResponse {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/**
 * What every call the gateway makes to a service says of the request it serves: its id, the client's
 * address and protocol, and the type of a body. The signed identity (or a public route's own
 * credentials) is the caller's to add.
 */
export function hopHeaders(
  caller: { requestId: string; ip?: string; protocol: string },
  hasBody: boolean,
): Record<string, string> {
  const headers: Record<string, string> = {
    'x-request-id': caller.requestId,
    'x-forwarded-for': caller.ip ?? '',
    'x-forwarded-proto': caller.protocol,
  };
  if (hasBody) headers['content-type'] = 'application/json';
  return headers;
}

const NAMES: Record<Upstream, string> = {
  orders: 'orders',
  payments: 'payments',
  withdrawals: 'withdrawals',
  webhooks: 'webhook-dispatcher',
};

/** Keep-alive connection pools to each service, with a hard deadline on every call. */
export class UpstreamClient {
  private readonly pools: Record<Upstream, Pool>;
  private readonly deadlines: DeadlineWindow;

  constructor(
    origins: Record<Upstream, string>,
    private readonly timeoutMs: number,
  ) {
    this.deadlines = new DeadlineWindow(timeoutMs);
    const make = (origin: string) =>
      new Pool(origin, {
        connections: 128,
        pipelining: 1,
        keepAliveTimeout: 30_000,
        connectTimeout: Math.min(timeoutMs, 2_000),
      });
    this.pools = {
      orders: make(origins.orders),
      payments: make(origins.payments),
      withdrawals: make(origins.withdrawals),
      webhooks: make(origins.webhooks),
    };
  }

  static forwardHeaders(
    incoming: IncomingHttpHeaders,
    extra: Record<string, string>,
  ): Record<string, string> {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(incoming)) {
      if (
        value === undefined ||
        DROP_REQUEST.has(name) ||
        name.startsWith('x-sa-') ||
        // Set by a service calling another for a keyed request (kit idempotency.ts), never by a client.
        name.startsWith('x-idempotency-') ||
        name.startsWith(INGRESS_CLIENT_CERT_PREFIX)
      )
        continue;
      headers[name] = Array.isArray(value) ? value.join(', ') : value;
    }
    return { ...headers, ...extra };
  }

  /**
   * One call through undici's dispatcher interface: the status, headers and body are kept as they
   * arrive, without the body stream, its async iterator and the abort signal that `request` builds per
   * call (they showed in the gateway's profile). The call is cut off at the deadline it shares with the
   * calls started in the same few milliseconds (kit deadline.ts).
   */
  send(
    upstream: Upstream,
    method: string,
    path: string,
    headers: Record<string, string>,
    body: Buffer | null,
  ): Promise<UpstreamResponse> {
    // The gateway's span, for the service's server span to continue (nothing without tracing).
    injectTraceContext(headers);
    return new Promise((resolve, reject) => {
      let status = 0;
      const kept: Record<string, string> = {};
      const chunks: Buffer[] = [];
      let settled = false;
      // Null while guardCall runs: a deadline already past fails the call from inside it.
      let guard: CallGuard | null = null;
      const fail = (err: unknown) => {
        if (settled) return;
        settled = true;
        guard?.forget();
        reject(upstreamError(NAMES[upstream], err));
      };
      guard = guardCall(this.deadlines.deadline(), fail);
      if (settled) return;
      const call = guard;
      this.pools[upstream].dispatch(
        {
          path,
          method: method as Dispatcher.HttpMethod,
          headers,
          body: body && body.length > 0 ? body : null,
          headersTimeout: this.timeoutMs,
          bodyTimeout: this.timeoutMs,
        },
        {
          onRequestStart(c) {
            call.started(c);
          },
          onResponseStart(_c, statusCode, responseHeaders) {
            // 1xx answers are interim: the final status comes after them.
            if (statusCode < 200) return;
            status = statusCode;
            for (const [name, value] of Object.entries(responseHeaders)) {
              if (value === undefined || DROP_RESPONSE.has(name)) continue;
              kept[name] = Array.isArray(value) ? value.join(', ') : value;
            }
          },
          onResponseData(_c, chunk) {
            chunks.push(chunk);
          },
          onResponseEnd() {
            if (settled) return;
            settled = true;
            call.forget();
            resolve({ status, headers: kept, body: Buffer.concat(chunks) });
          },
          onResponseError(_c, err) {
            fail(err);
          },
        },
      );
    });
  }

  async close(): Promise<void> {
    await Promise.all(Object.values(this.pools).map((p) => p.close().catch(() => undefined)));
  }
}

function upstreamError(service: string, err: unknown): HttpError {
  const code = (err as { code?: string }).code ?? '';
  const name = (err as Error).name;
  if (
    err instanceof undiciErrors.HeadersTimeoutError ||
    err instanceof undiciErrors.BodyTimeoutError ||
    name === 'TimeoutError' ||
    code === 'UND_ERR_HEADERS_TIMEOUT' ||
    code === 'UND_ERR_BODY_TIMEOUT'
  ) {
    return new HttpError(
      504,
      'gateway_timeout',
      `The ${service} service did not answer in time. Retry later.`,
    );
  }
  if (
    code === 'ECONNREFUSED' ||
    code === 'UND_ERR_CONNECT_TIMEOUT' ||
    code === 'ENOTFOUND' ||
    code === 'EAI_AGAIN' ||
    code === 'EHOSTUNREACH'
  ) {
    return new HttpError(
      503,
      'service_unavailable',
      `The ${service} service is unavailable. Retry later.`,
      undefined,
      { 'Retry-After': '5' },
    );
  }
  return new HttpError(502, 'bad_gateway', `The ${service} service gave an invalid answer. Retry later.`);
}
