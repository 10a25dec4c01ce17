import {
  CreateWithdrawalRequest,
  message,
  safeParseRequest,
  zodIssuesToFieldErrors,
} from '@seller-api/contracts';
import { HttpError, badRequest, conflict } from '@seller-api/service-kit';
import type { WithdrawalRow } from '../db/entities';
import type { SuspensionRow } from '../db/payout-controls';
import type { FundsOwner } from './balance';
import { checkWithdrawal, type Entry } from './ledger';
import type { AutoApprovalRules } from './payout-controls';
import type { WithdrawalMove } from './withdrawal-state';

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
export const MANUAL_ONLY: AutoApprovalRules = {
  autoApproveBelow: 0,
  dailyCount: 0,
  dailyAmount: 0,
  reviewNewPixKey: false,
};

/** The body checked against the contract and the minimum at once, so the seller sees every problem. */
export function parseWithdrawalRequest(body: unknown, minAmount: number): CreateWithdrawalRequest {
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
 * The hold of a requested amount against the available balance (ledger.checkWithdrawal). Not enough
 * money is a state of the account, not a bad request: the same 409 a refund the balance does not cover
 * gets (docs/errors.md, "Codes"); any other refusal is a 400 on `amount`.
 */
export function holdOf(available: number, amount: number, minAmount: number): Entry {
  const decided = checkWithdrawal(available, amount, minAmount);
  if (!decided.ok && decided.reason === 'above_available')
    throw new HttpError(409, 'insufficient_balance', decided.message);
  if (!decided.ok) throw badRequest(INVALID, { amount: [decided.message] });
  return decided.entry;
}

/** A new withdrawal as stored: PENDING, cleared for the automatic approval when no review reason holds. */
export function newWithdrawal(
  id: string,
  owner: FundsOwner,
  sellerName: string,
  input: CreateWithdrawalRequest,
  reasons: WithdrawalRow['reviewReasons'],
  now: Date,
): WithdrawalRow {
  return {
    id,
    ...owner,
    sellerName,
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
  };
}

export type Decision =
  | { action: 'approve' }
  | { action: 'deny'; reason: string | null }
  | { action: 'cancel'; reason: string | null };

/**
 * What an operator's decision changes of the withdrawal, once its move is allowed (withdrawal-state.ts):
 * its status, and who decided when; a cancel keeps the approval's decided_at and has its own time
 * and author.
 */
export function decisionChanges(
  move: Extract<WithdrawalMove, { ok: true }>,
  decision: Decision,
  decidedBy: string,
  at: Date,
): Partial<WithdrawalRow> {
  if (decision.action === 'cancel')
    return { status: move.to, canceledAt: at, canceledBy: decidedBy, cancelReason: decision.reason };
  return {
    status: move.to,
    decidedAt: at,
    decidedBy,
    ...(decision.action === 'deny' ? { denyReason: decision.reason } : {}),
  };
}

/** An approval refused while the seller's withdrawals are suspended (409). */
export const suspendedApproval = () =>
  conflict("This seller's withdrawals are suspended; lift the suspension before approving.");
