import { createHmac, timingSafeEqual } from 'node:crypto';
import { bodySha256, type CallKey, type CallerKeys, type SignedBody } from './identity';

/*
 * A PSP's TLS client certificate as the ingress of its notification host verified it, carried from
 * the gateway to payments (docs/deploy.md, "PSP notifications"): the gateway writes these headers
 * (pspClientHeaders), payments reads them (verifyPspClient). Clients cannot send `x-sa-*` headers
 * through the gateway.
 */

/** A PSP's TLS client certificate as the ingress verified it: DNs as RFC 2253 strings. */
export interface PspClientCertificate {
  subject: string;
  issuer: string;
  /** The PSP host (lower case, no port) whose ingress verified it. */
  host: string;
}

/**
 * The headers the gateway adds (its http/psp-client.ts; payments' http/psp-senders.ts reads them):
 * the certificate as base64url JSON, when it was signed (ms), and an HMAC-SHA256 with the gateway's
 * key for payments (identity.ts CallKey) over a version tag, the callee, the timestamp, the method, the
 * path with its query as sent, the SHA-256 of the exact body bytes, and the encoded certificate. Only
 * the gateway's key is accepted: no other service may vouch for a PSP. Like the signed identity of
 * every other route, a signature is good for 60 s and for that one call only. While a deployment is
 * upgraded, the previous release's form (`-sig`, with payments' INTERNAL_SECRET) is sent and accepted
 * too.
 */
export const PSP_CLIENT_HEADER = 'x-sa-psp-client';
export const PSP_CLIENT_TS_HEADER = 'x-sa-psp-client-ts';
export const PSP_CLIENT_SIG_HEADER = 'x-sa-psp-client-sig';
export const PSP_CLIENT_SIG2_HEADER = 'x-sa-psp-client-sig2';
const SIGNATURE_TAG = 'psp-client-v1';
const SIGNATURE_TAG_V2 = 'psp-client-v2';
/** The one caller whose word on a PSP's certificate is taken. */
const PSP_CLIENT_SIGNER = 'gateway';
const MAX_SKEW_MS = 60_000;
const MAX_DN = 1024;

function mac(secret: string, ts: string, method: string, path: string, bodyHash: string, encoded: string) {
  return createHmac('sha256', secret)
    .update(`${SIGNATURE_TAG}\n${ts}\n${method.toUpperCase()}\n${path}\n${bodyHash}\n${encoded}`)
    .digest('hex');
}

function macV2(
  key: string,
  callee: string,
  ts: string,
  method: string,
  path: string,
  bodyHash: string,
  encoded: string,
) {
  return createHmac('sha256', key)
    .update(
      `${SIGNATURE_TAG_V2}\n${PSP_CLIENT_SIGNER}\n${callee}\n${ts}\n${method.toUpperCase()}\n${path}\n${bodyHash}\n${encoded}`,
    )
    .digest('hex');
}

/** The signed headers for one call, as the gateway sends them (tests use it to play a gateway). */
export function pspClientHeaders(
  callKey: CallKey,
  certificate: PspClientCertificate,
  method: string,
  path: string,
  body: SignedBody,
  now = Date.now(),
): Record<string, string> {
  const encoded = Buffer.from(JSON.stringify(certificate)).toString('base64url');
  const ts = String(now);
  const bodyHash = bodySha256(body);
  const headers: Record<string, string> = {
    [PSP_CLIENT_HEADER]: encoded,
    [PSP_CLIENT_TS_HEADER]: ts,
    [PSP_CLIENT_SIG2_HEADER]: macV2(callKey.key, callKey.callee, ts, method, path, bodyHash, encoded),
  };
  if (callKey.legacySecret !== undefined)
    headers[PSP_CLIENT_SIG_HEADER] = mac(callKey.legacySecret, ts, method, path, bodyHash, encoded);
  return headers;
}

type Headers = Record<string, string | string[] | undefined>;

/** Whether the request carries a signed certificate at all (whatever its worth). */
export function hasPspClientHeaders(headers: Headers): boolean {
  return (
    headers[PSP_CLIENT_HEADER] !== undefined ||
    headers[PSP_CLIENT_TS_HEADER] !== undefined ||
    headers[PSP_CLIENT_SIG_HEADER] !== undefined ||
    headers[PSP_CLIENT_SIG2_HEADER] !== undefined
  );
}

/** Whether the signed certificate's timestamp is of now: checked before the body is read (no HMAC). */
export function isFreshPspClient(headers: Headers, now = Date.now()): boolean {
  const ts = headers[PSP_CLIENT_TS_HEADER];
  if (typeof ts !== 'string' || !/^\d{1,15}$/.test(ts)) return false;
  return Math.abs(now - Number(ts)) <= MAX_SKEW_MS;
}

/**
 * The certificate the gateway signed for this call, or null unless its signature holds for this
 * method, path (with its query, as received) and body, with one of the gateway's keys for this service
 * (or, while a deployment is upgraded, one of its previous secrets), within 60 s. A `-sig2` that fails
 * never falls back to `-sig`.
 */
export function verifyPspClient(
  keys: CallerKeys,
  headers: Headers,
  method: string,
  path: string,
  body: SignedBody,
  now = Date.now(),
): PspClientCertificate | null {
  const encoded = headers[PSP_CLIENT_HEADER];
  const ts = headers[PSP_CLIENT_TS_HEADER];
  const sig = headers[PSP_CLIENT_SIG_HEADER];
  const sig2 = headers[PSP_CLIENT_SIG2_HEADER];
  if (typeof encoded !== 'string' || typeof ts !== 'string' || !isFreshPspClient(headers, now)) return null;
  const bodyHash = bodySha256(body);
  const matches = (given: unknown, expected: (secret: string) => string, secrets: readonly string[]) => {
    if (typeof given !== 'string' || !/^[0-9a-f]{64}$/.test(given)) return false;
    const bytes = Buffer.from(given, 'hex');
    return secrets.some((secret) => timingSafeEqual(bytes, Buffer.from(expected(secret), 'hex')));
  };
  const valid =
    sig2 !== undefined
      ? matches(
          sig2,
          (key) => macV2(key, keys.callee, ts, method, path, bodyHash, encoded),
          keys.keys.get(PSP_CLIENT_SIGNER) ?? [],
        )
      : matches(sig, (secret) => mac(secret, ts, method, path, bodyHash, encoded), keys.legacySecrets);
  return valid ? parseCertificate(encoded) : null;
}

function parseCertificate(encoded: string): PspClientCertificate | null {
  try {
    const raw = JSON.parse(Buffer.from(encoded, 'base64url').toString('utf8')) as Partial<
      Record<keyof PspClientCertificate, unknown>
    > | null;
    const { subject, issuer, host } = raw ?? {};
    if (typeof subject !== 'string' || typeof issuer !== 'string' || typeof host !== 'string') return null;
    if (subject === '' || subject.length > MAX_DN || issuer.length > MAX_DN) return null;
    return { subject, issuer, host };
  } catch {
    return null;
  }
}
