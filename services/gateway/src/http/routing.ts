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

/** The route template for metrics: ids replaced so label cardinality stays bounded. */
export function routeTemplate(path: string): string {
  return path
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi, ':id')
    .replace(/\/\d+(?=\/|$)/g, '/:n')
    .replace(/\/evt_[A-Za-z0-9]+/g, '/:event_id');
}
