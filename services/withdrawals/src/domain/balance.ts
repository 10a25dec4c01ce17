import type { Environment } from '@seller-api/contracts';

/** Whose money: one seller in one environment (test and live never mix). */
export interface FundsOwner {
  sellerId: string;
  environment: Environment;
}

/** A key per owner, for maps of several sellers' positions and locks. */
export const ownerKey = (owner: FundsOwner) => `${owner.sellerId}:${owner.environment}`;
