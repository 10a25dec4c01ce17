import type { Environment, Role } from '@seller-api/contracts';

export type Upstream = 'orders' | 'payments' | 'withdrawals' | 'webhooks';

export interface RouteRule {
  prefix: string;
  upstream: Upstream;
  /** null: public route, no API key (the service authenticates it its own way). */
  role: Role | null;
  environment?: Environment;
}

/** Which service owns which public path, and who may call it. The only routing table there is. */
export const ROUTES: readonly RouteRule[] = [
  { prefix: '/sellers/', upstream: 'orders', role: 'seller' },
  { prefix: '/sandbox/', upstream: 'orders', role: 'seller', environment: 'test' },
  { prefix: '/finance/', upstream: 'withdrawals', role: 'seller' },
  { prefix: '/ops/withdrawals/', upstream: 'withdrawals', role: 'operator' },
  { prefix: '/config/webhooks/', upstream: 'webhooks', role: 'seller' },
  { prefix: '/psp/', upstream: 'payments', role: null },
];

export function matchRoute(path: string): RouteRule | null {
  // `/sellers/orders` and `/sellers/orders/` are the same resource.
  const normalised = path.endsWith('/') ? path : `${path}/`;
  return ROUTES.find((r) => normalised.startsWith(r.prefix)) ?? null;
}

/**
 * Whether a request's Host header names `expected` (lower case, no port). Host names compare
 * case-insensitively; the port, and the brackets of an IPv6 literal, are not part of the name.
 */
export function hostIs(hostHeader: string | undefined, expected: string): boolean {
  if (!hostHeader) return false;
  const end = hostHeader.startsWith('[') ? hostHeader.indexOf(']') + 1 : hostHeader.indexOf(':');
  const host = end > 0 ? hostHeader.slice(0, end) : hostHeader;
  return host.toLowerCase() === expected;
}

/** The route template for metrics: ids replaced so label cardinality stays bounded. */
export function routeTemplate(path: string): string {
  return path
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, ':id')
    .replace(/\/\d+(?=\/|$)/g, '/:n')
    .replace(/\/evt_[A-Za-z0-9]+/g, '/:event_id');
}
