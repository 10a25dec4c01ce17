import { z } from 'zod';
import { MAX_AMOUNT, uuid } from './common';
import { OrderStatus } from './order-status';

/**
 * Internal: before a seller's refund of a PAID order is asked of payments, orders reserves the sale's
 * net from the seller's available balance in withdrawals' ledger (`POST /internal/refund-holds/{uuid}/`,
 * never routed by the gateway; docs/finance.md, "Refunds"). The body is what orders knows of the charge
 * (its mirror of payments' state), applied to the ledger as payments' own messages would be, so a ledger
 * a few messages behind does not refuse a refund of a sale it has not credited yet.
 */
export const RefundHoldRequest = z.object({
  gross_amount: z.int().min(0).max(MAX_AMOUNT),
  fee_amount: z.int().min(0).max(MAX_AMOUNT),
  net_amount: z.int().min(0).max(MAX_AMOUNT),
  charge_status: OrderStatus,
  version: z.int().min(0).max(2_147_483_647),
});
export type RefundHoldRequest = z.infer<typeof RefundHoldRequest>;

/**
 * `held`: the net is reserved (or already was, for another attempt) and the refund may be asked for.
 * Otherwise the order's money is not in the available balance: `charge_status` is the newest status the
 * ledger knows (the refund is refused with it, or asked of payments when that status is final).
 */
export const RefundHold = z.object({
  order_uuid: uuid,
  held: z.boolean(),
  charge_status: OrderStatus.nullable(),
  /**
   * This reservation's number among the order's holds, growing with each one: orders passes it on to
   * payments with the refund (absent from a withdrawals of an earlier release).
   */
  hold_seq: z.int().min(1).optional(),
});
export type RefundHold = z.infer<typeof RefundHold>;
export const RefundHoldResponse = z.object({ message: z.string(), data: RefundHold });

/**
 * `POST /internal/refund-holds/{uuid}/release/`: a refund attempt that certainly did not refund (payments
 * refused it or failed, the PSP included). `released`: the net is available again (the last attempt
 * of the hold to fail); false while another attempt may still refund, or when there is no hold.
 */
export const RefundRelease = z.object({ order_uuid: uuid, released: z.boolean() });
/**
 * The release's body: the `hold_seq` its reservation was given, so that a release late on its way
 * never gives back a newer hold (absent from an orders of an earlier release: whichever hold is held).
 */
export const RefundReleaseRequest = z.object({ hold_seq: z.int().min(1).optional() });
export type RefundReleaseRequest = z.infer<typeof RefundReleaseRequest>;
export type RefundRelease = z.infer<typeof RefundRelease>;
export const RefundReleaseResponse = z.object({ message: z.string(), data: RefundRelease });
