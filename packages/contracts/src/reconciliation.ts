import { z } from 'zod';
import { Environment, cents, dataResponse, datetime, datetimeInput, listResponse, uuid } from './common';

/**
 * Internal: the charges the ledger reconciles against (docs/finance.md, "Reconciliation"). Payments
 * answers `GET /internal/transactions/` to an operator identity of `environment` (never routed by the
 * gateway); withdrawals' reconciliation job pages through it.
 */

/** The statuses of a charge that was paid at some point: the ones that move money in the ledger. */
export const PaidChargeStatus = z.enum(['PAID', 'MED', 'REFUNDED', 'CHARGEBACK']);
export type PaidChargeStatus = z.infer<typeof PaidChargeStatus>;

export const RECONCILIATION_PAGE_DEFAULT = 100;
export const RECONCILIATION_PAGE_MAX = 500;

/**
 * The window `[changed_after, changed_before)` of the charges' last status change, oldest change first;
 * either bound may be left out. `cursor` is the `next_cursor` of the previous page.
 */
export const ReconciliationChargesQuery = z
  .object({
    environment: Environment,
    changed_after: datetimeInput.optional(),
    changed_before: datetimeInput.optional(),
    cursor: z.string().min(1).optional(),
    limit: z.coerce.number().int().min(1).max(RECONCILIATION_PAGE_MAX).default(RECONCILIATION_PAGE_DEFAULT),
  })
  .refine(
    (q) =>
      !q.changed_after || !q.changed_before || Date.parse(q.changed_after) < Date.parse(q.changed_before),
    { error: 'Must be later than changed_after', path: ['changed_before'] },
  );
export type ReconciliationChargesQuery = z.infer<typeof ReconciliationChargesQuery>;
export type ReconciliationChargesQueryInput = z.input<typeof ReconciliationChargesQuery>;

/** One charge as payments decided it: its amounts (fixed at creation) and its newest status and version. */
export const ReconciliationCharge = z.object({
  order_uuid: uuid,
  seller_id: uuid,
  environment: Environment,
  gross_amount: cents,
  fee_amount: cents,
  net_amount: cents,
  charge_status: PaidChargeStatus,
  /** Grows with every status change (the `version` of `internal.charge.<status>`). */
  version: z.int().min(0),
  status_changed_at: datetime,
});
export type ReconciliationCharge = z.infer<typeof ReconciliationCharge>;

export const ReconciliationChargeList = listResponse(ReconciliationCharge);
export type ReconciliationChargeList = z.infer<typeof ReconciliationChargeList>;
export const ReconciliationChargesResponse = dataResponse(ReconciliationChargeList);
export type ReconciliationChargesResponse = z.infer<typeof ReconciliationChargesResponse>;
