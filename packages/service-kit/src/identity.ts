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
// A signature made for an identity and a route is reused for this long: a burst of one seller's calls
// costs one HMAC, not one each. The receiver's window (MAX_SKEW_MS) is what bounds a replay either way.
const REUSE_MS = 1_000;
// Signatures made and verified, kept for reuse; both maps are emptied whole past this many entries.
const MEMO_SIZE = 1_000;

interface Signed {
  secret: string;
  signed: SignedIdentity;
  at: number;
}
const signedMemo = new Map<string, Signed>();

interface Verified {
  secret: string;
  encoded: string;
  ts: string;
  route: string;
  identity: Identity;
}
const verifiedMemo = new Map<string, Verified>();

function remember<V>(memo: Map<string, V>, key: string, value: V): void {
  if (memo.size >= MEMO_SIZE) memo.clear();
  memo.set(key, value);
}

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
  const json = JSON.stringify(identity);
  const key = `${method.toUpperCase()} ${path} ${json}`;
  const memo = signedMemo.get(key);
  if (memo && memo.secret === secret && now >= memo.at && now - memo.at < REUSE_MS) return memo.signed;
  const encoded = Buffer.from(json).toString('base64url');
  const ts = String(now);
  const signed = { identity: encoded, ts, sig: mac(secret, ts, encoded, method, path) };
  remember(signedMemo, key, { secret, signed, at: now });
  return signed;
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
  // The same parts checked before for the same route: the same answer, without the HMAC and the parse.
  const route = `${method.toUpperCase()} ${path}`;
  const memo = verifiedMemo.get(sig);
  if (memo && memo.secret === secret && memo.encoded === encoded && memo.ts === ts && memo.route === route)
    return memo.identity;
  const expected = Buffer.from(mac(secret, ts, encoded, method, path), 'hex');
  const given = Buffer.from(sig, 'hex');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  let identity: Identity;
  try {
    const parsed = Identity.safeParse(JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8')));
    if (!parsed.success) return null;
    identity = parsed.data;
  } catch {
    return null;
  }
  // Frozen: the same object answers every later check of these parts.
  remember(verifiedMemo, sig, { secret, encoded, ts, route, identity: Object.freeze(identity) });
  return identity;
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
