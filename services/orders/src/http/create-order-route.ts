import type { Identity } from '@seller-api/contracts';
import {
  keyedId,
  mountPlainRoute,
  scopeOf,
  type Answer,
  type IdempotentRequest,
  type PlainRequest,
  type PlainRoute,
  type Runtime,
} from '@seller-api/service-kit';
import type { Express } from 'express';
import type { PaymentsClient } from '../clients/payments';
import { prepareOrder, type PrepareDeps } from '../domain/create-order';
import { ChargeAsk, releaseUnstoredCharge } from '../domain/unstored-charges';
import { OrderWrites, orderWriterIn, storeOrder } from '../db/order-writes';
import { ProductLookup, sellerRecords } from '../db/products';
import { createOrderMetrics } from '../metrics';
import { presentCreatedOrder } from './presenters';

export interface CreateOrderRouteDeps {
  runtime: Runtime;
  payments: PaymentsClient;
  targets: PrepareDeps['targets'];
}

/**
 * `POST /sellers/orders/`, the hottest route: served on plain node:http (the kit's plain-route.ts), and
 * by express for the requests that path leaves to it (a query string, another content type).
 */
export function mountCreateOrderRoute(
  app: Express,
  { runtime, payments, targets }: CreateOrderRouteDeps,
): PlainRoute {
  const orderMetrics = createOrderMetrics(runtime.metrics);
  const products = new ProductLookup();
  const writes = new OrderWrites(runtime.sql);

  /** Validates, prices and charges the order, then stores it, under its key when it has one. */
  const create = async (
    identity: Identity,
    body: unknown,
    keyed: IdempotentRequest | null,
    charge: ChargeAsk,
  ) => {
    const prepared = await prepareOrder(sellerRecords(runtime.orm.em, products), scopeOf(identity), body, {
      requestCharge: charge.request,
      targets,
      orderId: keyed ? keyedId(keyed) : undefined,
    });
    const answer = await runtime.idempotency.run(keyed, async (_em, sql) => {
      // A keyed order is written in its key's transaction; the others share batched statements.
      const result = await storeOrder(prepared, keyed ? orderWriterIn(sql) : writes);
      return { status: 201, body: { message: 'Order created.', data: presentCreatedOrder(result) } };
    });
    return { answer, grossAmount: prepared.write.order.grossAmount };
  };

  const handle = async ({ identity, body, keyed }: PlainRequest): Promise<Answer> => {
    // A retry of a finished request is answered before anything runs.
    const stored = await runtime.idempotency.find(keyed);
    if (stored) return stored;
    // The charge is asked for outside the key's transaction, which then holds a connection only
    // for the write. A keyed order's id comes from its key: a duplicate racing this one, or a retry
    // after a failure, gets the same charge from payments and writes nothing more
    // (docs/idempotency.md).
    const charge = new ChargeAsk((request) => payments.createCharge(identity, request), !!keyed);
    let created: Awaited<ReturnType<typeof create>>;
    try {
      created = await create(identity, body, keyed, charge);
    } catch (err) {
      // Failed once payments was asked for the charge: none may stay payable without its order.
      if (charge.asked) {
        await releaseUnstoredCharge(charge.asked, err, {
          cancel: (id) => payments.act(identity, id, 'cancel'),
          logger: runtime.logger,
          record: orderMetrics.unstoredCharge,
        });
      }
      throw err;
    }
    if (!created.answer.replayed) {
      runtime.relay.wake();
      orderMetrics.orderCreated(identity.environment, created.grossAmount);
    }
    return created.answer;
  };

  return mountPlainRoute(app, { method: 'POST', path: '/sellers/orders/', handle });
}
