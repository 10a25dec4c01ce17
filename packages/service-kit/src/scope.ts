import type { Environment, Identity } from '@seller-api/contracts';
import type { Request } from 'express';
import { forbidden, notFound } from './errors';
import { identityOf } from './identity';

/** Whose data a request may see: one seller, in one environment. */
export interface Scope {
  sellerId: string;
  environment: Environment;
  sellerName: string | null;
}

/**
 * Data partitioned by environment, for one object (docs/api.md, "Environments"): another environment's
 * object does not exist for the key (404); another seller's in the same environment is forbidden (403).
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

/** The seller scope of a request behind the gateway; operator keys have none (403). */
export function sellerScope(req: Request): Scope {
  return scopeOf(identityOf(req));
}

/** The seller scope of a verified identity; operator keys have none (403). */
export function scopeOf(identity: Identity): Scope {
  if (!identity.seller_id) throw forbidden('Only seller keys may use seller routes.');
  return {
    sellerId: identity.seller_id,
    environment: identity.environment,
    sellerName: identity.seller_name ?? null,
  };
}
