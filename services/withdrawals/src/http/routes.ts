import {
  DenyWithdrawalRequest,
  OpsWithdrawalListQuery,
  WithdrawalListQuery,
  WithdrawalPathParams,
} from '@seller-api/contracts';
import {
  forbidden,
  identityOf,
  parseOrThrow,
  route,
  sellerScope,
  type Runtime,
} from '@seller-api/service-kit';
import type { Express, Request } from 'express';
import { balanceOf } from '../domain/balance';
import {
  decideWithdrawal,
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

/** The gateway lets only operator keys reach /ops/; this holds even for a request that bypasses it. */
function operatorId(req: Request): string {
  const identity = identityOf(req);
  if (identity.role !== 'operator') throw forbidden('Only operator keys may use operator routes.');
  return identity.user_id;
}

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
      const withdrawal = await requestWithdrawal(em(), sellerScope(req), req.body, {
        minAmount: deps.minAmount,
      });
      deps.onRequested();
      res.status(201).json({ message: 'Withdrawal requested.', data: presentWithdrawal(withdrawal) });
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
      operatorId(req);
      const query = parseOrThrow(OpsWithdrawalListQuery, req.query, 'Invalid query.');
      const { rows, next } = await listForOperators(em(), query);
      res.json({
        message: 'Withdrawals retrieved.',
        data: { results: rows.map(presentForOperator), next_cursor: next },
      });
    }),
  );
  const decide = (path: string, decision: (req: Request) => Decision, done: string) =>
    app.post(
      path,
      route(async (req, res) => {
        const operator = operatorId(req);
        const id = withdrawalId(req);
        const withdrawal = await decideWithdrawal(em(), id, decision(req), operator);
        if (withdrawal.status === 'APPROVED') deps.onApproved();
        res.json({ message: done, data: presentForOperator(withdrawal) });
      }),
    );
  decide('/ops/withdrawals/:uuid/approve/', () => ({ action: 'approve' }), 'Withdrawal approved.');
  decide(
    '/ops/withdrawals/:uuid/deny/',
    (req) => ({
      action: 'deny',
      // Action routes accept an empty body (decisions.md 4).
      reason: parseOrThrow(DenyWithdrawalRequest, req.body ?? {}, 'Invalid deny request.').reason ?? null,
    }),
    'Withdrawal denied.',
  );
}
