import {
  CancelWithdrawalRequest,
  DenyWithdrawalRequest,
  OpsWithdrawalListQuery,
  SellerPathParams,
  SuspensionListQuery,
  SuspensionRequest,
  OrderPathParams,
  RefundHoldRequest,
  RefundReleaseRequest,
  WithdrawalListQuery,
  WithdrawalPathParams,
  type Environment,
} from '@seller-api/contracts';
import {
  decodeCursor,
  encodeCursor,
  forbidden,
  identityOf,
  keyedRequest,
  parseOrThrow,
  parseQueryOrThrow,
  route,
  sellerScope,
  sendAnswer,
  type Runtime,
} from '@seller-api/service-kit';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Express, Request } from 'express';
import { balanceOf } from '../db/balances';
import type { WithdrawalRow } from '../db/entities';
import { activeSuspensionsOf, listSuspensions } from '../db/payout-controls';
import type { AutoApprovalRules } from '../domain/payout-controls';
import { suspendSeller, unsuspendSeller } from '../domain/suspensions';
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
import { presentForOperator, presentSuspension, presentWithdrawal } from './presenters';

export interface RouteDeps {
  runtime: Runtime;
  minAmount: number;
  /** The automatic approval's limit, caps and new-key review (docs/finance.md, "Payout controls"). */
  autoApproval: AutoApprovalRules;
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

const sellerId = (req: Request) => parseOrThrow(SellerPathParams, req.params, 'Invalid seller id.').seller_id;

export function mountRoutes(app: Express, deps: RouteDeps): void {
  const { runtime } = deps;
  const em = () => runtime.orm.em.fork();
  const rules = { minAmount: deps.minAmount, autoApproval: deps.autoApproval };

  /** Operator views with each seller's suspension in force, read in one query per page. */
  const forOperators = async (
    rows: WithdrawalRow[],
    environment: Environment,
    reader: EntityManager = em(),
  ) => {
    const suspensions = await activeSuspensionsOf(
      reader,
      environment,
      rows.map((w) => w.sellerId),
    );
    return rows.map((w) => presentForOperator(w, suspensions.get(w.sellerId) ?? null));
  };

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
        const withdrawal = await requestWithdrawal(tx, scope, req.body, rules);
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
      const query = parseQueryOrThrow(WithdrawalListQuery, req.query, 'Invalid query.');
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
      const query = parseQueryOrThrow(OpsWithdrawalListQuery, req.query, 'Invalid query.');
      if (query.environment && query.environment !== operator.environment)
        throw forbidden(`This operator key sees ${operator.environment} withdrawals only.`);
      const { rows, next } = await listForOperators(em(), { ...query, environment: operator.environment });
      res.json({
        message: 'Withdrawals retrieved.',
        data: { results: await forOperators(rows, operator.environment), next_cursor: next },
      });
    }),
  );
  // Before `/ops/withdrawals/:uuid/`, which would take `suspensions` for a withdrawal id.
  app.get(
    '/ops/withdrawals/suspensions/',
    route(async (req, res) => {
      const operator = operatorOf(req);
      const query = parseQueryOrThrow(SuspensionListQuery, req.query, 'Invalid query.');
      const after = query.cursor ? decodeCursor(query.cursor) : null;
      const rows = await listSuspensions(em(), {
        environment: operator.environment,
        active: query.active,
        sellerId: query.seller_id,
        after: after ? { at: after.createdAt, id: after.id } : null,
        limit: query.limit + 1,
      });
      const kept = rows.slice(0, query.limit);
      const last = kept[kept.length - 1];
      res.json({
        message: 'Suspensions retrieved.',
        data: {
          results: kept.map(presentSuspension),
          next_cursor:
            rows.length > query.limit && last
              ? encodeCursor({ createdAt: last.suspendedAt, id: last.id })
              : null,
        },
      });
    }),
  );
  // Suspending and lifting: per seller and the operator's environment, a reason required (kept with
  // who and when). Keyed like every POST; lifting kicks the worker, as held payouts may now go.
  const suspension = (path: string, lift: boolean) =>
    app.post(
      path,
      route(async (req, res) => {
        const operator = operatorOf(req);
        const owner = { sellerId: sellerId(req), environment: operator.environment };
        const { reason } = parseOrThrow(SuspensionRequest, req.body ?? {}, 'Invalid suspension request.');
        const by = { userId: operator.userId, reason };
        const answer = await runtime.idempotency.run(keyedRequest(req), async (tx) => {
          const row = lift ? await unsuspendSeller(tx, owner, by) : await suspendSeller(tx, owner, by);
          return {
            status: 200,
            body: {
              message: lift ? 'Withdrawals suspension lifted.' : 'Withdrawals suspended.',
              data: presentSuspension(row),
            },
          };
        });
        if (lift && !answer.replayed) deps.onApproved();
        sendAnswer(res, answer);
      }),
    );
  suspension('/ops/withdrawals/sellers/:seller_id/suspend/', false);
  suspension('/ops/withdrawals/sellers/:seller_id/unsuspend/', true);
  app.get(
    '/ops/withdrawals/:uuid/',
    route(async (req, res) => {
      const operator = operatorOf(req);
      const withdrawal = await getForOperator(em(), operator.environment, withdrawalId(req));
      const [data] = await forOperators([withdrawal], operator.environment);
      res.json({ message: 'Withdrawal retrieved.', data });
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
          // Read in the decision's transaction: its keyed answer is stored with it.
          const [data] = await forOperators([withdrawal], operator.environment, tx);
          return { status: 200, body: { message: done, data } };
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
  decide(
    '/ops/withdrawals/:uuid/cancel/',
    (req) => ({
      action: 'cancel',
      // An action route: the body may be empty (docs/api.md, "Requests").
      reason: parseOrThrow(CancelWithdrawalRequest, req.body ?? {}, 'Invalid cancel request.').reason ?? null,
    }),
    'Withdrawal canceled.',
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
