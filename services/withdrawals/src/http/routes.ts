import { forbidden, identityOf, route, type Runtime } from '@seller-api/service-kit';
import type { Express } from 'express';
import { balanceOf } from '../domain/balance';

export function mountRoutes(app: Express, runtime: Runtime): void {
  app.get(
    '/finance/balance/',
    route(async (req, res) => {
      const identity = identityOf(req);
      if (!identity.seller_id) throw forbidden('Only seller keys have a balance.');
      const data = await balanceOf(runtime.orm.em.fork(), identity.seller_id, identity.environment);
      res.json({ message: 'Balance retrieved.', data });
    }),
  );
}
