import type { Identity } from '@seller-api/contracts';
import { forbidden } from '@seller-api/service-kit';
import type { IncomingHttpHeaders } from 'node:http';
import type { RouteRule } from './routing';

const BEARER = /^Bearer ([^\s]+)$/;

/** The bearer token, or null when the header is missing or malformed. */
export function bearerToken(headers: IncomingHttpHeaders): string | null {
  const header = headers.authorization;
  if (typeof header !== 'string') return null;
  return BEARER.exec(header.trim())?.[1] ?? null;
}

/** 403 for a valid key that may not use this route. */
export function authorize(identity: Identity & { suspended: boolean }, rule: RouteRule): void {
  if (rule.role && identity.role !== rule.role) {
    throw forbidden(
      rule.role === 'operator'
        ? 'This route needs an operator key.'
        : 'Operator keys cannot act on seller resources; use a seller key.',
    );
  }
  if (rule.environment && identity.environment !== rule.environment) {
    throw forbidden(`This route is available to ${rule.environment} keys only.`);
  }
  if (identity.suspended) throw forbidden('This seller account is suspended.');
}
