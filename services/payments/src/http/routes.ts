import { CreateChargeRequest } from '@seller-api/contracts';
import { forbidden, identityOf, parseOrThrow, route, type Runtime } from '@seller-api/service-kit';
import type { Express } from 'express';
import { createCharge, toCharge, type ChargeDeps } from '../domain/charges';

export type RouteDeps = ChargeDeps;

/**
 * Internal routes, called by the orders service with the seller's signed identity (the gateway never
 * routes `/internal/`). Every route sits behind the identity check that serveService applies.
 */
export function mountRoutes(app: Express, runtime: Runtime, deps: RouteDeps): void {
  app.post(
    '/internal/charges/',
    route(async (req, res) => {
      const identity = identityOf(req);
      if (!identity.seller_id) throw forbidden('Only a seller identity can create a charge.');
      const input = parseOrThrow(CreateChargeRequest, req.body);
      const { transaction, created } = await createCharge(
        runtime.orm.em.fork(),
        {
          sellerId: identity.seller_id,
          environment: identity.environment,
          sellerName: identity.seller_name ?? null,
        },
        input,
        deps,
      );
      res
        .status(created ? 201 : 200)
        .json({ message: created ? 'Charge created.' : 'Charge retrieved.', data: toCharge(transaction) });
    }),
  );
}
