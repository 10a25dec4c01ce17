import {
  CreateAffiliateRequest,
  CreateProductRequest,
  ListQuery,
  OrderListQuery,
  MedResolveRequest,
  OrderPathParams,
  TrackingUpdateRequest,
  type ChargeAction,
  type CreateChargeRequest,
  type Identity,
} from '@seller-api/contracts';
import {
  IDEMPOTENT_REPLAYED_HEADER,
  identityOf,
  keyedId,
  keyedRequest,
  mountPlainRoute,
  parseOrThrow,
  route,
  scopeOf,
  sellerScope,
  sendAnswer,
  type PlainRoute,
  type Runtime,
} from '@seller-api/service-kit';
import type { Express, Request } from 'express';
import type { PaymentsClient } from '../clients/payments';
import type { RefundHoldsClient } from '../clients/refund-holds';
import { createAffiliate, listAffiliates } from '../domain/affiliates';
import { prepareOrder, storeOrder, type CreateOrderDeps } from '../domain/create-order';
import { findOwnedOrder, getOrder, listOrders } from '../domain/orders';
import { refundOrder } from '../domain/refund';
import { ProductLookup, createProduct, getProduct, listProducts } from '../domain/products';
import { OrderWrites, orderWriterIn } from '../db/order-writes';

import { updateTracking } from '../domain/tracking';
import {
  releaseUnstoredCharge,
  type UnstoredCharge,
  type UnstoredChargeDeps,
} from '../domain/unstored-charges';
import { applyChargeState } from '../domain/order-status';
import { createOrderMetrics } from '../metrics';
import {
  presentAffiliate,
  presentCreatedOrder,
  presentOrderDetail,
  presentOrderListItem,
  presentProduct,
} from './presenters';

export interface RouteDeps {
  runtime: Runtime;
  payments: PaymentsClient;
  holds: RefundHoldsClient;
  targets: CreateOrderDeps['targets'];
}

const orderId = (req: Request) => parseOrThrow(OrderPathParams, req.params, 'Invalid order id.').uuid;

/** Mounts the orders routes; returns the one served on plain node:http first (create-order). */
export function mountRoutes(app: Express, { runtime, payments, holds, targets }: RouteDeps): PlainRoute[] {
  const em = () => runtime.orm.em.fork();
  const orderMetrics = createOrderMetrics(runtime.metrics);
  const products = new ProductLookup();
  const writes = new OrderWrites(runtime.sql);
  const unstoredDeps = (identity: Identity): UnstoredChargeDeps => ({
    cancel: (id) => payments.act(identity, id, 'cancel'),
    logger: runtime.logger,
    record: orderMetrics.unstoredCharge,
  });

  app.post(
    '/sellers/products/',
    route(async (req, res) => {
      const scope = sellerScope(req);
      const input = parseOrThrow(CreateProductRequest, req.body, 'Invalid product.');
      const answer = await runtime.idempotency.run(keyedRequest(req), async (tx) => {
        const product = await createProduct(tx, scope, input);
        return { status: 201, body: { message: 'Product created.', data: presentProduct(product) } };
      });
      sendAnswer(res, answer);
    }),
  );
  app.get(
    '/sellers/products/',
    route(async (req, res) => {
      const { rows, next } = await listProducts(
        em(),
        sellerScope(req),
        parseOrThrow(ListQuery, req.query, 'Invalid query.'),
      );
      res.json({
        message: 'Products retrieved.',
        data: { results: rows.map(presentProduct), next_cursor: next },
      });
    }),
  );
  app.get(
    '/sellers/products/:uuid/',
    route(async (req, res) => {
      const id = parseOrThrow(OrderPathParams, req.params, 'Invalid product id.').uuid;
      res.json({
        message: 'Product retrieved.',
        data: presentProduct(await getProduct(em(), sellerScope(req), id)),
      });
    }),
  );

  app.post(
    '/sellers/affiliates/',
    route(async (req, res) => {
      const scope = sellerScope(req);
      const input = parseOrThrow(CreateAffiliateRequest, req.body, 'Invalid affiliate.');
      const answer = await runtime.idempotency.run(keyedRequest(req), async (tx) => {
        const affiliate = await createAffiliate(tx, scope, input);
        return { status: 201, body: { message: 'Affiliate created.', data: presentAffiliate(affiliate) } };
      });
      sendAnswer(res, answer);
    }),
  );
  app.get(
    '/sellers/affiliates/',
    route(async (req, res) => {
      const { rows, next } = await listAffiliates(
        em(),
        sellerScope(req),
        parseOrThrow(ListQuery, req.query, 'Invalid query.'),
      );
      res.json({
        message: 'Affiliates retrieved.',
        data: { results: rows.map(presentAffiliate), next_cursor: next },
      });
    }),
  );

  // The hottest route: served on plain node:http (the kit's plain-route.ts), and by express for the
  // requests that path leaves to it (a query string, another content type).
  const createOrderRoute = mountPlainRoute(app, {
    method: 'POST',
    path: '/sellers/orders/',
    async handle({ identity, body, keyed }) {
      // A retry of a finished request is answered before anything runs.
      const stored = await runtime.idempotency.find(keyed);
      if (stored) return stored;
      // The charge is asked for outside the key's transaction, which then holds a connection only
      // for the write. A keyed order's id comes from its key: a duplicate racing this one, or a retry
      // after a failure, gets the same charge from payments and writes nothing more
      // (docs/idempotency.md).
      let asked: UnstoredCharge | null = null;
      const requestCharge = async (request: CreateChargeRequest) => {
        asked = {
          orderId: request.order_uuid,
          grossAmount: request.gross_amount,
          made: false,
          keyed: !!keyed,
        };
        const charge = await payments.createCharge(identity, request);
        asked.made = true;
        return charge;
      };
      let answer: Awaited<ReturnType<typeof runtime.idempotency.run>>;
      let grossAmount: number;
      try {
        const prepared = await prepareOrder(runtime.orm.em, scopeOf(identity), body, {
          requestCharge,
          targets,
          products,
          orderId: keyed ? keyedId(keyed) : undefined,
        });
        grossAmount = prepared.write.order.grossAmount;
        answer = await runtime.idempotency.run(keyed, async (_em, sql) => {
          // A keyed order is written in its key's transaction; the others share batched statements.
          const result = await storeOrder(prepared, keyed ? orderWriterIn(sql) : writes);
          return { status: 201, body: { message: 'Order created.', data: presentCreatedOrder(result) } };
        });
      } catch (err) {
        // Failed once payments was asked for the charge: none may stay payable without its order.
        if (asked) await releaseUnstoredCharge(asked, err, unstoredDeps(identity));
        throw err;
      }
      if (!answer.replayed) {
        runtime.relay.wake();
        orderMetrics.orderCreated(identity.environment, grossAmount);
      }
      return answer;
    },
  });
  app.get(
    '/sellers/orders/',
    route(async (req, res) => {
      const { rows, next } = await listOrders(
        em(),
        sellerScope(req),
        parseOrThrow(OrderListQuery, req.query, 'Invalid query.'),
      );
      res.json({
        message: 'Orders retrieved.',
        data: { results: rows.map(presentOrderListItem), next_cursor: next },
      });
    }),
  );
  app.get(
    '/sellers/orders/:uuid/',
    route(async (req, res) => {
      const { order, items } = await getOrder(em(), sellerScope(req), orderId(req));
      res.json({ message: 'Order retrieved.', data: presentOrderDetail(order, items) });
    }),
  );
  app.patch(
    '/sellers/orders/:uuid/tracking/',
    route(async (req, res) => {
      const scope = sellerScope(req);
      const id = orderId(req);
      const update = parseOrThrow(TrackingUpdateRequest, req.body, 'Invalid tracking update.');
      await updateTracking(em(), scope, id, update);
      res.json({ message: 'Tracking updated.' });
    }),
  );

  // Seller actions and sandbox simulations: payments decides on the charge, the answer is mirrored
  // here at once (the internal event that follows changes nothing more). Their Idempotency-Key is
  // kept by payments, with the change (docs/idempotency.md).
  const action = (path: string, name: ChargeAction, done: string) =>
    app.post(
      path,
      route(async (req, res) => {
        const identity = identityOf(req);
        const scope = sellerScope(req);
        const id = orderId(req);
        await findOwnedOrder(em(), scope, id);
        const { state, replayed } = await payments.act(identity, id, name, keyedRequest(req));
        if (state) await applyChargeState(em(), state);
        if (replayed) res.set(IDEMPOTENT_REPLAYED_HEADER, 'true');
        res.json({ message: done });
      }),
    );
  action('/sellers/orders/:uuid/cancel/', 'cancel', 'Order cancelled.');
  // A refund needs the order's net in the available balance, reserved first (domain/refund.ts).
  app.post(
    '/sellers/orders/:uuid/refund/',
    route(async (req, res) => {
      const identity = identityOf(req);
      const { state, replayed } = await refundOrder(
        em(),
        { payments, holds, logger: runtime.logger },
        identity,
        sellerScope(req),
        orderId(req),
        keyedRequest(req),
      );
      if (state) await applyChargeState(em(), state);
      if (replayed) res.set(IDEMPOTENT_REPLAYED_HEADER, 'true');
      res.json({ message: 'Order refunded.' });
    }),
  );
  action('/sandbox/orders/:uuid/pay/', 'sandbox-pay', 'Payment simulated.');
  action('/sandbox/orders/:uuid/expire/', 'sandbox-expire', 'Expiry simulated.');
  action('/sandbox/orders/:uuid/med/', 'sandbox-med', 'MED opened.');
  action('/sandbox/orders/:uuid/chargeback/', 'sandbox-chargeback', 'Chargeback opened.');
  app.post(
    '/sandbox/orders/:uuid/med/resolve/',
    route(async (req, res) => {
      const identity = identityOf(req);
      const scope = sellerScope(req);
      const id = orderId(req);
      const { outcome } = parseOrThrow(MedResolveRequest, req.body, 'Invalid MED resolution.');
      await findOwnedOrder(em(), scope, id);
      const { state, replayed } = await payments.act(
        identity,
        id,
        outcome === 'refunded' ? 'sandbox-med-refunded' : 'sandbox-med-rejected',
        keyedRequest(req),
      );
      if (state) await applyChargeState(em(), state);
      if (replayed) res.set(IDEMPOTENT_REPLAYED_HEADER, 'true');
      res.json({ message: outcome === 'refunded' ? 'MED decided for the payer.' : 'MED rejected.' });
    }),
  );
  return [createOrderRoute];
}
