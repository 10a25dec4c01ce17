import type { ReviewReason } from '@seller-api/contracts';

/**
 * Payout controls, as pure rules (docs/finance.md, "Payout controls"): whether a withdrawal being
 * requested may be approved without an operator, and why not. Decided by the request, under the
 * seller's lock, with the figures read in the same transaction (domain/withdrawals.ts), so two
 * requests at the same moment take turns and the second counts the first.
 */

/** The automatic approval's window: a rolling 24 hours, ending at the request. */
export const AUTO_APPROVAL_WINDOW_MS = 24 * 60 * 60 * 1000;

export interface AutoApprovalRules {
  /** WITHDRAWAL_AUTO_APPROVE_BELOW, cents; 0: automatic approval off. */
  autoApproveBelow: number;
  /** WITHDRAWAL_AUTO_APPROVE_DAILY_COUNT: withdrawals cleared per seller and environment in 24 h; 0: no cap. */
  dailyCount: number;
  /** WITHDRAWAL_AUTO_APPROVE_DAILY_AMOUNT: cents cleared per seller and environment in 24 h; 0: no cap. */
  dailyAmount: number;
  /** WITHDRAWAL_NEW_PIX_KEY_REVIEW: a key this seller was never paid to waits for an operator. */
  reviewNewPixKey: boolean;
}

/** The seller's withdrawals cleared for the automatic approval in the window, still counted. */
export interface AutoApprovalUsage {
  count: number;
  amount: number;
}

/** Where the window starts for a request made at `now`. */
export const windowStart = (now: Date) => new Date(now.getTime() - AUTO_APPROVAL_WINDOW_MS);

/**
 * Every reason a withdrawal of `amount` waits for an operator; none: it is cleared for the automatic
 * approval. All apply at once (an operator wants to know that a large withdrawal also goes to a new
 * key), in a fixed order. The caps count this withdrawal too: with a cap of 3, the fourth waits.
 */
export function reviewReasons(
  amount: number,
  usage: AutoApprovalUsage,
  knownPixKey: boolean,
  rules: AutoApprovalRules,
): ReviewReason[] {
  const reasons: ReviewReason[] = [];
  if (rules.autoApproveBelow <= 0) reasons.push('auto_approval_off');
  else if (amount >= rules.autoApproveBelow) reasons.push('amount_over_auto_limit');
  if (rules.dailyCount > 0 && usage.count + 1 > rules.dailyCount) reasons.push('daily_count_cap');
  if (rules.dailyAmount > 0 && usage.amount + amount > rules.dailyAmount) reasons.push('daily_amount_cap');
  if (rules.reviewNewPixKey && !knownPixKey) reasons.push('new_pix_key');
  return reasons;
}
