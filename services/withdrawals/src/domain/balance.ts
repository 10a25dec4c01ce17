import type { EntityManager } from '@mikro-orm/postgresql';
import type { Environment } from '@seller-api/contracts';

/** Ledger accounts a seller's money moves between (see docs/finance.md). */
export const SELLER_AVAILABLE = 'seller_available';
/** Held for withdrawals in flight (PENDING, APPROVED, PROCESSING). */
export const SELLER_PENDING = 'seller_pending';

export interface Balance {
  available_amount: number;
  pending_amount: number;
  currency: 'BRL';
}

/** The balance is derived from the journal on every read. */
export async function balanceOf(
  em: EntityManager,
  sellerId: string,
  environment: Environment,
): Promise<Balance> {
  const rows = await em.execute<Array<{ account: string; total: string }>>(
    `select account, coalesce(sum(amount), 0) as total from withdrawals.ledger_lines
      where seller_id = ? and environment = ? and account in (?, ?) group by account`,
    [sellerId, environment, SELLER_AVAILABLE, SELLER_PENDING],
  );
  const total = (account: string) => Number(rows.find((r) => r.account === account)?.total ?? 0);
  return {
    available_amount: total(SELLER_AVAILABLE),
    pending_amount: total(SELLER_PENDING),
    currency: 'BRL',
  };
}
