import type { ChargeState, Identity, OrderStatus } from '@seller-api/contracts';
import { conflict, type IdempotentRequest, type Logger } from '@seller-api/service-kit';
import { ActionNotApplied, type PaymentsClient } from '../clients/payments';
import type { RefundHoldsClient } from '../clients/refund-holds';
import type { OrderRow } from '../db/entities';

/** No charge leaves these statuses: payments cannot refund it, so asking is safe (and replays a key). */
const FINAL: ReadonlySet<OrderStatus> = new Set(['REFUNDED', 'CHARGEBACK', 'EXPIRED', 'CANCELLED']);

/**
 * The message of a seller's refund answered 200 (docs/orders.md, "Refund an order"): done only when
 * the PSP says so. A refund the PSP accepted and is still making leaves the order PAID, its refund
 * PROCESSING. A state without a refund (a payments of an earlier release) is a refund made, as it was
 * then.
 */
export function refundMessage(state: ChargeState | null): string {
  const refund = state?.refund;
  if (!state || !refund || state.status === 'REFUNDED') return 'Order refunded.';
  if (refund.status === 'PROCESSING')
    return 'Refund requested; the PSP is processing it. The order becomes REFUNDED when the PSP confirms.';
  // Not an answer payments gives (its refusal is a 502), but never to be read as a refund made.
  if (refund.status === 'FAILED')
    return `The PSP did not make the refund${refund.failure_reason ? `: ${refund.failure_reason}` : ''}. The order stays ${state.status}.`;
  return 'Order refunded.';
}

export interface RefundDeps {
  payments: PaymentsClient;
  holds: RefundHoldsClient;
  logger: Logger;
}

/** What a refund reads of the order, the seller's own (db/orders.ts findOwnedOrder). */
export type RefundedOrder = Pick<
  OrderRow,
  'status' | 'grossAmount' | 'feeAmount' | 'netAmount' | 'chargeVersion' | 'amountPaid'
>;

/**
 * A seller's refund of a PAID order (docs/finance.md, "Refunds"): the order's net is first reserved
 * from the seller's available balance in withdrawals' ledger (409 `insufficient_balance` when it does
 * not cover it), then payments asks the PSP. The reversal that follows takes the net
 * from that hold. When payments answered that it refunded nothing, this attempt gives the hold back;
 * when its outcome is unknown (no answer), the hold stays until withdrawals' sweep finds the charge not
 * refunded. A keyed request's answer is kept by payments with the refund (docs/idempotency.md); a
 * retry finds the same hold, never a second one.
 */
export async function refundOrder(
  deps: RefundDeps,
  identity: Identity,
  orderId: string,
  order: RefundedOrder,
  keyed: IdempotentRequest | null,
): Promise<{ state: ChargeState | null; replayed: boolean }> {
  const hold = await deps.holds.hold(identity, orderId, {
    // What the payer paid goes back (a due-date charge's amount paid, not the order's amount); fee
    // and net were mirrored of it at payment (domain/order-status.ts mirrorAmountPaid).
    gross_amount: order.amountPaid?.amount ?? order.grossAmount,
    fee_amount: order.feeAmount,
    net_amount: order.netAmount,
    charge_status: order.status,
    version: order.chargeVersion,
  });
  const status = hold.charge_status ?? order.status;
  // Not in the available balance and not final: PENDING, or a MED. Payments is not asked, since the
  // charge could become PAID meanwhile and be refunded without its hold.
  if (!hold.held && !FINAL.has(status))
    throw conflict(`Only a PAID order can be refunded; this order is ${status}.`);
  const giveBack = () =>
    deps.holds
      .release(identity, orderId, hold.hold_seq)
      .catch((releaseErr: unknown) =>
        deps.logger.warn(
          { err: (releaseErr as Error).message, order_uuid: orderId },
          'refund hold not given back; the sweep releases it',
        ),
      );
  let answer: { state: ChargeState | null; replayed: boolean };
  try {
    answer = await deps.payments.act(
      identity,
      orderId,
      'refund',
      keyed,
      hold.held ? hold.hold_seq : undefined,
    );
  } catch (err) {
    if (hold.held && err instanceof ActionNotApplied) await giveBack();
    throw err;
  }
  // A keyed retry answered with the first request's stored answer asked nothing of the PSP: this
  // attempt's count goes back (the first one's stays with its refund).
  if (hold.held && answer.replayed) await giveBack();
  return answer;
}
