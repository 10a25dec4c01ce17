import {
  AmountDueQuery,
  OrderListQuery,
  OrderPathParams,
  OrderSummaryQuery,
  TrackingUpdateRequest,
} from '@seller-api/contracts';
import { parseOrThrow, parseQueryOrThrow, route, sellerScope, type Runtime } from '@seller-api/service-kit';
import type { Express, Request } from 'express';
import { findOwnedOrder, getOrder, listOrders, summarizeOrders, updateTracking } from '../db/orders';
import { amountDueOf } from '../domain/due-date';
import { presentOrderDetail, presentOrderListItem } from './presenters';
import { listRecordsRoute } from './seller-records';

/** The order id of a `/:uuid/` path; a 400 when it is not one. */
export const orderIdOf = (req: Request) =>
  parseOrThrow(OrderPathParams, req.params, 'Invalid order id.').uuid;

/** Reading the seller's orders and tracking their shipment (created by create-order-route.ts). */
export function mountOrderRoutes(app: Express, runtime: Runtime): void {
  const em = () => runtime.orm.em.fork();
  app.get(
    '/sellers/orders/',
    listRecordsRoute(runtime, {
      query: OrderListQuery,
      list: listOrders,
      present: presentOrderListItem,
      listed: 'Orders retrieved.',
    }),
  );
  // Before `:uuid`, which would take `summary` for an order id.
  app.get(
    '/sellers/orders/summary/',
    route(async (req, res) => {
      const query = parseQueryOrThrow(OrderSummaryQuery, req.query, 'Invalid query.');
      res.json({
        message: 'Order summary retrieved.',
        data: await summarizeOrders(runtime.sql, sellerScope(req), query),
      });
    }),
  );
  app.get(
    '/sellers/orders/:uuid/',
    route(async (req, res) => {
      const { order, items } = await getOrder(em(), sellerScope(req), orderIdOf(req));
      res.json({ message: 'Order retrieved.', data: presentOrderDetail(order, items) });
    }),
  );
  // What a due-date charge costs on a day (docs/pix.md, "Due-date charges"); 409 for an immediate one.
  app.get(
    '/sellers/orders/:uuid/amount-due/',
    route(async (req, res) => {
      const id = orderIdOf(req);
      const query = parseQueryOrThrow(AmountDueQuery, req.query, 'Invalid query.');
      const order = await findOwnedOrder(em(), sellerScope(req), id);
      res.json({ message: 'Amount due retrieved.', data: amountDueOf(order, query.date) });
    }),
  );
  app.patch(
    '/sellers/orders/:uuid/tracking/',
    route(async (req, res) => {
      const scope = sellerScope(req);
      const id = orderIdOf(req);
      const update = parseOrThrow(TrackingUpdateRequest, req.body, 'Invalid tracking update.');
      await updateTracking(em(), scope, id, update);
      res.json({ message: 'Tracking updated.' });
    }),
  );
}
