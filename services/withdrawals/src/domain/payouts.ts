import { redactPixKey, type Environment, type PixKeyType } from '@seller-api/contracts';
import { scrub } from '@seller-api/service-kit';
import type { WithdrawalRow } from '../db/entities';

/** One transfer to a seller's PIX key. `withdrawalId` is the idempotency key: asking twice pays once. */
export interface PayoutRequest {
  withdrawalId: string;
  amount: number;
  pixKey: string;
  pixKeyType: PixKeyType;
  environment: Environment;
  /**
   * Which time this payout is asked of the PSP (1 the first; more after a crash, an error or an
   * answer "in progress"): from the second on, an adapter may read the transfer before sending it.
   */
  attempt?: number;
}

export type PayoutOutcome =
  | { status: 'paid'; reference: string }
  | { status: 'failed'; reason: string }
  /** Accepted but not finished: asked again after PAYOUT_RETRY_AFTER_MS. */
  | { status: 'processing' };

/** A payout PSP behind the adapter, one per environment (PayoutAdapters). Idempotent on `withdrawalId`. */
export interface PayoutAdapter {
  readonly name: string;
  pay(request: PayoutRequest): Promise<PayoutOutcome>;
  /** Closes the adapter's connections, after the last payout. */
  close?(): Promise<void>;
}

/**
 * The payout PSP of each environment: `live` is `PAYOUT_PSP`'s; `test` is the sandbox unless
 * `PAYOUT_PSP_TEST` names a PSP's homologation endpoint, so a test withdrawal never moves real money.
 * Every payout takes the adapter of its own withdrawal's environment (payoutAdapterFor).
 */
export type PayoutAdapters = Readonly<Record<Environment, PayoutAdapter>>;

/** The adapter for a payout of this withdrawal's environment. */
export function payoutAdapterFor(
  adapters: PayoutAdapters,
  w: Pick<WithdrawalRow, 'environment'>,
): PayoutAdapter {
  return adapters[w.environment];
}

export interface PayoutRules {
  /** WITHDRAWAL_AUTO_APPROVE_BELOW: PENDING withdrawals below it are approved without an operator. */
  autoApproveBelow: number;
  /** PAYOUT_RETRY_AFTER_MS: how long a PROCESSING payout is left alone before it is asked about again. */
  retryAfterMs: number;
  now?: () => Date;
}

export function payoutRequest(w: WithdrawalRow): PayoutRequest {
  return {
    withdrawalId: w.id,
    amount: w.amount,
    pixKey: w.pixKey,
    pixKeyType: w.pixKeyType,
    environment: w.environment,
    attempt: w.payoutAttempts,
  };
}

/**
 * What the PSP's final answer changes of a PROCESSING withdrawal besides its status (PAID or FAILED:
 * withdrawal-state.ts): when it was paid and the PSP's reference, or when it failed and why.
 */
export function payoutOutcomeChanges(
  w: Pick<WithdrawalRow, 'pixKey' | 'pixKeyType'>,
  outcome: Exclude<PayoutOutcome, { status: 'processing' }>,
  now: Date,
): Partial<WithdrawalRow> {
  if (outcome.status === 'paid') return { paidAt: now, payoutReference: outcome.reference };
  return {
    failedAt: now,
    // The PSP's words may quote the key, or anyone's tax id, e-mail or phone; the reason goes to the
    // API, events and webhooks: the key masked as everywhere else, then the rest as in the logs.
    failureReason: scrub(redactPixKey(outcome.reason, w.pixKey, w.pixKeyType)),
  };
}
