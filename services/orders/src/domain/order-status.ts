import { OrderEvents, type ChargeRefund, type ChargeState, type OrderStatus } from '@seller-api/contracts';
import type { OutgoingMessage } from '@seller-api/service-kit';
import type { OrderRow } from '../db/entities';
import { orderEventData, orderHeaders, type EventItem, type EventOrder } from '../events/payloads';
import { EXCHANGE } from '../events/topology';

/** The public event each status emits when an order reaches it (docs/orders.md); MED has none. */
const EVENT_OF: Partial<Record<OrderStatus, string>> = {
  PAID: OrderEvents.PAID,
  EXPIRED: OrderEvents.EXPIRED,
  CANCELLED: OrderEvents.CANCELLED,
  REFUNDED: OrderEvents.REFUNDED,
  CHARGEBACK: OrderEvents.CHARGEBACK,
};

/** The refund columns of an order. */
export type OrderRefund = Pick<
  OrderRow,
  | 'refundStatus'
  | 'refundAttempt'
  | 'refundAmount'
  | 'refundRequestedAt'
  | 'refundUpdatedAt'
  | 'refundFailureReason'
>;

/**
 * Copies the latest refund payments reports onto the order (docs/orders.md, "Refund an order"). A
 * state without one (`undefined`: a payments of an earlier release) or with none yet (`null`) leaves
 * what the order has: a refund once reported is never forgotten by a message that does not speak of
 * it. `hold_seq` is the ledger's (docs/finance.md, "Refunds"), not kept here.
 */
export function mirrorRefund(order: OrderRefund, refund: ChargeRefund | null | undefined): void {
  if (!refund) return;
  order.refundStatus = refund.status;
  order.refundAttempt = refund.attempt;
  order.refundAmount = refund.amount;
  order.refundRequestedAt = new Date(refund.requested_at);
  order.refundUpdatedAt = new Date(refund.updated_at);
  order.refundFailureReason = refund.failure_reason;
}

/**
 * Copies what the payment paid onto the order (docs/pix.md, "Due-date charges"): its amount, day and
 * components, and the fee and net of that amount, which payments recomputes at payment. A state
 * without them (before payment, or from a payments of an earlier release) leaves what the order has:
 * an amount paid once reported is never forgotten by a later state that does not carry it.
 */
export function mirrorAmountPaid(
  order: Pick<OrderRow, 'amountPaid' | 'feeAmount' | 'netAmount'>,
  state: ChargeState,
): void {
  // Before payment payments' fee and net are those of the order's amount, which the order has.
  if (!state.amount_paid) return;
  order.amountPaid = state.amount_paid;
  if (state.fee_amount !== undefined && state.net_amount !== undefined) {
    order.feeAmount = state.fee_amount;
    order.netAmount = state.net_amount;
  }
}

/** An order as the mirror of its charge state reads and writes it (db/charge-mirror.ts). */
export type MirroredOrder = EventOrder &
  OrderRefund &
  Pick<OrderRow, 'chargeVersion'> & {
    items: EventItem[];
  };

/** The statuses only a paid order reaches: a state of one carries the payment's paid_at. */
const AFTER_PAYMENT: ReadonlySet<OrderStatus> = new Set(['MED', 'REFUNDED', 'CHARGEBACK']);

function eventOf(order: MirroredOrder, routingKey: string): OutgoingMessage {
  return {
    exchange: EXCHANGE,
    routingKey,
    payload: orderEventData(order, order.items),
    headers: orderHeaders(order),
  };
}

/**
 * What a charge state makes of the order and the public order.* events it emits, in order: null when
 * its version is not newer than the one the order mirrors (nothing changes). A newer version may change
 * the refund alone (in progress at the PSP, or failed there), with the same status: the refund is
 * mirrored before the status is compared. A MED rejected back to PAID does not emit order.paid again
 * (docs/orders.md, "Order status"). States can arrive out of order (competing consumers, the relay's
 * batches): when a later state (refunded, MED, chargeback) comes before PAID, which is then dropped as
 * older, the order still gets its paid_at and its order.paid, before the later state's event.
 */
export function mirrorChargeState(
  order: MirroredOrder,
  state: ChargeState,
): { order: MirroredOrder; events: OutgoingMessage[] } | null {
  if (state.version <= order.chargeVersion) return null;
  const next: MirroredOrder = { ...order, chargeVersion: state.version };
  mirrorRefund(next, state.refund);
  if (order.status === state.status) {
    mirrorAmountPaid(next, state);
    return { order: next, events: [] };
  }
  next.status = state.status;
  const paidNow = !order.paidAt && state.paid_at !== null;
  if (paidNow && (state.status === 'PAID' || AFTER_PAYMENT.has(state.status)))
    next.paidAt = new Date(state.paid_at as string);
  mirrorAmountPaid(next, state);
  const events: OutgoingMessage[] = [];
  // The payment this order never mirrored: its order.paid, as the order was once paid.
  if (paidNow && AFTER_PAYMENT.has(state.status) && order.status === 'PENDING')
    events.push(eventOf({ ...next, status: 'PAID' }, OrderEvents.PAID));
  const event = EVENT_OF[state.status];
  const repeatOfPaid = state.status === 'PAID' && order.status === 'MED';
  if (event && !repeatOfPaid) events.push(eventOf(next, event));
  return { order: next, events };
}

/**
 * order.overdue of a PENDING due-date order past its effective due date (jobs/overdue.ts): the order
 * as it is, `due_date.overdue` true, with the headers of every order event.
 */
export function overdueEvent(order: MirroredOrder, now: Date): OutgoingMessage {
  return {
    exchange: EXCHANGE,
    routingKey: OrderEvents.OVERDUE,
    payload: orderEventData(order, order.items, now),
    headers: orderHeaders(order),
  };
}

/**
 * The states of a batch to mirror: those newer than the version their order holds (`held`; every one
 * of an order missing from it), order by order and version by version, so two batches in flight
 * update the orders they share in the same order.
 */
export function statesToMirror<T extends { value: ChargeState }>(batch: T[], held: Map<string, number>): T[] {
  return batch
    .filter(({ value }) => value.version > (held.get(value.order_uuid) ?? -Infinity))
    .sort((a, b) =>
      a.value.order_uuid === b.value.order_uuid
        ? a.value.version - b.value.version
        : a.value.order_uuid < b.value.order_uuid
          ? -1
          : 1,
    );
}
