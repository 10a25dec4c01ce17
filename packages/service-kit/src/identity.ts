import { createHmac, timingSafeEqual } from 'node:crypto';
import { Identity, type SignedIdentity } from '@seller-api/contracts';
import type { NextFunction, Request, Response } from 'express';
import { unauthorized } from './errors';

/**
 * The gateway tells a service who is calling with three headers; the HMAC binds the identity to the
 * method, the path and a timestamp, so a captured header cannot be replayed on another route or later.
 */
export const IDENTITY_HEADER = 'x-sa-identity';
export const IDENTITY_TS_HEADER = 'x-sa-identity-ts';
export const IDENTITY_SIG_HEADER = 'x-sa-identity-sig';
const MAX_SKEW_MS = 60_000;

function mac(secret: string, ts: string, identity: string, method: string, path: string): string {
  return createHmac('sha256', secret)
    .update(`${ts}.${method.toUpperCase()}.${path}.${identity}`)
    .digest('hex');
}

/** The three parts of a signed identity, for a body that carries them (a batch of calls). */
export function signedIdentity(
  secret: string,
  identity: Identity,
  method: string,
  path: string,
  now = Date.now(),
): SignedIdentity {
  const encoded = Buffer.from(JSON.stringify(identity)).toString('base64url');
  const ts = String(now);
  return { identity: encoded, ts, sig: mac(secret, ts, encoded, method, path) };
}

/** The headers that carry a signed identity. */
export function identityHeaders(signed: SignedIdentity): Record<string, string> {
  return {
    [IDENTITY_HEADER]: signed.identity,
    [IDENTITY_TS_HEADER]: signed.ts,
    [IDENTITY_SIG_HEADER]: signed.sig,
  };
}

export function signIdentity(
  secret: string,
  identity: Identity,
  method: string,
  path: string,
  now = Date.now(),
): Record<string, string> {
  return identityHeaders(signedIdentity(secret, identity, method, path, now));
}

export function verifyIdentity(
  secret: string,
  headers: Record<string, string | string[] | undefined>,
  method: string,
  path: string,
  now = Date.now(),
): Identity | null {
  return verifySignedIdentity(
    secret,
    {
      identity: headers[IDENTITY_HEADER],
      ts: headers[IDENTITY_TS_HEADER],
      sig: headers[IDENTITY_SIG_HEADER],
    },
    method,
    path,
    now,
  );
}

/** The identity of a signed identity's parts, or null unless the signature holds for this call. */
export function verifySignedIdentity(
  secret: string,
  signed: { identity?: unknown; ts?: unknown; sig?: unknown },
  method: string,
  path: string,
  now = Date.now(),
): Identity | null {
  const { identity: encoded, ts, sig } = signed;
  if (typeof encoded !== 'string' || typeof ts !== 'string' || typeof sig !== 'string') return null;
  const at = Number(ts);
  if (!Number.isFinite(at) || Math.abs(now - at) > MAX_SKEW_MS) return null;
  const expected = Buffer.from(mac(secret, ts, encoded, method, path), 'hex');
  const given = Buffer.from(sig, 'hex');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  try {
    const parsed = Identity.safeParse(JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8')));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

declare module 'express-serve-static-core' {
  interface Request {
    identity?: Identity;
  }
}

/** Refuses any request that did not come through the gateway. */
export function requireIdentity(secret: string) {
  return (req: Request, _res: Response, next: NextFunction) => {
    const identity = verifyIdentity(secret, req.headers, req.method, req.originalUrl.split('?')[0] ?? '/');
    if (!identity) return next(unauthorized());
    req.identity = identity;
    next();
  };
}

/** The identity set by requireIdentity; a handler behind it can rely on it. */
export function identityOf(req: Request): Identity {
  if (!req.identity) throw unauthorized();
  return req.identity;
}
