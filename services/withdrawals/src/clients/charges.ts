import { Charge, type Identity } from '@seller-api/contracts';
import { injectTraceContext, signIdentity, type CallKey } from '@seller-api/service-kit';
import type { FundsOwner } from '../domain/balance';
import { PaymentsCallError, RECONCILIATION_USER_ID } from './payments';

/**
 * Whether payments refunded an order's charge. `not_refunded`: not refunded and no refund ever asked of
 * the PSP; `refund_asked`: not refunded although a refund was asked and its outcome is unknown (its
 * answer may have been lost after the PSP made it; a payments that does not say counts as this);
 * `refund_processing`: the PSP is making it; `refund_failed`: the PSP did not make the refund
 * (docs/payments.md, "Refunds"); `unknown`: it has no charge of that order for the owner.
 */
export type RefundedAnswer =
  'refunded' | 'not_refunded' | 'refund_asked' | 'refund_processing' | 'refund_failed' | 'unknown';

/** Where the sweep of refund holds asks whether a charge was refunded; a stand-in in unit tests. */
export interface ChargeRefunds {
  refunded(owner: FundsOwner, orderId: string): Promise<RefundedAnswer>;
}

/**
 * Payments' `GET /internal/charges/{uuid}/` for the sweep of refund holds (jobs/refund-hold-sweep.ts):
 * the charge of one order, asked with a seller identity of the hold's owner (signed with
 * `PAYMENTS_INTERNAL_SECRET`, as the reconciliation's calls). Throws PaymentsCallError when payments does not
 * answer or answers something else than the charge or a 404.
 */
export class PaymentsChargeRefunds implements ChargeRefunds {
  constructor(
    private readonly origin: string,
    private readonly callKey: CallKey,
    private readonly timeoutMs = 10_000,
  ) {}

  async refunded(owner: FundsOwner, orderId: string): Promise<RefundedAnswer> {
    const path = `/internal/charges/${orderId}/`;
    const identity: Identity = {
      user_id: RECONCILIATION_USER_ID,
      seller_id: owner.sellerId,
      environment: owner.environment,
      role: 'seller',
    };
    const headers = signIdentity(this.callKey, identity, 'GET', path);
    injectTraceContext(headers);
    let status: number;
    let text: string;
    try {
      const res = await fetch(new URL(path, this.origin), {
        headers,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      status = res.status;
      text = await res.text();
    } catch (err) {
      throw new PaymentsCallError(`payments did not answer GET ${path}: ${(err as Error).message}`);
    }
    if (status === 404) return 'unknown';
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = null;
    }
    const charge = Charge.safeParse((body as { data?: unknown } | null)?.data);
    if (status !== 200 || !charge.success)
      throw new PaymentsCallError(`payments answered ${status} to GET ${path} without a charge`);
    if (charge.data.status === 'REFUNDED') return 'refunded';
    if (charge.data.refund_asked_at === null) return 'not_refunded';
    const refund = charge.data.refund;
    if (refund?.status === 'PROCESSING') return 'refund_processing';
    // A refund asked again after a failure has no outcome yet: its status is gone until it has one.
    if (refund?.status === 'FAILED') return 'refund_failed';
    return 'refund_asked';
  }
}
