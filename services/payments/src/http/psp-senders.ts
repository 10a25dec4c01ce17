import { createHash, timingSafeEqual } from 'node:crypto';
import type { Environment } from '@seller-api/contracts';
import {
  hasPspClientHeaders,
  isFreshPspClient,
  readBody,
  unauthorized,
  verifyPspClient,
  type PspClientCertificate,
  type CallerKeys,
} from '@seller-api/service-kit';
import type { Request, RequestHandler } from 'express';

/*
 * Who may send payment notifications (docs/payments.md, "bacen-api-pix"; set-up in docs/deploy.md,
 * "PSP notifications"). API Pix's callback has no credentials of its own (`security: []`): the PSP
 * authenticates with its TLS client certificate. So:
 *
 * - the ingress of the PSP's host verifies the certificate against that PSP's CA and passes the
 *   verified subject and issuer to the gateway (ingress-nginx's `ssl-client-*` headers);
 * - the gateway believes those headers only on a PSP host and from the ingress, and passes them on,
 *   signed with the gateway's key for payments, in the `x-sa-psp-client*` headers below (a client's own
 *   `x-sa-*` headers never get past the gateway);
 * - payments matches the certificate's subject (and issuer, when configured) against each
 *   environment's PSP: that is the environment whose charges the notification may pay.
 *
 * A PSP that can add a header may instead (or as well) send the per-PSP shared secret as
 * `Authorization: Bearer <secret>`. Either way the credential names one environment, never both.
 */

/** Where the PSP delivers payment notifications: the registered `/api/v1/psp/webhook` plus `/pix`. */
export const PSP_NOTIFICATION_PATH = '/api/v1/psp/webhook/pix';

// ---------------------------------------------------------------------------------------------------
// Shared secret (optional, for PSPs that can send one)
// ---------------------------------------------------------------------------------------------------

/**
 * The header carrying the per-PSP secret on notifications, as a bearer token:
 * `Authorization: Bearer <PSP_WEBHOOK_SECRET>`. The gateway forwards `Authorization` untouched on public
 * routes (no API key there), so it reaches the payments route as sent.
 */
export const PSP_NOTIFICATION_SECRET_HEADER = 'authorization';
export const PSP_NOTIFICATION_SECRET_SCHEME = 'Bearer';

/** The headers a PSP (or the test simulator) sends with a notification when it uses the secret. */
export function pspNotificationHeaders(secret: string): Record<string, string> {
  return { [PSP_NOTIFICATION_SECRET_HEADER]: `${PSP_NOTIFICATION_SECRET_SCHEME} ${secret}` };
}

/**
 * True when the header value is `Bearer <secret>` (the secret compared in constant time). Pass
 * `req.headers[PSP_NOTIFICATION_SECRET_HEADER]`; a missing, repeated or differently shaped header is refused.
 */
export function isPspNotificationAuthorized(value: string | string[] | undefined, secret: string): boolean {
  if (typeof value !== 'string' || secret === '') return false;
  const given = /^Bearer[ ]+(\S+)[ ]*$/i.exec(value)?.[1];
  if (given === undefined) return false;
  const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();
  return timingSafeEqual(digest(given), digest(secret));
}

// ---------------------------------------------------------------------------------------------------
// Client certificate, verified by the ingress and signed by the gateway
// ---------------------------------------------------------------------------------------------------

// The signed headers' format is the kit's (service-kit psp-client.ts): the gateway writes them, this
// service reads them (verifyPspClient, isFreshPspClient, hasPspClientHeaders).

// ---------------------------------------------------------------------------------------------------
// Which environment's PSP is calling
// ---------------------------------------------------------------------------------------------------

/** How one environment's PSP is recognised; null parts are not accepted for it. */
export interface PspSender {
  /** PSP_WEBHOOK_SECRET / PSP_TEST_WEBHOOK_SECRET. */
  secret: string | null;
  /** PSP_CLIENT_CERT_SUBJECT / _ISSUER (issuer null: any issuer the PSP host's CA accepts). */
  certificate: { subject: string; issuer: string | null } | null;
}

export type PspSenders = Readonly<Record<Environment, PspSender>>;

const ENVIRONMENTS = ['live', 'test'] as const;

/** The environment whose PSP holds this certificate, or null. */
export function environmentOfCertificate(
  senders: PspSenders,
  certificate: PspClientCertificate,
): Environment | null {
  return (
    ENVIRONMENTS.find((env) => {
      const expected = senders[env].certificate;
      return (
        expected !== null &&
        sameDn(expected.subject, certificate.subject) &&
        (expected.issuer === null || sameDn(expected.issuer, certificate.issuer))
      );
    }) ?? null
  );
}

/** The environment whose PSP's secret this `Authorization` value carries, or null. */
export function environmentOfSecret(
  senders: PspSenders,
  header: string | string[] | undefined,
): Environment | null {
  return (
    ENVIRONMENTS.find((env) => {
      const secret = senders[env].secret;
      return secret !== null && isPspNotificationAuthorized(header, secret);
    }) ?? null
  );
}

/**
 * A distinguished name as compared: RFC 2253 as ingress-nginx and `openssl x509 -nameopt RFC2253`
 * print it, with the spaces an operator may leave after the commas between attributes dropped.
 * Attribute types compare case-insensitively; values exactly.
 */
export function normaliseDn(dn: string): string {
  const parts: string[] = [];
  let current = '';
  for (let i = 0; i < dn.length; i += 1) {
    const char = dn[i] as string;
    if (char === '\\' && i + 1 < dn.length) {
      current += char + (dn[i + 1] as string);
      i += 1;
    } else if (char === ',') {
      parts.push(current);
      current = '';
    } else current += char;
  }
  parts.push(current);
  return parts
    .map((part) => {
      const trimmed = part.trim();
      const eq = trimmed.indexOf('=');
      return eq < 0
        ? trimmed
        : `${trimmed.slice(0, eq).trim().toUpperCase()}=${trimmed.slice(eq + 1).trim()}`;
    })
    .join(',');
}

function sameDn(expected: string, given: string): boolean {
  const a = Buffer.from(normaliseDn(expected), 'utf8');
  const b = Buffer.from(normaliseDn(given), 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

// ---------------------------------------------------------------------------------------------------
// The route's check
// ---------------------------------------------------------------------------------------------------

const refused = () => unauthorized('Invalid PSP credentials.');

/**
 * The notification route's check: records in `senders` the environment of the PSP that sent the
 * request, or refuses it with 401. A certificate the gateway signed names a PSP, or the shared secret
 * does (a certificate that names none, during a change of the PSP's certificate, leaves it to the
 * secret); when both name one, it must be the same. A signature that does not hold is refused
 * whatever else the request carries. Nothing else is believed: the
 * ingress's own `ssl-client-*` headers, which only the gateway may read, are never looked at here.
 * Credentials that cannot pass are refused before the body is read; the body is then read here, up to
 * `maxBytes` (PSP_NOTIFICATION_MAX_BYTES, else 413), and kept for the JSON parser: a signed certificate
 * is checked against its exact bytes.
 */
export function pspOnly(
  pspSenders: PspSenders,
  callerKeys: CallerKeys,
  senders: WeakMap<Request, Environment>,
  maxBytes: number,
): RequestHandler {
  return (req, _res, next) => {
    const bySecret = environmentOfSecret(pspSenders, req.headers[PSP_NOTIFICATION_SECRET_HEADER]);
    const read = () => (req.rawBody !== undefined ? Promise.resolve(req.rawBody) : readBody(req, maxBytes));
    if (!hasPspClientHeaders(req.headers)) {
      if (!bySecret) return next(refused());
      read().then((raw) => {
        req.rawBody = raw;
        senders.set(req, bySecret);
        next();
      }, next);
      return;
    }
    if (!isFreshPspClient(req.headers)) {
      req.resume();
      return next(refused());
    }
    read().then((raw) => {
      req.rawBody = raw;
      const certificate = verifyPspClient(callerKeys, req.headers, req.method, req.originalUrl, raw);
      if (!certificate) return next(refused());
      const byCertificate = environmentOfCertificate(pspSenders, certificate);
      const environment = byCertificate ?? bySecret;
      if (!environment || (bySecret !== null && bySecret !== environment)) return next(refused());
      senders.set(req, environment);
      next();
    }, next);
  };
}
