import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { Identity, type SignedIdentity } from '@seller-api/contracts';
import type { NextFunction, Request, Response } from 'express';
import { readBody } from './body';
import { unauthorized } from './errors';

/**
 * The gateway (and a service calling another) tells a service who is calling with signed headers
 * (docs/architecture.md, "One request through the gateway"):
 *
 * - `x-sa-identity`: the identity, JSON in base64url; it carries `signature_version: 2`;
 * - `x-sa-identity-ts`: when it was signed (ms); a signature older or newer than 60 s is refused;
 * - `x-sa-identity-sig2`: HMAC-SHA256 over the version, the timestamp, the method, the path with its
 *   query exactly as sent, the SHA-256 of the exact body bytes (of the empty string for no body) and the
 *   identity. A captured call cannot be replayed on another route, with another query or another body.
 * - `x-sa-identity-sig`: the previous form (timestamp, method, path without query, identity), still sent
 *   so that a service of the previous release, mid-deploy, accepts the call.
 *
 * A verifier checks `sig2` when it is there and never falls back from a failed one. A call with `sig` only
 * comes from a signer of the previous release, and is accepted only when its signed identity carries no
 * `signature_version`: a call of a current signer stripped of its `sig2` is refused. So the old form
 * cannot be used to change what a current signer sent; it is accepted during a rolling deploy only, and
 * the next release stops sending and accepting it.
 */
export const IDENTITY_HEADER = 'x-sa-identity';
export const IDENTITY_TS_HEADER = 'x-sa-identity-ts';
export const IDENTITY_SIG_HEADER = 'x-sa-identity-sig';
export const IDENTITY_SIG2_HEADER = 'x-sa-identity-sig2';
/** The version marker in the signed identity of every current signer. */
export const SIGNATURE_VERSION = 2;
const MAX_SKEW_MS = 60_000;
// A signature made for an identity and a call is reused for this long: a burst of one seller's
// identical calls costs one HMAC, not one each. The receiver's window (MAX_SKEW_MS) is what bounds a
// replay either way.
const REUSE_MS = 1_000;
// Signatures made and verified, kept for reuse; both maps are emptied whole past this many entries.
const MEMO_SIZE = 1_000;
const EMPTY_SHA256 = createHash('sha256').update('').digest('hex');

/** The bytes of a request body as sent: a Buffer, a string (UTF-8), or nothing. */
export type SignedBody = Buffer | string | null | undefined;

/** SHA-256 (hex) of the exact body bytes; no body hashes as the empty string. */
export function bodySha256(body: SignedBody): string {
  if (body === null || body === undefined || body.length === 0) return EMPTY_SHA256;
  return createHash('sha256').update(body).digest('hex');
}

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
  call: string;
  identity: Identity;
}
const verifiedMemo = new Map<string, Verified>();

function remember<V>(memo: Map<string, V>, key: string, value: V): void {
  if (memo.size >= MEMO_SIZE) memo.clear();
  memo.set(key, value);
}

const pathOnly = (path: string) => {
  const at = path.indexOf('?');
  return at < 0 ? path : path.slice(0, at);
};

/** The previous form: no query, no body. */
function macV1(secret: string, ts: string, identity: string, method: string, path: string): string {
  return createHmac('sha256', secret)
    .update(`${ts}.${method.toUpperCase()}.${pathOnly(path)}.${identity}`)
    .digest('hex');
}

function macV2(secret: string, ts: string, identity: string, call: string): string {
  return createHmac('sha256', secret).update(`v2\n${ts}\n${call}\n${identity}`).digest('hex');
}

/** Method, path with query and body hash, one per line (none of them can hold a line break). */
const callOf = (method: string, path: string, bodyHash: string) =>
  `${method.toUpperCase()}\n${path}\n${bodyHash}`;

function sameHex(given: string, expected: string): boolean {
  const a = Buffer.from(given, 'hex');
  const b = Buffer.from(expected, 'hex');
  return a.length === b.length && a.length > 0 && timingSafeEqual(a, b);
}

/**
 * The signed parts of an identity for one call: `path` with its query exactly as sent, `body` the exact
 * bytes sent (a body that carries them for a batch of calls, or the headers: `identityHeaders`).
 */
export function signedIdentity(
  secret: string,
  identity: Identity,
  method: string,
  path: string,
  body: SignedBody = null,
  now = Date.now(),
): SignedIdentity {
  const json = JSON.stringify({ ...identity, signature_version: SIGNATURE_VERSION });
  const call = callOf(method, path, bodySha256(body));
  const key = `${call}\n${json}`;
  const memo = signedMemo.get(key);
  if (memo && memo.secret === secret && now >= memo.at && now - memo.at < REUSE_MS) return memo.signed;
  const encoded = Buffer.from(json).toString('base64url');
  const ts = String(now);
  const signed = {
    identity: encoded,
    ts,
    sig: macV1(secret, ts, encoded, method, path),
    sig2: macV2(secret, ts, encoded, call),
  };
  remember(signedMemo, key, { secret, signed, at: now });
  return signed;
}

/** The headers that carry a signed identity. */
export function identityHeaders(signed: SignedIdentity): Record<string, string> {
  return {
    [IDENTITY_HEADER]: signed.identity,
    [IDENTITY_TS_HEADER]: signed.ts,
    [IDENTITY_SIG_HEADER]: signed.sig,
    ...(signed.sig2 ? { [IDENTITY_SIG2_HEADER]: signed.sig2 } : {}),
  };
}

/** The identity headers of one call: `path` with its query as sent, `body` the exact bytes sent. */
export function signIdentity(
  secret: string,
  identity: Identity,
  method: string,
  path: string,
  body: SignedBody = null,
  now = Date.now(),
): Record<string, string> {
  return identityHeaders(signedIdentity(secret, identity, method, path, body, now));
}

/** The identity of a call's headers, or null unless its signature holds for this call. */
export function verifyIdentity(
  secret: VerifyingSecrets,
  headers: Record<string, string | string[] | undefined>,
  method: string,
  path: string,
  body: SignedBody = null,
  now = Date.now(),
): Identity | null {
  return verifySignedIdentity(
    secret,
    {
      identity: headers[IDENTITY_HEADER],
      ts: headers[IDENTITY_TS_HEADER],
      sig: headers[IDENTITY_SIG_HEADER],
      sig2: headers[IDENTITY_SIG2_HEADER],
    },
    method,
    path,
    body,
    now,
  );
}

/** Whether the parts could be a signed identity of now, before the body is read (no HMAC). */
function plausible(signed: { identity?: unknown; ts?: unknown }, now: number): boolean {
  if (typeof signed.identity !== 'string' || typeof signed.ts !== 'string') return false;
  const at = Number(signed.ts);
  return Number.isFinite(at) && Math.abs(now - at) <= MAX_SKEW_MS;
}

/**
 * Whether a request's headers could carry a signed identity of now: checked before its body is read (a
 * request that cannot pass is refused without reading it). No HMAC.
 */
export function hasFreshIdentity(
  headers: Record<string, string | string[] | undefined>,
  now = Date.now(),
): boolean {
  return plausible({ identity: headers[IDENTITY_HEADER], ts: headers[IDENTITY_TS_HEADER] }, now);
}

/**
 * The identity of a signed identity's parts, or null unless the signature holds for this call: `path`
 * with its query as received, `body` the exact bytes received.
 */
export function verifySignedIdentity(
  secrets: VerifyingSecrets,
  signed: { identity?: unknown; ts?: unknown; sig?: unknown; sig2?: unknown },
  method: string,
  path: string,
  body: SignedBody = null,
  now = Date.now(),
): Identity | null {
  if (typeof secrets === 'string') return verifyWith(secrets, signed, method, path, body, now);
  for (const secret of secrets) {
    const identity = verifyWith(secret, signed, method, path, body, now);
    if (identity) return identity;
  }
  return null;
}

/**
 * What a service verifies identities with: its INTERNAL_SECRET, and while its secret is being replaced,
 * INTERNAL_SECRET_PREVIOUS too, so callers still signing with the old one keep working until they roll
 * (docs/deploy.md, "Secrets").
 */
export type VerifyingSecrets = string | readonly string[];

/** The secrets a service's configuration gives it to verify with, the current one first. */
export function verifyingSecrets(config: {
  INTERNAL_SECRET: string;
  INTERNAL_SECRET_PREVIOUS?: string | undefined;
}): readonly string[] {
  return config.INTERNAL_SECRET_PREVIOUS
    ? [config.INTERNAL_SECRET, config.INTERNAL_SECRET_PREVIOUS]
    : [config.INTERNAL_SECRET];
}

function verifyWith(
  secret: string,
  signed: { identity?: unknown; ts?: unknown; sig?: unknown; sig2?: unknown },
  method: string,
  path: string,
  body: SignedBody,
  now: number,
): Identity | null {
  const { identity: encoded, ts, sig, sig2 } = signed;
  if (!plausible(signed, now) || typeof encoded !== 'string' || typeof ts !== 'string') return null;
  if (sig2 !== undefined) {
    if (typeof sig2 !== 'string') return null;
    const call = callOf(method, path, bodySha256(body));
    // The same parts checked before for the same call: the same answer, without the HMAC and the parse.
    const memo = verifiedMemo.get(sig2);
    if (memo && memo.secret === secret && memo.encoded === encoded && memo.ts === ts && memo.call === call)
      return memo.identity;
    if (!sameHex(sig2, macV2(secret, ts, encoded, call))) return null;
    const identity = parseIdentity(encoded, true);
    if (identity) remember(verifiedMemo, sig2, { secret, encoded, ts, call, identity });
    return identity;
  }
  // The previous release's form: no query, no body, and only from a signer that does not mark its
  // identity (a current signer's call without its sig2 has been tampered with).
  if (typeof sig !== 'string' || !sameHex(sig, macV1(secret, ts, encoded, method, path))) return null;
  return parseIdentity(encoded, false);
}

/** The identity in `encoded`; null when it does not parse, or its version marker is not as expected. */
function parseIdentity(encoded: string, current: boolean): Identity | null {
  try {
    const raw: unknown = JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8'));
    const version = (raw as { signature_version?: unknown } | null)?.signature_version;
    if (current ? version !== SIGNATURE_VERSION : version !== undefined) return null;
    const parsed = Identity.safeParse(raw);
    // Frozen: the same object answers every later check of these parts.
    return parsed.success ? Object.freeze(parsed.data) : null;
  } catch {
    return null;
  }
}

declare module 'express-serve-static-core' {
  interface Request {
    identity?: Identity;
  }
}

/**
 * Refuses any request that did not come through the gateway (or a service): the signature covers the
 * path with its query as received and the body's exact bytes, so the body is read here (at most 1 MiB)
 * and kept in `req.rawBody` for the JSON parser (http.ts jsonParser). A request without plausible
 * identity headers is refused before its body is read.
 */
export function requireIdentity(secret: VerifyingSecrets) {
  return (req: Request, _res: Response, next: NextFunction) => {
    if (!hasFreshIdentity(req.headers)) {
      req.resume();
      return next(unauthorized());
    }
    // Bytes a JSON parser mounted before this check already read (http.ts keeps them), else the body.
    const read = req.rawBody !== undefined ? Promise.resolve(req.rawBody) : readBody(req);
    read.then((raw) => {
      req.rawBody = raw;
      const identity = verifyIdentity(secret, req.headers, req.method, req.originalUrl, raw);
      if (!identity) return next(unauthorized());
      req.identity = identity;
      next();
    }, next);
  };
}

/** The identity set by requireIdentity; a handler behind it can rely on it. */
export function identityOf(req: Request): Identity {
  if (!req.identity) throw unauthorized();
  return req.identity;
}
