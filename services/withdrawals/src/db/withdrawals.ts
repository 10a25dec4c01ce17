import { randomUUID } from 'node:crypto';
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import {
  WithdrawalEvents,
  type Environment,
  type ListQuery,
  type WithdrawalStatus,
} from '@seller-api/contracts';
import {
  assertOwned,
  callerOrFork,
  conflict,
  notFound,
  olderThan,
  page,
  sqlInTransaction,
  type Scope,
  type Sql,
} from '@seller-api/service-kit';
import { reviewReasons, windowStart } from '../domain/payout-controls';
import { payoutOutcomeChanges, type PayoutOutcome, type PayoutRules } from '../domain/payouts';
import { moveWithdrawal } from '../domain/withdrawal-state';
import {
  MANUAL_ONLY,
  decisionChanges,
  holdOf,
  newWithdrawal,
  parseWithdrawalRequest,
  suspendedApproval,
  suspendedError,
  type Decision,
  type WithdrawalRules,
} from '../domain/withdrawals';
import { enqueueWithdrawalEvent } from '../events/payloads';
import { availableOf, underSellerLock } from './balances';
import { WithdrawalSchema, type WithdrawalRow } from './entities';
import { postEntries } from './journal';
import {
  activeSuspension,
  autoApprovalUsage,
  isKnownPixKey,
  lockAutoApprovable,
  lockPayoutsDue,
} from './payout-controls';

/**
 * The withdrawals (`withdrawals.withdrawals`): a seller's request, the operators' decisions and the
 * payout worker's steps, each one transaction that stores the change, its ledger entry and its event
 * together; the rules are domain/withdrawals.ts, domain/withdrawal-state.ts and domain/payouts.ts.
 * `sql` runs the hand-written statements; inside a transaction, on its connection (sqlInTransaction).
 */

/**
 * `POST /finance/withdrawals/`: under the seller's lock, reads the available balance (its balance row),
 * holds the amount and stores the withdrawal (PENDING) with `withdrawal.requested`, all in one
 * transaction. Two requests at the same moment take turns, and the second sees the first's hold, so
 * together they can never spend more than the balance.
 */
export async function requestWithdrawal(
  em: EntityManager,
  sql: Sql,
  scope: Scope,
  body: unknown,
  rules: WithdrawalRules,
): Promise<WithdrawalRow> {
  const input = parseWithdrawalRequest(body, rules.minAmount);
  const owner = { sellerId: scope.sellerId, environment: scope.environment };
  return underSellerLock(em, sql, owner, async (tx, inTx) => {
    // Under the lock: a suspension committed before is seen, and one made after waits for this request.
    const suspension = await activeSuspension(inTx, owner);
    if (suspension) throw suspendedError(suspension);
    const hold = holdOf(await availableOf(inTx, owner), input.amount, rules.minAmount);
    const now = rules.now?.() ?? new Date();
    // The caps read what earlier requests cleared, under the same lock: two requests at the cap take
    // turns, and the second counts the first.
    const auto = rules.autoApproval ?? MANUAL_ONLY;
    const reasons = reviewReasons(
      input.amount,
      await autoApprovalUsage(inTx, owner, windowStart(now)),
      auto.reviewNewPixKey ? await isKnownPixKey(inTx, owner, input.pix_key, input.pix_key_type) : true,
      auto,
    );
    const withdrawal = tx.create(
      WithdrawalSchema,
      newWithdrawal(randomUUID(), owner, scope.sellerName ?? '', input, reasons, now),
    );
    tx.persist(withdrawal);
    await postEntries(inTx, owner, { withdrawalId: withdrawal.id, cause: 'requested' }, [hold]);
    enqueueWithdrawalEvent(tx, WithdrawalEvents.REQUESTED, withdrawal);
    return withdrawal;
  });
}

export async function getWithdrawal(em: EntityManager, scope: Scope, id: string): Promise<WithdrawalRow> {
  return assertOwned(await em.findOne(WithdrawalSchema, { id }), scope, 'Withdrawal');
}

/** The seller's withdrawals, newest first, keyset-paginated on (created_at, id). */
export async function listWithdrawals(
  em: EntityManager,
  scope: Scope,
  query: ListQuery & { status?: readonly WithdrawalStatus[] },
) {
  const rows = await em.find(
    WithdrawalSchema,
    {
      sellerId: scope.sellerId,
      environment: scope.environment,
      // Any of the statuses asked for (docs/finance-api.md).
      ...(query.status ? { status: { $in: [...query.status] } } : {}),
      ...olderThan(query.cursor),
    },
    { orderBy: { createdAt: 'desc', id: 'desc' }, limit: query.limit + 1 },
  );
  return page(rows, query.limit);
}

/** The operators' view: every seller, one status (PENDING by default), the operator's environment. */
export async function listForOperators(
  em: EntityManager,
  query: ListQuery & { status: WithdrawalStatus; environment: Environment },
) {
  const rows = await em.find(
    WithdrawalSchema,
    {
      status: query.status,
      environment: query.environment,
      ...olderThan(query.cursor),
    },
    { orderBy: { createdAt: 'desc', id: 'desc' }, limit: query.limit + 1 },
  );
  return page(rows, query.limit);
}

/** One withdrawal for an operator; one of the other environment does not exist for it (404). */
export async function getForOperator(
  em: EntityManager,
  environment: Environment,
  id: string,
): Promise<WithdrawalRow> {
  const withdrawal = await em.findOne(WithdrawalSchema, { id, environment });
  if (!withdrawal) throw notFound('Withdrawal not found.');
  return withdrawal;
}

/**
 * An operator's approve, deny or cancel. Decided on the locked row under the seller's lock; a deny or a
 * cancel releases the hold in the same transaction as its event. A wrong move is a 409 naming the
 * current status: a cancel that the payout worker's claim beat (it locks the row too) finds PROCESSING.
 * A suspended seller's withdrawal is not approved (409). `environment`: an operator's, who decides only
 * withdrawals of its own environment; one of the other is not found (404), as if it did not exist.
 */
export async function decideWithdrawal(
  em: EntityManager,
  sql: Sql,
  id: string,
  decision: Decision,
  decidedBy: string,
  options: { environment?: Environment; now?: () => Date } = {},
): Promise<WithdrawalRow> {
  const now = options.now ?? (() => new Date());
  const found = await callerOrFork(em).findOne(
    WithdrawalSchema,
    { id, ...(options.environment ? { environment: options.environment } : {}) },
    { fields: ['sellerId', 'environment'] },
  );
  if (!found) throw notFound('Withdrawal not found.');
  const owner = { sellerId: found.sellerId, environment: found.environment };
  // The seller's lock first, then the row: the order every writer of this seller's money follows.
  return underSellerLock(em, sql, owner, async (tx, inTx) => {
    const w = await tx.findOneOrFail(WithdrawalSchema, { id }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    const move = moveWithdrawal(w.status, decision.action, w.amount);
    if (!move.ok) throw conflict(move.message);
    if (decision.action === 'approve' && (await activeSuspension(inTx, owner))) throw suspendedApproval();
    Object.assign(w, decisionChanges(move, decision, decidedBy, now()));
    if (move.entry) await postEntries(inTx, owner, { withdrawalId: w.id, cause: move.to }, [move.entry]);
    enqueueWithdrawalEvent(tx, move.event, w);
    return w;
  });
}

const nowOf = (rules: PayoutRules) => rules.now?.() ?? new Date();

/**
 * Approves, without an operator, the PENDING withdrawals their request cleared for it (below the
 * threshold, within the seller's rolling caps, to a known key when that is asked: domain/payout-controls.ts)
 * of sellers whose withdrawals are not suspended. Done by the payout worker, not the request, so the
 * request always answers PENDING and a crash in between only delays it. Rows are claimed with SKIP
 * LOCKED and no seller lock is taken (an approval posts nothing), so this never waits on a request or
 * an operator.
 */
export async function autoApprove(
  em: EntityManager,
  sql: Sql,
  rules: PayoutRules,
  limit = 20,
): Promise<number> {
  if (rules.autoApproveBelow <= 0) return 0;
  return em.fork().transactional(async (tx) => {
    const ids = await lockAutoApprovable(sqlInTransaction(sql, tx), rules.autoApproveBelow, limit);
    if (ids.length === 0) return 0;
    const due = await tx.find(WithdrawalSchema, { id: { $in: ids } }, { orderBy: { createdAt: 'asc' } });
    for (const w of due) {
      const move = moveWithdrawal(w.status, 'approve', w.amount);
      if (!move.ok) continue;
      w.status = move.to;
      w.decidedAt = nowOf(rules);
      w.decidedBy = 'auto';
      enqueueWithdrawalEvent(tx, move.event, w);
    }
    return ids.length;
  });
}

/**
 * Claims payouts to make: APPROVED withdrawals (of sellers not suspended) move to PROCESSING (`withdrawal.processing`), and
 * PROCESSING ones whose lease ran out are taken again. `processingAt` is the lease: another replica
 * leaves the row alone until it expires, so one payout is asked about by one worker at a time.
 */
export async function claimPayouts(
  em: EntityManager,
  sql: Sql,
  rules: PayoutRules,
  limit = 20,
): Promise<WithdrawalRow[]> {
  const now = nowOf(rules);
  return em.fork().transactional(async (tx) => {
    // A suspended seller's APPROVED withdrawals wait; an operator may cancel one meanwhile, under the
    // row lock this claim takes, so exactly one of the two moves it (docs/finance.md, "Payout controls").
    const ids = await lockPayoutsDue(
      sqlInTransaction(sql, tx),
      new Date(now.getTime() - rules.retryAfterMs),
      limit,
    );
    if (ids.length === 0) return [];
    const rows = await tx.find(WithdrawalSchema, { id: { $in: ids } }, { orderBy: { createdAt: 'asc' } });
    for (const w of rows) {
      if (w.status === 'APPROVED') {
        const move = moveWithdrawal(w.status, 'start_payout', w.amount);
        if (!move.ok) continue;
        w.status = move.to;
        enqueueWithdrawalEvent(tx, move.event, w);
      }
      w.processingAt = now;
      w.payoutAttempts += 1;
    }
    return rows;
  });
}

/**
 * Records the PSP's answer: PAID pays the hold out, FAILED releases it to the available balance, each
 * with its event, in one transaction under the seller's lock. An answer for a withdrawal that is no
 * longer PROCESSING (another worker finished it) changes nothing.
 */
export async function completePayout(
  em: EntityManager,
  sql: Sql,
  claimed: Pick<WithdrawalRow, 'id' | 'sellerId' | 'environment'>,
  outcome: PayoutOutcome,
  rules: Pick<PayoutRules, 'now'> = {},
): Promise<WithdrawalRow | null> {
  if (outcome.status === 'processing') return null;
  const owner = { sellerId: claimed.sellerId, environment: claimed.environment };
  return underSellerLock(em.fork(), sql, owner, async (tx, inTx) => {
    const w = await tx.findOneOrFail(
      WithdrawalSchema,
      { id: claimed.id },
      { lockMode: LockMode.PESSIMISTIC_WRITE },
    );
    const move = moveWithdrawal(
      w.status,
      outcome.status === 'paid' ? 'payout_paid' : 'payout_failed',
      w.amount,
    );
    if (!move.ok) return null;
    Object.assign(w, { status: move.to }, payoutOutcomeChanges(w, outcome, rules.now?.() ?? new Date()));
    if (move.entry) await postEntries(inTx, owner, { withdrawalId: w.id, cause: move.to }, [move.entry]);
    enqueueWithdrawalEvent(tx, move.event, w);
    return w;
  });
}
