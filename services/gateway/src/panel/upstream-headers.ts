import type { Request } from 'express';
import type { Identity } from '@seller-api/contracts';
import { IDEMPOTENCY_KEY_HEADER, signIdentity } from '@seller-api/service-kit';
import { hopHeaders } from '../http/proxy';
import type { Upstream } from '../http/routing';
import type { PanelDeps } from './deps';

/** Only what the service needs: the browser's cookies and headers stay at the gateway. */
export function upstreamHeaders(
  deps: PanelDeps,
  req: Request,
  upstream: Upstream,
  identity: Identity,
  method: string,
  /** The path with its query, as sent. */
  upstreamPath: string,
  /** The exact bytes sent, which the signature covers. */
  body: Buffer | null,
): Record<string, string> {
  const hasBody = body !== null && body.length > 0;
  const key = req.headers[IDEMPOTENCY_KEY_HEADER];
  const headers: Record<string, string> = {
    accept: 'application/json',
    ...hopHeaders(req, hasBody),
    // The service that makes the change keeps the key (docs/idempotency.md).
    ...(typeof key === 'string' ? { [IDEMPOTENCY_KEY_HEADER]: key } : {}),
  };
  return {
    ...headers,
    // Signed over the key too: a captured call cannot be replayed under another key.
    ...signIdentity(deps.callKeys[upstream], identity, method, upstreamPath, hasBody ? body : null, headers),
  };
}
