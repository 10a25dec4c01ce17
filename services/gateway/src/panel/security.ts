import { timingSafeEqual } from 'node:crypto';
import type { Request, Response } from 'express';
import { CSRF_HEADER } from '@seller-api/contracts';
import { HttpError } from '@seller-api/service-kit';

/**
 * Nothing inline and nothing from elsewhere: scripts and styles are the built files, images may be
 * data: URLs (the PIX QR code PNG), and no other site may frame the panel.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

export function setSecurityHeaders(res: Response): void {
  res.set({
    'Content-Security-Policy': CONTENT_SECURITY_POLICY,
    'X-Content-Type-Options': 'nosniff',
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'same-origin',
    'Cross-Origin-Opener-Policy': 'same-origin',
    'Cross-Origin-Resource-Policy': 'same-origin',
  });
}

export interface CookieOptions {
  secure: boolean;
  ttlSeconds: number;
}

/** `__Host-` binds a Secure cookie to this host and path `/`: no subdomain can plant or read it. */
export function cookieName(secure: boolean): string {
  return secure ? '__Host-sa_session' : 'sa_session';
}

export function sessionCookie(token: string, { secure, ttlSeconds }: CookieOptions): string {
  const parts = [
    `${cookieName(secure)}=${token}`,
    'Path=/',
    `Max-Age=${ttlSeconds}`,
    'HttpOnly',
    'SameSite=Strict',
  ];
  if (secure) parts.push('Secure');
  return parts.join('; ');
}

export function clearedCookie(secure: boolean): string {
  return sessionCookie('', { secure, ttlSeconds: 0 });
}

export function readSessionCookie(req: Request, secure: boolean): string | null {
  const header = req.headers.cookie;
  if (!header) return null;
  const name = cookieName(secure);
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim() || null;
  }
  return null;
}

const csrfRefused = (message: string) => new HttpError(403, 'forbidden', message);

/**
 * A state change must come from the panel's own pages: when the browser says where a request comes
 * from (Origin, or Sec-Fetch-Site), it must be this origin.
 */
export function checkOrigin(req: Request, configuredOrigin: string | undefined): void {
  const origin = req.headers.origin;
  const expected = configuredOrigin
    ? new URL(configuredOrigin).origin
    : `${req.protocol}://${req.get('host') ?? ''}`;
  if (typeof origin === 'string' && origin !== expected) {
    throw csrfRefused('Cross-origin request refused.');
  }
  const site = req.headers['sec-fetch-site'];
  if (typeof site === 'string' && site !== 'same-origin' && site !== 'none') {
    throw csrfRefused('Cross-site request refused.');
  }
}

/** The synchronizer token of the session, in a header a cross-site form or link cannot set. */
export function checkCsrfToken(req: Request, expected: string): void {
  const given = req.headers[CSRF_HEADER];
  if (typeof given !== 'string') throw csrfRefused('Missing CSRF token.');
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  if (a.length !== b.length || !timingSafeEqual(a, b)) throw csrfRefused('Invalid CSRF token.');
}

/** JSON only: an HTML form cannot send it without a CORS preflight, which this origin never grants. */
export function requireJson(req: Request): void {
  const type = req.headers['content-type'] ?? '';
  if (!/^application\/json\b/i.test(type)) {
    throw new HttpError(415, 'unsupported_media_type', 'Send the body as application/json.');
  }
}
