import {
  CreateChargeRequest,
  CreateChargesRequest,
  OrderPathParams,
  PspPixNotification,
  ReconciliationChargesQuery,
  SandboxPayRequest,
  type ChargeResult,
  type Environment,
  type Identity,
  type PspPixNotificationResponse,
} from '@seller-api/contracts';
import {
  HttpError,
  callerAccess,
  forbidden,
  identityOf,
  keyedRequest,
  mountPlainRoute,
  parseOrThrow,
  parseQueryOrThrow,
  route,
  sendAnswer,
  conflict,
  serviceUnavailable,
  unauthorized,
  verifySignedIdentity,
  type PlainRoute,
  type Runtime,
  type CallerKeys,
} from '@seller-api/service-kit';
import { PAYMENTS_ACCESS } from './callers';
import type { Express, Request, RequestHandler } from 'express';
import { z } from 'zod';
import { pspOnly, type PspSenders } from './psp-senders';
import {
  actOnCharge,
  createCharge,
  findCharge,
  removeDueDateChargeAtPsp,
  type ChargeDeps,
  type ChargeStoreDeps,
} from '../db/charges';
import { listPaidCharges } from '../db/paid-charges';
import { recordPayment } from '../db/psp-payments';
import { noteRefundAsked, noteRefundHold, recordRefundRefused } from '../db/refunds';
import { toCharge, type ChargeOwner } from '../domain/charges';
import type { ChargeAction } from '../domain/charge-state';
import { sandboxPayment } from '../domain/due-date-payments';
import { RefundRefused, newEndToEndId } from '../domain/lifecycle';
import { applyNotifiedPix } from './psp-notifications';

export interface RouteDeps {
  charges: ChargeDeps;
  lifecycle: ChargeStoreDeps;
  /**
   * How each environment's PSP is recognised on notifications: its client certificate (verified by
   * the ingress, signed by the gateway) or its shared secret. Whose PSP sent a notification decides
   * the environment it may pay (http/psp-senders.ts).
   */
  pspSenders: PspSenders;
  /** PSP_NOTIFICATION_MAX_BYTES: a notification's body is read up to this, else 413. */
  pspMaxBytes: number;
  /** Checks the identity each charge of a batch carries, and a PSP's certificate the gateway vouches for. */
  callerKeys: CallerKeys;
}

const CHARGES_PATH = '/internal/charges/';
// What each charge of a batch is checked against, as its own call would be.
const chargeAccess = callerAccess(PAYMENTS_ACCESS);

function ownerOf(req: Request): ChargeOwner {
  return ownerOfIdentity(identityOf(req));
}

function ownerOfIdentity(identity: Identity): ChargeOwner {
  if (!identity.seller_id) throw forbidden('Only a seller identity can act on a charge.');
  return {
    sellerId: identity.seller_id,
    environment: identity.environment,
    sellerName: identity.seller_name ?? null,
  };
}

/** Internal action names (orders calls them) and what they do to the charge. */
const ACTIONS: Record<string, Exclude<ChargeAction, 'pay'> | 'pay'> = {
  cancel: 'cancel',
  refund: 'refund',
  'sandbox-pay': 'pay',
  'sandbox-expire': 'expire',
  'sandbox-med': 'open_med',
  'sandbox-med-refunded': 'med_refunded',
  'sandbox-med-rejected': 'med_rejected',
  'sandbox-chargeback': 'chargeback',
};
/** `?hold_seq=` on a refund: the ledger hold orders reserved for it (absent: an earlier orders). */
const RefundActionQuery = z.object({
  hold_seq: z.coerce.number().int().min(1).max(Number.MAX_SAFE_INTEGER).optional(),
});

const ActionParams = OrderPathParams.extend({
  action: z.enum(Object.keys(ACTIONS) as [string, ...string[]]),
});

/** The PSP's notifications (docs/pix.md): the only payments route the gateway exposes publicly. */
export function mountPublicRoutes(
  app: Express,
  runtime: Runtime,
  deps: RouteDeps,
  json: RequestHandler,
): void {
  // The PSP's credentials name the environment it pays in: the live PSP's certificate or secret pays
  // live charges only, so it can never pay a test charge.
  const senders = new WeakMap<Request, Environment>();
  app.post(
    '/psp/webhook/pix',
    pspOnly(deps.pspSenders, deps.callerKeys, senders, deps.pspMaxBytes),
    json,
    route(async (req, res) => {
      const environment = senders.get(req);
      if (!environment) throw unauthorized('Invalid PSP credentials.');
      const notification = parseOrThrow(PspPixNotification, req.body, 'Invalid notification.');
      // Each payment is recorded on its own (one charge row, one end-to-end id: no lock order to keep),
      // a few at a time, so a PSP's batch is answered well within its timeout; outcomes keep its order.
      const outcomes: PspPixNotificationResponse['data']['outcomes'] = await inOrderAtMost(
        NOTIFICATION_CONCURRENCY,
        notification.pix,
        (pix) => applyNotifiedPix(runtime.orm.em, environment, pix, deps.lifecycle),
      );
      const answer: PspPixNotificationResponse = { message: 'Notification received.', data: { outcomes } };
      res.json(answer);
    }),
  );
}

/** How many payments of one PSP notification are recorded at once (each holds a connection). */
const NOTIFICATION_CONCURRENCY = 4;

/** `work` over `items` with at most `limit` in flight; the results in the items' order. */
async function inOrderAtMost<T, R>(
  limit: number,
  items: readonly T[],
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await work(items[i] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/**
 * Internal routes, called by the orders service with the seller's signed identity, and by withdrawals'
 * reconciliation with an operator's (the gateway never routes `/internal/`). Every route sits behind the
 * identity check that serveService applies.
 */
export function mountRoutes(app: Express, runtime: Runtime, deps: RouteDeps): PlainRoute[] {
  const chargeDeps: ChargeDeps = { ...deps.charges, outboxStored: () => runtime.relay.wake() };
  const charge = async (owner: ChargeOwner, input: CreateChargeRequest) => {
    // The global manager: createCharge forks it only when it reads (a remote PSP, a repeated call).
    const { created, charge } = await createCharge(runtime.orm.em, owner, input, chargeDeps);
    return { status: created ? (201 as const) : (200 as const), charge };
  };

  app.post(
    CHARGES_PATH,
    route(async (req, res) => {
      const { status, charge: data } = await charge(
        ownerOf(req),
        parseOrThrow(CreateChargeRequest, req.body),
      );
      res.status(status).json({ message: status === 201 ? 'Charge created.' : 'Charge retrieved.', data });
    }),
  );

  // The charges of concurrent creates, sent together by orders: each checked, made and answered as its
  // own call to CHARGES_PATH would have been, and written to the database together (ChargeWrites).
  // The hottest route, served on plain node:http (the kit's plain-route.ts) and by express for the
  // requests that path leaves to it.
  const chargesBatchRoute = mountPlainRoute(app, {
    method: 'POST',
    path: '/internal/charges/batch/',
    async handle({ body, caller }) {
      const { charges } = parseOrThrow(CreateChargesRequest, body);
      // Each identity was signed over the bytes of its charge as its own call would send them
      // (JSON.stringify of the charge as orders built it, which the received JSON gives back).
      const sent = (body as { charges: { charge: unknown }[] }).charges;
      const results = await Promise.all(
        charges.map(async ({ signed, charge: input }, i): Promise<ChargeResult> => {
          try {
            const verified = verifySignedIdentity(
              deps.callerKeys,
              signed,
              'POST',
              CHARGES_PATH,
              JSON.stringify(sent[i]?.charge),
            );
            // Each charge signed by the caller of the batch itself, with a role its row lets make charges.
            if (!verified || verified.caller !== caller) throw unauthorized();
            chargeAccess.check(caller, 'POST', CHARGES_PATH, verified.identity.role);
            return await charge(ownerOfIdentity(verified.identity), input);
          } catch (err) {
            if (err instanceof HttpError) return { status: err.status, code: err.code, message: err.message };
            runtime.logger.error({ err, order_uuid: input.order_uuid }, 'charge of a batch failed');
            return { status: 500, code: 'internal_error', message: 'Internal server error.' };
          }
        }),
      );
      return { status: 200, body: { message: 'Charges processed.', data: { results } } };
    },
  });

  // The seller panel shows a PENDING order's QR code; the order detail carries no charge data.
  app.get(
    '/internal/charges/:uuid/',
    route(async (req, res) => {
      const { uuid } = parseOrThrow(OrderPathParams, req.params, 'Invalid order id.');
      const charge = await findCharge(runtime.orm.em, ownerOf(req), uuid);
      res.json({ message: 'Charge retrieved.', data: toCharge(charge) });
    }),
  );

  // The ledger's reconciliation (withdrawals) reads the paid charges of every seller of one environment:
  // an operator's identity, and only for the environment it was signed for (as an operator key).
  app.get(
    '/internal/transactions/',
    route(async (req, res) => {
      const identity = identityOf(req);
      if (identity.role !== 'operator') throw forbidden('Only an operator identity may list transactions.');
      const query = parseQueryOrThrow(ReconciliationChargesQuery, req.query, 'Invalid query.');
      if (query.environment !== identity.environment)
        throw forbidden(`This operator identity may list ${identity.environment} transactions only.`);
      const { results, next } = await listPaidCharges(runtime.sql, query);
      res.json({ message: 'Transactions retrieved.', data: { results, next_cursor: next } });
    }),
  );

  app.post(
    '/internal/charges/:uuid/:action/',
    route(async (req, res) => {
      const owner = ownerOf(req);
      const { uuid, action } = parseOrThrow(ActionParams, req.params, 'Invalid charge action.');
      const what = ACTIONS[action] ?? 'cancel';
      if (action.startsWith('sandbox-') && owner.environment !== 'test')
        throw forbidden('Sandbox actions are for test keys only.');
      // The sandbox pays as if on a date, an amount (orders forwards the seller's body as it is).
      const payAsked = what === 'pay' ? parseOrThrow(SandboxPayRequest, req.body ?? {}, 'Invalid payment.') : null;
      // A due-date charge at a remote PSP is removed there first, outside any transaction: no row is
      // locked while the PSP answers (its removal is idempotent: a retry after a failure below is safe).
      if (what === 'cancel') await removeDueDateChargeAtPsp(runtime.orm.em, owner, uuid, deps.lifecycle);
      let refundHold: number | null = null;
      if (what === 'refund') {
        // A keyed refund that already finished is answered as it was, and asks nothing: noting an ask
        // would start a new attempt after a failed one that no PSP call follows.
        // The ledger's hold this request reserved (orders passes its number; docs/finance.md "Refunds").
        const { hold_seq: holdSeq } = parseQueryOrThrow(
          RefundActionQuery,
          req.query,
          'Invalid refund query.',
        );
        refundHold = holdSeq ?? null;
        const stored = await runtime.idempotency.find(keyedRequest(req));
        if (stored) {
          if (holdSeq !== undefined) await noteRefundHold(runtime.sql, owner, uuid, holdSeq);
          return sendAnswer(res, stored);
        }
        // Committed before the keyed transaction opens: a lost PSP answer must not erase it.
        await noteRefundAsked(
          runtime.sql,
          owner,
          uuid,
          deps.lifecycle,
          refundHold,
          keyedRequest(req)?.key ?? null,
        );
      }
      // The change and its Idempotency-Key record (forwarded by orders) commit together.
      const late: { refund: (() => Promise<void>) | null } = { refund: null };
      const answer = await runtime.idempotency
        .run(keyedRequest(req), async (tx) => {
          if (what === 'pay') {
            // The sandbox pays the way a PSP notification would, through the very same code.
            const charge = await findCharge(tx, owner, uuid);
            const now = new Date();
            // What the PSP would take on the day asked (docs/pix.md "Sandbox"); else refused, nothing paid.
            const pay = sandboxPayment(charge, { date: payAsked?.date, amount: payAsked?.amount }, now);
            if (!pay.ok) throw conflict(pay.message);
            const recorded = await recordPayment(
              tx,
              {
                environment: owner.environment,
                txid: charge.txid,
                endToEndId: newEndToEndId(now),
                amountCents: pay.amount,
                paidAt: now,
                components: pay.components,
                day: pay.day,
              },
              deps.lifecycle,
            );
            late.refund = recorded.refundLate;
            return {
              status: 200,
              body: { message: `Payment ${recorded.outcome}.`, data: recorded.state },
            };
          }
          const state = await actOnCharge(
            tx,
            owner,
            uuid,
            what,
            deps.lifecycle,
            keyedRequest(req)?.key ?? null,
          );
          const message =
            state.refund?.status === 'PROCESSING' && state.status === 'PAID'
              ? 'Refund requested; the PSP is processing it.'
              : `Charge is now ${state.status}.`;
          return { status: 200, body: { message, data: state } };
        })
        .catch(async (err: unknown) => {
          // The PSP refused the refund in its answer: kept once the request's transaction rolled back.
          // Unkept, the seller gets a 503 (the hold stays) and the refund checks find the refusal later.
          // (A request the PSP refused made nothing there: a 502 whether or not that is recorded.)
          // Else (recorded meanwhile with the hold left to its message, or no longer a refusal) a 503: the
          // hold must not be given back twice.
          if (err instanceof RefundRefused) err.holdSeq = refundHold;
          if (
            err instanceof RefundRefused &&
            (await recordRefundRefused(runtime.orm.em, owner, uuid, err, deps.lifecycle)) === 'held'
          )
            throw serviceUnavailable(`${err.message} Retry the request to see where it stands.`);
          throw err;
        });
      // A late payment's refund leaves only once its recording has committed.
      await late.refund?.();
      sendAnswer(res, answer);
    }),
  );
  return [chargesBatchRoute];
}
