import type http from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import proxyaddr from 'proxy-addr';
import {
  observeRequest,
  sendErrorAnswer,
  requestIdOf,
  traceServerRequest,
  TRUSTED_PROXIES,
  tracingEnabled,
  type Logger,
  type Metrics,
} from '@seller-api/service-kit';
import { DOCS_ASSETS } from './docs';
import type { ApiRequest } from './gateway';
import { routeTemplate } from './routing';

const PREFIX = '/api/v1';
// Served by express (http/docs.ts), though under the API's prefix: the document and its reference page.
const DOCS = new Set(['/api/v1/openapi.json', '/api/v1/openapi.json/', '/api/v1/docs', '/api/v1/docs/']);
const isDocs = (path: string): boolean => DOCS.has(path) || path.startsWith(DOCS_ASSETS);
const trusted = proxyaddr.compile(TRUSTED_PROXIES);

/**
 * The public API (`/api/v1/...`) served on plain node:http, in front of express, which serves the
 * rest (health, docs, the panel): every integrator call takes this path, and express's routing and
 * request decoration cost more per request than the whole of what the gateway does here. It keeps
 * what the kit's express apps give every request: the request id, the metrics and access log by route
 * template, the server span when tracing is on, and errors in the documented shape.
 */
export function withPublicApi(
  app: http.RequestListener,
  handle: (call: ApiRequest, res: ServerResponse) => Promise<void>,
  { metrics, logger }: { metrics: Metrics; logger: Logger },
): http.RequestListener {
  const tracing = tracingEnabled();
  return (req, res) => {
    const url = req.url ?? '/';
    const queryAt = url.indexOf('?');
    const fullPath = queryAt < 0 ? url : url.slice(0, queryAt);
    if (!fullPath.startsWith(`${PREFIX}/`) || isDocs(fullPath)) return app(req, res);

    const method = req.method ?? 'GET';
    const call: ApiRequest = {
      req,
      method,
      path: fullPath.slice(PREFIX.length),
      query: queryAt < 0 ? '' : url.slice(queryAt),
      requestId: requestIdOf(req.headers),
      ip: proxyaddr(req, trusted),
      protocol: protocolOf(req),
    };
    res.setHeader('X-Request-Id', call.requestId);
    // Metrics and spans label a request by its documented route; anything else is `unmatched`.
    const template = routeTemplate(method, call.path);
    const route = template ? `${PREFIX}${template}` : null;
    observeRequest(metrics, logger, req, res, {
      id: call.requestId,
      path: url,
      route: () => route ?? 'unmatched',
    });
    const run = () => {
      handle(call, res).catch((err: unknown) => sendError(res, err, call, fullPath, logger));
    };
    if (tracing) traceServerRequest(req, res, { untrustedCallers: true, route: () => route }, run);
    else run();
  };
}

/** As express's `req.protocol`: X-Forwarded-Proto's first value when the peer is a trusted proxy. */
function protocolOf(req: IncomingMessage): string {
  const own = (req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http';
  if (!trusted(req.socket.remoteAddress ?? '', 0)) return own;
  const header = req.headers['x-forwarded-proto'];
  const value = (Array.isArray(header) ? header[0] : header) ?? own;
  const comma = value.indexOf(',');
  return (comma < 0 ? value : value.slice(0, comma)).trim();
}

function sendError(res: ServerResponse, err: unknown, call: ApiRequest, path: string, logger: Logger) {
  sendErrorAnswer(res, err, { id: call.requestId, method: call.method, path }, logger);
}
