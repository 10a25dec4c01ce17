import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { Identity, type SignedIdentity } from '@seller-api/contracts';
import type { NextFunction, Request, Response } from 'express';
import { readBody } from './body';
import { unauthorized } from './errors';

/**
 * A service calling another (the gateway included) says who it is and who it acts for with signed
 * headers (docs/deploy.md, "Internal keys"):
 *
 * - `x-sa-caller`: the calling service's name;
 * - `x-sa-identity`: the identity it acts for, JSON in base64url (it carries `signature_version: 2`);
 * - `x-sa-identity-ts`: when it was signed (ms); a signature older or newer than 60 s is refused;
 * - `x-sa-identity-sig3`: HMAC-SHA256, with the caller's key for this callee, over the caller, the
 *   callee, the timestamp, the method, the path with its query exactly as sent, the SHA-256 of the
 *   exact body bytes, the SHA-256 of the idempotency headers (`Idempotency-Key`, `x-idempotency-*`)
 *   and the identity. A captured call cannot be replayed on another route, with another query, body or
 *   Idempotency-Key, nor presented by another caller.
 *
 * Each caller holds one key (INTERNAL_KEY). A callee holds, per caller, the key derived from it for
 * that callee (`deriveCallKey`), never the caller's own: a service that is broken into can sign only as
 * itself, and only what the callee's table of callers lets it call (caller-access.ts).
 *
 * While a deployment moves from the previous release (one shared secret per callee), a callee given
 * INTERNAL_SECRET also accepts the previous form (`x-sa-identity-sig2`, with that secret) as the caller
 * `legacy`, and a caller given a callee's INTERNAL_SECRET also sends it. A call with a sig3 is checked
 * by it alone: a failed sig3 never falls back to the previous form.
 */
export const CALLER_HEADER = 'x-sa-caller';
export const IDENTITY_HEADER = 'x-sa-identity';
export const IDENTITY_TS_HEADER = 'x-sa-identity-ts';
/** The previous release's forms, sent and accepted only while a deployment is being upgraded. */
export const IDENTITY_SIG_HEADER = 'x-sa-identity-sig';
export const IDENTITY_SIG2_HEADER = 'x-sa-identity-sig2';
export const IDENTITY_SIG3_HEADER = 'x-sa-identity-sig3';
/** The version marker in the signed identity (read by the previous release's verifiers). */
export const SIGNATURE_VERSION = 2;
/** The caller a call of the previous release's form is taken to come from. */
export const LEGACY_CALLER = 'legacy';
const MAX_SKEW_MS = 60_000;
// A signature made for an identity and a call is reused for this long: a burst of one seller's
// identical calls costs one HMAC, not one each. The receiver's window (MAX_SKEW_MS) is what bounds a
// replay either way.
const REUSE_MS = 1_000;
// Signatures made and verified, kept for reuse; both maps are emptied whole past this many entries.
const MEMO_SIZE = 1_000;
const EMPTY_SHA256 = createHash('sha256').update('').digest('hex');
const CALLER_NAME = /^[a-z][a-z0-9-]{0,39}$/;

/** The bytes of a request body as sent: a Buffer, a string (UTF-8), or nothing. */
export type SignedBody = Buffer | string | null | undefined;
type Headers = Record<string, string | string[] | undefined>;

/** SHA-256 (hex) of the exact body bytes; no body hashes as the empty string. */
export function bodySha256(body: SignedBody): string {
  if (body === null || body === undefined || body.length === 0) return EMPTY_SHA256;
  return createHash('sha256').update(body).digest('hex');
}

/**
 * SHA-256 (hex) of a call's idempotency headers: `idempotency-key` and every `x-idempotency-*`, as
 * `name:value` lines sorted by name (the empty string's hash when there are none).
 */
export function idempotencySha256(headers: Headers | undefined): string {
  if (!headers) return EMPTY_SHA256;
  const lines: string[] = [];
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    const lower = name.toLowerCase();
    if (lower !== 'idempotency-key' && !lower.startsWith('x-idempotency-')) continue;
    lines.push(`${lower}:${Array.isArray(value) ? value.join(', ') : value}`);
  }
  if (lines.length === 0) return EMPTY_SHA256;
  return createHash('sha256').update(lines.sort().join('\n')).digest('hex');
}

/** The key a caller's INTERNAL_KEY gives it for one callee; the callee is given this, not the key. */
export function deriveCallKey(callerKey: string, callee: string): string {
  return createHmac('sha256', callerKey)
    .update(`seller-api internal call key\n${callee}`)
    .digest('base64url');
}

/** What a caller signs its calls to one service with. */
export interface CallKey {
  caller: string;
  callee: string;
  /** deriveCallKey(the caller's INTERNAL_KEY, callee). */
  key: string;
  /** The callee's INTERNAL_SECRET of the previous release, while a deployment is being upgraded. */
  legacySecret?: string | undefined;
}

/** What a service verifies its callers with. */
export interface CallerKeys {
  /** The service's own name, which every signature it accepts names. */
  callee: string;
  /** Per caller, the keys derived for this service: the current one, and one being replaced. */
  keys: ReadonlyMap<string, readonly string[]>;
  /** INTERNAL_SECRET (and its previous value), while a deployment is being upgraded; else empty. */
  legacySecrets: readonly string[];
}

/** A verified call: who signed it and who it acts for. */
export interface VerifiedCall {
  caller: string;
  identity: Identity;
}

interface Signed {
  callKey: CallKey;
  signed: SignedIdentity;
  at: number;
}
const signedMemo = new Map<string, Signed>();

interface Verified {
  /** The service that verified it: a signature names its callee. */
  callee: string;
  key: string;
  caller: string;
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

/** The previous release's forms: v1 (no query, no body), v2 (no caller, no idempotency headers). */
function macV1(secret: string, ts: string, identity: string, method: string, path: string): string {
  return createHmac('sha256', secret)
    .update(`${ts}.${method.toUpperCase()}.${pathOnly(path)}.${identity}`)
    .digest('hex');
}

function macV2(secret: string, ts: string, identity: string, method: string, path: string, body: string) {
  return createHmac('sha256', secret)
    .update(`v2\n${ts}\n${method.toUpperCase()}\n${path}\n${body}\n${identity}`)
    .digest('hex');
}

function macV3(key: string, caller: string, callee: string, ts: string, call: string, identity: string) {
  return createHmac('sha256', key)
    .update(`v3\n${caller}\n${callee}\n${ts}\n${call}\n${identity}`)
    .digest('hex');
}

/** Method, path with query, body hash and idempotency hash, one per line (none can hold a line break). */
const callOf = (method: string, path: string, bodyHash: string, idempotencyHash: string) =>
  `${method.toUpperCase()}\n${path}\n${bodyHash}\n${idempotencyHash}`;

function sameHex(given: string, expected: string): boolean {
  // Exactly a SHA-256 in lower-case hex: Buffer.from stops at the first other character.
  if (!/^[0-9a-f]{64}$/.test(given)) return false;
  const a = Buffer.from(given, 'hex');
  const b = Buffer.from(expected, 'hex');
  return a.length === b.length && a.length > 0 && timingSafeEqual(a, b);
}

/**
 * The signed parts of an identity for one call: `path` with its query exactly as sent, `body` the exact
 * bytes sent, `headers` the call's headers (only its idempotency headers are signed). A body may carry
 * them for a batch of calls, or the headers (`identityHeaders`).
 */
export function signedIdentity(
  callKey: CallKey,
  identity: Identity,
  method: string,
  path: string,
  body: SignedBody = null,
  headers?: Headers,
  now = Date.now(),
): SignedIdentity {
  const json = JSON.stringify({ ...identity, signature_version: SIGNATURE_VERSION });
  const bodyHash = bodySha256(body);
  const call = callOf(method, path, bodyHash, idempotencySha256(headers));
  const memoKey = `${call}\n${json}`;
  const memo = signedMemo.get(memoKey);
  if (memo && memo.callKey === callKey && now >= memo.at && now - memo.at < REUSE_MS) return memo.signed;
  const encoded = Buffer.from(json).toString('base64url');
  const ts = String(now);
  const signed: SignedIdentity = {
    caller: callKey.caller,
    identity: encoded,
    ts,
    sig3: macV3(callKey.key, callKey.caller, callKey.callee, ts, call, encoded),
  };
  if (callKey.legacySecret !== undefined) {
    signed.sig = macV1(callKey.legacySecret, ts, encoded, method, path);
    signed.sig2 = macV2(callKey.legacySecret, ts, encoded, method, path, bodyHash);
  }
  remember(signedMemo, memoKey, { callKey, signed, at: now });
  return signed;
}

/** The headers that carry a signed identity. */
export function identityHeaders(signed: SignedIdentity): Record<string, string> {
  const headers: Record<string, string> = {
    [IDENTITY_HEADER]: signed.identity,
    [IDENTITY_TS_HEADER]: signed.ts,
  };
  if (signed.caller !== undefined) headers[CALLER_HEADER] = signed.caller;
  if (signed.sig3 !== undefined) headers[IDENTITY_SIG3_HEADER] = signed.sig3;
  if (signed.sig !== undefined) headers[IDENTITY_SIG_HEADER] = signed.sig;
  if (signed.sig2 !== undefined) headers[IDENTITY_SIG2_HEADER] = signed.sig2;
  return headers;
}

/**
 * The identity headers of one call: `path` with its query as sent, `body` the exact bytes sent,
 * `headers` the other headers sent (their idempotency headers are signed).
 */
export function signIdentity(
  callKey: CallKey,
  identity: Identity,
  method: string,
  path: string,
  body: SignedBody = null,
  headers?: Headers,
  now = Date.now(),
): Record<string, string> {
  return identityHeaders(signedIdentity(callKey, identity, method, path, body, headers, now));
}

/** The signed parts carried by a request's headers. */
function signedOf(headers: Headers) {
  return {
    caller: headers[CALLER_HEADER],
    identity: headers[IDENTITY_HEADER],
    ts: headers[IDENTITY_TS_HEADER],
    sig2: headers[IDENTITY_SIG2_HEADER],
    sig3: headers[IDENTITY_SIG3_HEADER],
  };
}

/** The verified call of a request's headers, or null unless its signature holds for this call. */
export function verifyIdentity(
  keys: CallerKeys,
  headers: Headers,
  method: string,
  path: string,
  body: SignedBody = null,
  now = Date.now(),
): VerifiedCall | null {
  return verifySignedIdentity(keys, signedOf(headers), method, path, body, headers, now);
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
export function hasFreshIdentity(headers: Headers, now = Date.now()): boolean {
  return plausible({ identity: headers[IDENTITY_HEADER], ts: headers[IDENTITY_TS_HEADER] }, now);
}

/**
 * The verified call of a signed identity's parts, or null unless the signature holds for this call:
 * `path` with its query as received, `body` the exact bytes received, `headers` the headers received
 * (their idempotency headers; none for a call carried in a batch's body).
 */
export function verifySignedIdentity(
  keys: CallerKeys,
  signed: { caller?: unknown; identity?: unknown; ts?: unknown; sig2?: unknown; sig3?: unknown },
  method: string,
  path: string,
  body: SignedBody = null,
  headers?: Headers,
  now = Date.now(),
): VerifiedCall | null {
  const { caller, identity: encoded, ts, sig2, sig3 } = signed;
  if (!plausible(signed, now) || typeof encoded !== 'string' || typeof ts !== 'string') return null;
  if (sig3 !== undefined) {
    if (typeof sig3 !== 'string' || typeof caller !== 'string' || !CALLER_NAME.test(caller)) return null;
    const callerKeys = keys.keys.get(caller);
    if (!callerKeys) return null;
    const call = callOf(method, path, bodySha256(body), idempotencySha256(headers));
    for (const key of callerKeys) {
      // The same parts checked before for the same call: the same answer, without the HMAC and the parse.
      const memo = verifiedMemo.get(sig3);
      if (
        memo &&
        memo.callee === keys.callee &&
        memo.key === key &&
        memo.caller === caller &&
        memo.encoded === encoded &&
        memo.ts === ts &&
        memo.call === call
      )
        return { caller, identity: memo.identity };
      if (!sameHex(sig3, macV3(key, caller, keys.callee, ts, call, encoded))) continue;
      const identity = parseIdentity(encoded);
      if (!identity) return null;
      remember(verifiedMemo, sig3, { callee: keys.callee, key, caller, encoded, ts, call, identity });
      return { caller, identity };
    }
    return null;
  }
  // The previous release's form, accepted only while this service is given INTERNAL_SECRET.
  if (typeof sig2 !== 'string' || keys.legacySecrets.length === 0) return null;
  const bodyHash = bodySha256(body);
  for (const secret of keys.legacySecrets) {
    if (!sameHex(sig2, macV2(secret, ts, encoded, method, path, bodyHash))) continue;
    const identity = parseIdentity(encoded);
    return identity ? { caller: LEGACY_CALLER, identity } : null;
  }
  return null;
}

/** The identity in `encoded`; null when it does not parse, or its version marker is not the current one. */
function parseIdentity(encoded: string): Identity | null {
  try {
    const raw: unknown = JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8'));
    const version = (raw as { signature_version?: unknown } | null)?.signature_version;
    if (version !== SIGNATURE_VERSION) return null;
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
    /** The service that signed the call (identity.ts), set with `identity`. */
    caller?: string;
  }
}

/**
 * Refuses any request that no known caller signed: the signature covers the path with its query as
 * received and the body's exact bytes, so the body is read here (at most 1 MiB) and kept in
 * `req.rawBody` for the JSON parser (http.ts jsonParser). A request without plausible identity headers
 * is refused before its body is read. What the caller may call is checked next (caller-access.ts).
 */
export function requireIdentity(keys: CallerKeys) {
  return (req: Request, _res: Response, next: NextFunction) => {
    if (!hasFreshIdentity(req.headers)) {
      req.resume();
      return next(unauthorized());
    }
    // Bytes a JSON parser mounted before this check already read (http.ts keeps them), else the body.
    const read = req.rawBody !== undefined ? Promise.resolve(req.rawBody) : readBody(req);
    read.then((raw) => {
      req.rawBody = raw;
      const verified = verifyIdentity(keys, req.headers, req.method, req.originalUrl, raw);
      if (!verified) return next(unauthorized());
      req.identity = verified.identity;
      req.caller = verified.caller;
      next();
    }, next);
  };
}

/** The identity set by requireIdentity; a handler behind it can rely on it. */
export function identityOf(req: Request): Identity {
  if (!req.identity) throw unauthorized();
  return req.identity;
}
