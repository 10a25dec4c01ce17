import {
  MedResolveRequest,
  SandboxPayRequest,
  type ChargeAction,
  type ChargeState,
} from '@seller-api/contracts';
import {
  IDEMPOTENT_REPLAYED_HEADER,
  assertOwned,
  identityOf,
  keyedRequest,
  parseOrThrow,
  route,
  sellerScope,
  type Runtime,
} from '@seller-api/service-kit';
import type { Express, Response } from 'express';
import type { PaymentsClient } from '../clients/payments';
import type { RefundHoldsClient } from '../clients/refund-holds';
import { applyChargeState, orderOwner } from '../db/charge-mirror';
import { findOwnedOrder } from '../db/orders';
import { refundMessage, refundOrder } from '../domain/refund';
import { orderIdOf } from './order-routes';

export interface ChargeActionDeps {
  runtime: Runtime;
  payments: PaymentsClient;
  holds: RefundHoldsClient;
}

/**
 * Seller actions and sandbox simulations: payments decides on the charge, the answer is mirrored
 * here at once (the internal event that follows changes nothing more). Their Idempotency-Key is kept
 * by payments, with the change (docs/idempotency.md).
 */
export function mountChargeActionRoutes(app: Express, { runtime, payments, holds }: ChargeActionDeps): void {
  const em = () => runtime.orm.em.fork();
  /** Mirrors payments' answer to an action on the order, and answers `message`. */
  const answer = async (
    res: Response,
    { state, replayed }: { state: ChargeState | null; replayed: boolean },
    message: string,
  ) => {
    if (state && (await applyChargeState(runtime.sql, state))) runtime.relay.wake();
    if (replayed) res.set(IDEMPOTENT_REPLAYED_HEADER, 'true');
    res.json({ message });
  };
  const action = (path: string, name: ChargeAction, done: string) =>
    app.post(
      path,
      route(async (req, res) => {
        const identity = identityOf(req);
        const scope = sellerScope(req);
        const id = orderIdOf(req);
        assertOwned(await orderOwner(runtime.sql, id), scope, 'Order');
        await answer(res, await payments.act(identity, id, name, keyedRequest(req)), done);
      }),
    );
  action('/sellers/orders/:uuid/cancel/', 'cancel', 'Order cancelled.');
  // A refund needs the order's net in the available balance, reserved first (domain/refund.ts).
  app.post(
    '/sellers/orders/:uuid/refund/',
    route(async (req, res) => {
      const identity = identityOf(req);
      const scope = sellerScope(req);
      const id = orderIdOf(req);
      const keyed = keyedRequest(req);
      const order = await findOwnedOrder(em(), scope, id);
      const refunded = await refundOrder(
        { payments, holds, logger: runtime.logger },
        identity,
        id,
        order,
        keyed,
      );
      // Refunded, or accepted by the PSP and still being made (domain/refund.ts).
      await answer(res, refunded, refundMessage(refunded.state));
    }),
  );
  // Pays as if on `date`, `amount` cents (docs/pix.md, "Sandbox"): checked here, decided by payments,
  // which refuses (409) what the PSP would refuse. No body, or an empty one: today, what is owed.
  app.post(
    '/sandbox/orders/:uuid/pay/',
    route(async (req, res) => {
      const identity = identityOf(req);
      const scope = sellerScope(req);
      const id = orderIdOf(req);
      const pay = parseOrThrow(SandboxPayRequest, req.body ?? {}, 'Invalid payment.');
      assertOwned(await orderOwner(runtime.sql, id), scope, 'Order');
      // Forwarded only when it says something: a payments of the previous release takes no body.
      const body = Object.keys(pay).length > 0 ? pay : undefined;
      const paid = await payments.act(identity, id, 'sandbox-pay', keyedRequest(req), undefined, body);
      await answer(res, paid, 'Payment simulated.');
    }),
  );
  action('/sandbox/orders/:uuid/expire/', 'sandbox-expire', 'Expiry simulated.');
  action('/sandbox/orders/:uuid/med/', 'sandbox-med', 'MED opened.');
  action('/sandbox/orders/:uuid/chargeback/', 'sandbox-chargeback', 'Chargeback opened.');
  app.post(
    '/sandbox/orders/:uuid/med/resolve/',
    route(async (req, res) => {
      const identity = identityOf(req);
      const scope = sellerScope(req);
      const id = orderIdOf(req);
      const { outcome } = parseOrThrow(MedResolveRequest, req.body, 'Invalid MED resolution.');
      assertOwned(await orderOwner(runtime.sql, id), scope, 'Order');
      const name = outcome === 'refunded' ? 'sandbox-med-refunded' : 'sandbox-med-rejected';
      const decided = await payments.act(identity, id, name, keyedRequest(req));
      await answer(res, decided, outcome === 'refunded' ? 'MED decided for the payer.' : 'MED rejected.');
    }),
  );
}
