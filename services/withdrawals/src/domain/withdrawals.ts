import { randomUUID } from 'node:crypto';
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import {
  CreateWithdrawalRequest,
  WithdrawalEvents,
  message,
  safeParseRequest,
  zodIssuesToFieldErrors,
  type Environment,
  type ListQuery,
  type WithdrawalStatus,
} from '@seller-api/contracts';
import {
  HttpError,
  assertOwned,
  badRequest,
  conflict,
  inTransaction,
  notFound,
  callerOrFork,
  olderThan,
  page,
  type Scope,
} from '@seller-api/service-kit';
import { WithdrawalSchema, type WithdrawalRow } from '../db/entities';
import { enqueueWithdrawalEvent } from '../events/payloads';
import { availableOf, lockSellerFunds } from '../db/balances';
import {
  activeSuspension,
  autoApprovalUsage,
  isKnownPixKey,
  type SuspensionRow,
} from '../db/payout-controls';
import { postEntries } from './journal';
import { checkWithdrawal } from './ledger';
import { reviewReasons, windowStart, type AutoApprovalRules } from './payout-controls';
import { moveWithdrawal } from './withdrawal-state';

export interface WithdrawalRules {
  /** WITHDRAWAL_MIN_AMOUNT, in cents. */
  minAmount: number;
  /** The automatic approval's limit, caps and new-key review (domain/payout-controls.ts); unset: off. */
  autoApproval?: AutoApprovalRules;
  now?: () => Date;
}

/** The 403 of a suspended seller's request (docs/finance.md, "Payout controls"): nothing is held. */
export function suspendedError(suspension: Pick<SuspensionRow, 'suspendedAt'>): HttpError {
  return new HttpError(
    403,
    'withdrawals_suspended',
    `Withdrawals are suspended for this account since ${suspension.suspendedAt.toISOString()}; contact support.`,
  );
}

const INVALID = 'Invalid withdrawal.';

/** No automatic approval: every withdrawal waits for an operator. */
const MANUAL_ONLY: AutoApprovalRules = {
  autoApproveBelow: 0,
  dailyCount: 0,
  dailyAmount: 0,
  reviewNewPixKey: false,
};

/** The body checked against the contract and the minimum at once, so the seller sees every problem. */
function parseRequest(body: unknown, minAmount: number): CreateWithdrawalRequest {
  const parsed = safeParseRequest(CreateWithdrawalRequest, body);
  const errors = parsed.success ? {} : zodIssuesToFieldErrors(parsed.error);
  const amount = typeof body === 'object' && body !== null && 'amount' in body ? body.amount : undefined;
  if (!errors.amount && typeof amount === 'number' && Number.isInteger(amount) && amount < minAmount) {
    errors.amount = [message('withdrawalMinimum', { minimum: minAmount })];
  }
  if (!parsed.success || Object.keys(errors).length > 0) throw badRequest(INVALID, errors);
  return parsed.data;
}

/**
 * `POST /finance/withdrawals/`: under the seller's lock, reads the available balance (its balance row),
 * holds the amount and stores the withdrawal (PENDING) with `withdrawal.requested`, all in one
 * transaction. Two requests at the same moment take turns, and the second sees the first's hold, so
 * together they can never spend more than the balance.
 */
export async function requestWithdrawal(
  em: EntityManager,
  scope: Scope,
  body: unknown,
  rules: WithdrawalRules,
): Promise<WithdrawalRow> {
  const input = parseRequest(body, rules.minAmount);
  const owner = { sellerId: scope.sellerId, environment: scope.environment };
  return inTransaction(em, async (tx) => {
    await lockSellerFunds(tx, owner);
    // Under the lock: a suspension committed before is seen, and one made after waits for this request.
    const suspension = await activeSuspension(tx, owner);
    if (suspension) throw suspendedError(suspension);
    const decided = checkWithdrawal(await availableOf(tx, owner), input.amount, rules.minAmount);
    // Not enough money is a state of the account, not a bad request: the same 409 a refund the balance
    // does not cover gets (docs/errors.md, "Codes").
    if (!decided.ok && decided.reason === 'above_available')
      throw new HttpError(409, 'insufficient_balance', decided.message);
    if (!decided.ok) throw badRequest(INVALID, { amount: [decided.message] });
    const now = rules.now?.() ?? new Date();
    // The caps read what earlier requests cleared, under the same lock: two requests at the cap take
    // turns, and the second counts the first.
    const auto = rules.autoApproval ?? MANUAL_ONLY;
    const reasons = reviewReasons(
      input.amount,
      await autoApprovalUsage(tx, owner, windowStart(now)),
      auto.reviewNewPixKey ? await isKnownPixKey(tx, owner, input.pix_key, input.pix_key_type) : true,
      auto,
    );
    const withdrawal = tx.create(WithdrawalSchema, {
      id: randomUUID(),
      ...owner,
      sellerName: scope.sellerName ?? '',
      amount: input.amount,
      pixKey: input.pix_key,
      pixKeyType: input.pix_key_type,
      status: 'PENDING',
      createdAt: now,
      decidedAt: null,
      decidedBy: null,
      denyReason: null,
      processingAt: null,
      payoutAttempts: 0,
      payoutReference: null,
      paidAt: null,
      failedAt: null,
      failureReason: null,
      autoApprovable: reasons.length === 0,
      reviewReasons: reasons,
      canceledAt: null,
      canceledBy: null,
      cancelReason: null,
    });
    tx.persist(withdrawal);
    await postEntries(tx, owner, { withdrawalId: withdrawal.id, cause: 'requested' }, [decided.entry]);
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

export type Decision =
  | { action: 'approve' }
  | { action: 'deny'; reason: string | null }
  | { action: 'cancel'; reason: string | null };

/**
 * An operator's approve, deny or cancel. Decided on the locked row under the seller's lock; a deny or a
 * cancel releases the hold in the same transaction as its event. A wrong move is a 409 naming the
 * current status: a cancel that the payout worker's claim beat (it locks the row too) finds PROCESSING.
 * A suspended seller's withdrawal is not approved (409). `environment`: an operator's, who decides only
 * withdrawals of its own environment; one of the other is not found (404), as if it did not exist.
 */
export async function decideWithdrawal(
  em: EntityManager,
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
  return inTransaction(em, async (tx) => {
    // The seller's lock first, then the row: the order every writer of this seller's money follows.
    await lockSellerFunds(tx, owner);
    const w = await tx.findOneOrFail(WithdrawalSchema, { id }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    const move = moveWithdrawal(w.status, decision.action, w.amount);
    if (!move.ok) throw conflict(move.message);
    if (decision.action === 'approve' && (await activeSuspension(tx, owner))) {
      throw conflict("This seller's withdrawals are suspended; lift the suspension before approving.");
    }
    w.status = move.to;
    if (decision.action === 'cancel') {
      // decided_at keeps the approval; the cancel has its own time and author.
      w.canceledAt = now();
      w.canceledBy = decidedBy;
      w.cancelReason = decision.reason;
    } else {
      w.decidedAt = now();
      w.decidedBy = decidedBy;
    }
    if (decision.action === 'deny') w.denyReason = decision.reason;
    if (move.entry) await postEntries(tx, owner, { withdrawalId: w.id, cause: move.to }, [move.entry]);
    enqueueWithdrawalEvent(tx, move.event, w);
    return w;
  });
}
