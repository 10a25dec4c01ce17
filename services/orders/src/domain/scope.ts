import type { Environment } from '@seller-api/contracts';
import { forbidden, notFound } from '@seller-api/service-kit';

/** Whose data a request may see: one seller, in one environment. */
export interface Scope {
  sellerId: string;
  environment: Environment;
  sellerName: string | null;
}

/**
 * The rule of decisions.md 2 for one object: another environment's object does not exist for the key
 * (404); another seller's in the same environment is forbidden (403).
 */
export function assertOwned<T extends { sellerId: string; environment: Environment }>(
  row: T | null,
  scope: Scope,
  what: string,
): T {
  if (!row || row.environment !== scope.environment) throw notFound(`${what} not found.`);
  if (row.sellerId !== scope.sellerId)
    throw forbidden(`This ${what.toLowerCase()} belongs to another seller.`);
  return row;
}
