import {
  DenyWithdrawalRequest,
  OpsWithdrawalListQuery,
  OrderPathParams,
  RefundHoldRequest,
  RefundReleaseRequest,
  WithdrawalListQuery,
  WithdrawalPathParams,
  type Environment,
} from '@seller-api/contracts';
import {
  forbidden,
  identityOf,
  keyedRequest,
  parseOrThrow,
  route,
  sellerScope,
  sendAnswer,
  type Runtime,
} from '@seller-api/service-kit';
import type { Express, Request } from 'express';
import { balanceOf } from '../db/balances';
import { holdRefund, releaseRefund } from '../domain/refund-holds';
import {
  decideWithdrawal,
  getForOperator,
  getWithdrawal,
  listForOperators,
  listWithdrawals,
  requestWithdrawal,
  type Decision,
} from '../domain/withdrawals';
import { presentForOperator, presentWithdrawal } from './presenters';

export interface RouteDeps {
  runtime: Runtime;
  minAmount: number;
  /** Called after an approval commits, so the payout starts at once instead of at the next poll. */
  onApproved(): void;
  /** Called after a request commits (an automatic approval may be due). */
  onRequested(): void;
}

const withdrawalId = (req: Request) =>
  parseOrThrow(WithdrawalPathParams, req.params, 'Invalid withdrawal id.').uuid;

/**
 * The operator behind an /ops/ request: its user and the one environment its key or panel session is
 * for, the only one it sees and decides (docs/finance.md, "Routes"). The gateway lets only operator keys reach
 * /ops/; this holds even for a request that bypasses it.
 */
function operatorOf(req: Request): { userId: string; environment: Environment } {
  const identity = identityOf(req);
  if (identity.role !== 'operator') throw forbidden('Only operator keys may use operator routes.');
  return { userId: identity.user_id, environment: identity.environment };
}

const orderId = (req: Request) => parseOrThrow(OrderPathParams, req.params, 'Invalid order id.').uuid;

export function mountRoutes(app: Express, deps: RouteDeps): void {
  const { runtime } = deps;
  const em = () => runtime.orm.em.fork();

  app.get(
    '/finance/balance/',
    route(async (req, res) => {
      const scope = sellerScope(req);
      const data = await balanceOf(em(), scope);
      res.json({ message: 'Balance retrieved.', data });
    }),
  );

  app.post(
    '/finance/withdrawals/',
    route(async (req, res) => {
      const scope = sellerScope(req);
      const answer = await runtime.idempotency.run(keyedRequest(req), async (tx) => {
        const withdrawal = await requestWithdrawal(tx, scope, req.body, { minAmount: deps.minAmount });
        return {
          status: 201,
          body: { message: 'Withdrawal requested.', data: presentWithdrawal(withdrawal) },
        };
      });
      if (!answer.replayed) deps.onRequested();
      sendAnswer(res, answer);
    }),
  );
  app.get(
    '/finance/withdrawals/',
    route(async (req, res) => {
      const scope = sellerScope(req);
      const query = parseOrThrow(WithdrawalListQuery, req.query, 'Invalid query.');
      const { rows, next } = await listWithdrawals(em(), scope, query);
      res.json({
        message: 'Withdrawals retrieved.',
        data: { results: rows.map(presentWithdrawal), next_cursor: next },
      });
    }),
  );
  app.get(
    '/finance/withdrawals/:uuid/',
    route(async (req, res) => {
      const scope = sellerScope(req);
      const withdrawal = await getWithdrawal(em(), scope, withdrawalId(req));
      res.json({ message: 'Withdrawal retrieved.', data: presentWithdrawal(withdrawal) });
    }),
  );

  app.get(
    '/ops/withdrawals/',
    route(async (req, res) => {
      const operator = operatorOf(req);
      const query = parseOrThrow(OpsWithdrawalListQuery, req.query, 'Invalid query.');
      if (query.environment && query.environment !== operator.environment)
        throw forbidden(`This operator key sees ${operator.environment} withdrawals only.`);
      const { rows, next } = await listForOperators(em(), { ...query, environment: operator.environment });
      res.json({
        message: 'Withdrawals retrieved.',
        data: { results: rows.map(presentForOperator), next_cursor: next },
      });
    }),
  );
  app.get(
    '/ops/withdrawals/:uuid/',
    route(async (req, res) => {
      const operator = operatorOf(req);
      const withdrawal = await getForOperator(em(), operator.environment, withdrawalId(req));
      res.json({ message: 'Withdrawal retrieved.', data: presentForOperator(withdrawal) });
    }),
  );
  const decide = (path: string, decision: (req: Request) => Decision, done: string) =>
    app.post(
      path,
      route(async (req, res) => {
        const operator = operatorOf(req);
        const id = withdrawalId(req);
        const decided = decision(req);
        let approved = false;
        const answer = await runtime.idempotency.run(keyedRequest(req), async (tx) => {
          const withdrawal = await decideWithdrawal(tx, id, decided, operator.userId, {
            environment: operator.environment,
          });
          approved = withdrawal.status === 'APPROVED';
          return { status: 200, body: { message: done, data: presentForOperator(withdrawal) } };
        });
        if (approved) deps.onApproved();
        sendAnswer(res, answer);
      }),
    );
  decide('/ops/withdrawals/:uuid/approve/', () => ({ action: 'approve' }), 'Withdrawal approved.');
  decide(
    '/ops/withdrawals/:uuid/deny/',
    (req) => ({
      action: 'deny',
      // Action routes accept an empty body (docs/api.md, "Requests").
      reason: parseOrThrow(DenyWithdrawalRequest, req.body ?? {}, 'Invalid deny request.').reason ?? null,
    }),
    'Withdrawal denied.',
  );

  // Internal (orders, with the seller's signed identity; the gateway never routes /internal/): a seller's
  // refund reserves the order's net before payments is asked, and gives it back when it was not made
  // (domain/refund-holds.ts, docs/finance.md "Refunds").
  app.post(
    '/internal/refund-holds/:uuid/',
    route(async (req, res) => {
      const scope = sellerScope(req);
      const id = orderId(req);
      const known = parseOrThrow(RefundHoldRequest, req.body, 'Invalid refund hold.');
      const data = await holdRefund(runtime.orm.em, scope, id, known);
      res.json({ message: data.held ? 'Refund hold reserved.' : 'Nothing to hold.', data });
    }),
  );
  app.post(
    '/internal/refund-holds/:uuid/release/',
    route(async (req, res) => {
      const scope = sellerScope(req);
      const { hold_seq: holdSeq } = parseOrThrow(
        RefundReleaseRequest,
        req.body ?? {},
        'Invalid refund release.',
      );
      const data = await releaseRefund(runtime.orm.em, scope, orderId(req), holdSeq);
      res.json({ message: data.released ? 'Refund hold released.' : 'Refund hold kept.', data });
    }),
  );
}
