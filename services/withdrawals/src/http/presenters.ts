import {
  maskPixKey,
  type OperatorWithdrawal,
  type Withdrawal,
  type WithdrawalSuspension,
} from '@seller-api/contracts';
import type { WithdrawalRow } from '../db/entities';
import type { SuspensionRow } from '../db/payout-controls';

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** A withdrawal as the seller sees it (contracts: Withdrawal); the PIX key is always masked by type. */
export function presentWithdrawal(w: WithdrawalRow): Withdrawal {
  return {
    uuid: w.id,
    status: w.status,
    amount: w.amount,
    pix_key: maskPixKey(w.pixKey, w.pixKeyType),
    pix_key_type: w.pixKeyType,
    requested_at: w.createdAt.toISOString(),
    decided_at: iso(w.decidedAt),
    paid_at: iso(w.paidAt),
    failure_reason: w.failureReason,
    deny_reason: w.denyReason,
    canceled_at: iso(w.canceledAt),
    cancel_reason: w.cancelReason,
  };
}

/**
 * Operators decide across sellers, so their view says whose withdrawal it is, why it waits for them
 * (contracts: OperatorWithdrawal) and whether the seller's withdrawals are suspended.
 */
export function presentForOperator(w: WithdrawalRow, suspension: SuspensionRow | null): OperatorWithdrawal {
  return {
    ...presentWithdrawal(w),
    environment: w.environment,
    seller: {
      id: w.sellerId,
      name: w.sellerName,
      suspension: suspension
        ? {
            reason: suspension.reason,
            suspended_at: suspension.suspendedAt.toISOString(),
            suspended_by: suspension.suspendedBy,
          }
        : null,
    },
    review_reasons: [...w.reviewReasons],
  };
}

export function presentSuspension(s: SuspensionRow): WithdrawalSuspension {
  return {
    id: s.id,
    seller: { id: s.sellerId, name: s.sellerName },
    environment: s.environment,
    reason: s.reason,
    suspended_at: s.suspendedAt.toISOString(),
    suspended_by: s.suspendedBy,
    lifted_at: iso(s.liftedAt),
    lifted_by: s.liftedBy,
    lift_reason: s.liftReason,
  };
}
