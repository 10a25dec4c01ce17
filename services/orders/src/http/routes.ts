import type { PlainRoute, Runtime } from '@seller-api/service-kit';
import type { Express } from 'express';
import type { PaymentsClient } from '../clients/payments';
import type { RefundHoldsClient } from '../clients/refund-holds';
import type { PrepareDeps } from '../domain/create-order';
import { mountAffiliateRoutes } from './affiliate-routes';
import { mountChargeActionRoutes } from './charge-action-routes';
import { mountCreateOrderRoute } from './create-order-route';
import { mountOrderRoutes } from './order-routes';
import { mountProductRoutes } from './product-routes';

export interface RouteDeps {
  runtime: Runtime;
  payments: PaymentsClient;
  holds: RefundHoldsClient;
  targets: PrepareDeps['targets'];
}

/** Mounts the orders routes; returns the one served on plain node:http first (create-order). */
export function mountRoutes(app: Express, { runtime, payments, holds, targets }: RouteDeps): PlainRoute[] {
  mountProductRoutes(app, runtime);
  mountAffiliateRoutes(app, runtime);
  const createOrderRoute = mountCreateOrderRoute(app, { runtime, payments, targets });
  mountOrderRoutes(app, runtime);
  mountChargeActionRoutes(app, { runtime, payments, holds });
  return [createOrderRoute];
}
