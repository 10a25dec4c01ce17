import {
  routes as documentedRoutes,
  toExpressPath,
  type Environment,
  type Role,
  type RouteDoc,
} from '@seller-api/contracts';

export type Upstream = 'orders' | 'payments' | 'withdrawals' | 'webhooks';

export interface RouteRule {
  prefix: string;
  /** A narrower match inside `prefix`, for one service's routes under another's prefix. */
  pattern?: RegExp;
  upstream: Upstream;
  /** null: public route, no API key (the service authenticates it its own way). */
  role: Role | null;
  environment?: Environment;
}

/**
 * Which service owns which public path, and who may call it. The only routing table there is; the first
 * rule that matches wins, so a narrower rule comes before the prefix it carves out of.
 */
export const ROUTES: readonly RouteRule[] = [
  // An order's postback deliveries are the dispatcher's: it keeps them, orders knows nothing of them.
  {
    prefix: '/sellers/orders/',
    pattern: /^\/sellers\/orders\/[^/]+\/postback-deliveries\//,
    upstream: 'webhooks',
    role: 'seller',
  },
  { prefix: '/sellers/', upstream: 'orders', role: 'seller' },
  { prefix: '/sandbox/', upstream: 'orders', role: 'seller', environment: 'test' },
  { prefix: '/finance/', upstream: 'withdrawals', role: 'seller' },
  { prefix: '/ops/withdrawals/', upstream: 'withdrawals', role: 'operator' },
  { prefix: '/config/webhooks/', upstream: 'webhooks', role: 'seller' },
  { prefix: '/events/', upstream: 'webhooks', role: 'seller' },
  { prefix: '/psp/', upstream: 'payments', role: null },
];

export function matchRoute(path: string): RouteRule | null {
  // `/sellers/orders` and `/sellers/orders/` are the same resource.
  const normalised = path.endsWith('/') ? path : `${path}/`;
  return ROUTES.find((r) => normalised.startsWith(r.prefix) && (r.pattern?.test(normalised) ?? true)) ?? null;
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

// The documented routes (the OpenAPI registry of the contracts), as matchers: the only labels a path
// can get, so whatever a caller sends, the metrics have a bounded set of series. Routes with fewer
// parameters are tried first, so that a literal segment (`/sellers/orders/summary/`) is never taken
// for a parameter (`/sellers/orders/{uuid}/`). Case-insensitive, as the services' Express routers
// match: `/REFUND/` reaches the refund route, so it must get the refund route's strict input too.
const parameterCount = (path: string) => path.split('{').length - 1;
const TEMPLATES = [...documentedRoutes]
  .sort((a, b) => parameterCount(a.path) - parameterCount(b.path))
  .map((route) => ({
    route,
    method: route.method.toUpperCase(),
    template: toExpressPath(route.path),
    pattern: new RegExp(`^${route.path.replace(/\/$/, '').replace(/\{[^}]+\}/g, '[^/]+')}/?$`, 'i'),
  }));

/**
 * The documented route a request is for (`/sellers/orders/:uuid/`), or null: the label of its metrics
 * and its span. A path that is not documented, a mistyped id included, has no label of its own.
 */
export function routeTemplate(method: string, path: string): string | null {
  return TEMPLATES.find((t) => t.method === method && t.pattern.test(path))?.template ?? null;
}

/** The documented route a request is for, with its schemas, or null (as routeTemplate matches it). */
export function documentedRoute(method: string, path: string): RouteDoc | null {
  return TEMPLATES.find((t) => t.method === method && t.pattern.test(path))?.route ?? null;
}
