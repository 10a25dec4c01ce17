import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { redactPixKey, type Environment, type PixKeyType } from '@seller-api/contracts';
import { scrub } from '@seller-api/service-kit';
import { WithdrawalSchema, type WithdrawalRow } from '../db/entities';
import { enqueueWithdrawalEvent } from '../events/payloads';
import { lockSellerFunds } from '../db/balances';
import { lockAutoApprovable, lockPayoutsDue } from '../db/payout-controls';
import { postEntries } from './journal';
import { moveWithdrawal } from './withdrawal-state';

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

const nowOf = (rules: PayoutRules) => rules.now?.() ?? new Date();

/**
 * Approves, without an operator, the PENDING withdrawals their request cleared for it (below the
 * threshold, within the seller's rolling caps, to a known key when that is asked: domain/payout-controls.ts)
 * of sellers whose withdrawals are not suspended. Done by the payout worker, not the request, so the
 * request always answers PENDING and a crash in between only delays it. Rows are claimed with SKIP
 * LOCKED and no seller lock is taken (an approval posts nothing), so this never waits on a request or
 * an operator.
 */
export async function autoApprove(em: EntityManager, rules: PayoutRules, limit = 20): Promise<number> {
  if (rules.autoApproveBelow <= 0) return 0;
  return em.fork().transactional(async (tx) => {
    const ids = await lockAutoApprovable(tx, rules.autoApproveBelow, limit);
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
  rules: PayoutRules,
  limit = 20,
): Promise<WithdrawalRow[]> {
  const now = nowOf(rules);
  return em.fork().transactional(async (tx) => {
    // A suspended seller's APPROVED withdrawals wait; an operator may cancel one meanwhile, under the
    // row lock this claim takes, so exactly one of the two moves it (docs/finance.md, "Payout controls").
    const ids = await lockPayoutsDue(tx, new Date(now.getTime() - rules.retryAfterMs), limit);
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
 * Records the PSP's answer: PAID pays the hold out, FAILED releases it to the available balance, each
 * with its event, in one transaction under the seller's lock. An answer for a withdrawal that is no
 * longer PROCESSING (another worker finished it) changes nothing.
 */
export async function completePayout(
  em: EntityManager,
  claimed: Pick<WithdrawalRow, 'id' | 'sellerId' | 'environment'>,
  outcome: PayoutOutcome,
  rules: Pick<PayoutRules, 'now'> = {},
): Promise<WithdrawalRow | null> {
  if (outcome.status === 'processing') return null;
  const owner = { sellerId: claimed.sellerId, environment: claimed.environment };
  return em.fork().transactional(async (tx) => {
    await lockSellerFunds(tx, owner);
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
    const now = rules.now?.() ?? new Date();
    w.status = move.to;
    if (outcome.status === 'paid') {
      w.paidAt = now;
      w.payoutReference = outcome.reference;
    } else {
      w.failedAt = now;
      // The PSP's words may quote the key, or anyone's tax id, e-mail or phone; the reason goes to the
      // API, events and webhooks: the key masked as everywhere else, then the rest as in the logs.
      w.failureReason = scrub(redactPixKey(outcome.reason, w.pixKey, w.pixKeyType));
    }
    if (move.entry) await postEntries(tx, owner, { withdrawalId: w.id, cause: move.to }, [move.entry]);
    enqueueWithdrawalEvent(tx, move.event, w);
    return w;
  });
}
