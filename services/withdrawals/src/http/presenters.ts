import { maskPixKey, type Environment, type Withdrawal } from '@seller-api/contracts';
import type { WithdrawalRow } from '../db/entities';

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
  };
}

export type OperatorWithdrawal = Withdrawal & {
  environment: Environment;
  seller: { id: string; name: string };
};

/** Operators decide across sellers and environments, so their view says whose withdrawal it is. */
export function presentForOperator(w: WithdrawalRow): OperatorWithdrawal {
  return {
    ...presentWithdrawal(w),
    environment: w.environment,
    seller: { id: w.sellerId, name: w.sellerName },
  };
}
