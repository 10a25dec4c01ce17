import type { EntityManager } from '@mikro-orm/postgresql';
import type { Environment } from '@seller-api/contracts';
import { MAX_REFUND_ATTEMPTS } from '../domain/refund-state';

/*
 * The statements of refunds and of PSP payments that the lifecycle (domain/lifecycle.ts) runs outside
 * the ORM's unit of work: an ask recorded on its own, and the payment records of psp_payments.
 */

export interface ChargeRef {
  orderId: string;
  sellerId: string;
  environment: Environment;
}

/**
 * Records that a seller's refund is about to be asked of the PSP, in one statement, so that the hold it
 * records and the attempt it decides go together (docs/finance.md, "Refunds"). After a failure, only a
 * request whose hold is newer than the ones the failure covered starts the next attempt; an older one
 * leaves the refund FAILED. Every SET expression reads the row as it was: `fresh`, `renew` and `asks`
 * are of the old row throughout.
 */
export async function recordRefundAsk(
  em: EntityManager,
  charge: ChargeRef,
  ask: { holdSeq: number | null; at: Date; firstCheckAt: Date; key: string | null },
): Promise<void> {
  // Written into the statement (it is used in several expressions): an integer, never text.
  const seq = ask.holdSeq !== null && Number.isSafeInteger(ask.holdSeq) && ask.holdSeq > 0 ? ask.holdSeq : 0;
  const fresh = `refund_status is null`;
  const renew = `(refund_status = 'FAILED' and refund_attempt < ${MAX_REFUND_ATTEMPTS} and ${seq} > refund_hold_seq)`;
  const asks = `(${fresh} or ${renew})`;
  await em.fork().execute(
    `update payments.transactions set
       refund_hold_seq = greatest(refund_hold_seq, ${seq}),
       refund_attempt = case when ${renew} then greatest(refund_attempt, 1) + 1
                             when ${fresh} then greatest(refund_attempt, 1) else refund_attempt end,
       refund_requested_at = case when ${renew} or (${fresh} and refund_requested_at is null) then ?
                                  else refund_requested_at end,
       refund_reason = case when ${renew} then null else refund_reason end,
       refund_checks = case when ${renew} then 0 else refund_checks end,
       refund_check_at = case when ${renew} or (${fresh} and refund_check_at is null) then ?
                              else refund_check_at end,
       refund_status = case when ${renew} then null else refund_status end,
       refund_asked_at = case when ${asks} then ? else refund_asked_at end,
       refund_ask_key = case when ${asks} then ? else refund_ask_key end
     where order_id = ? and seller_id = ? and environment = ? and charge_status = 'PAID'
       and end_to_end_id is not null`,
    [ask.at, ask.firstCheckAt, ask.at, ask.key, charge.orderId, charge.sellerId, charge.environment],
  );
}

/** Records a refund request's hold alone (a keyed retry that asks nothing). */
export async function recordRefundHold(em: EntityManager, charge: ChargeRef, holdSeq: number): Promise<void> {
  await em.fork().execute(
    `update payments.transactions set refund_hold_seq = greatest(refund_hold_seq, ?)
      where order_id = ? and seller_id = ? and environment = ?`,
    [holdSeq, charge.orderId, charge.sellerId, charge.environment],
  );
}

/**
 * How to find the charge of a recorded payment: by the transaction its record names, or by its txid
 * (an applied payment's record names its charge by txid only); null for a payment never recorded.
 */
export async function chargeOfPayment(
  tx: EntityManager,
  endToEndId: string,
): Promise<{ id: string } | { txid: string } | null> {
  const [payment] = await tx.execute<Array<{ transaction_id: string | null; txid: string | null }>>(
    `select transaction_id, txid from payments.psp_payments where end_to_end_id = ?`,
    [endToEndId],
  );
  if (payment?.transaction_id) return { id: payment.transaction_id };
  return payment?.txid ? { txid: payment.txid } : null;
}

/** A late payment given back to its payer: true when this call recorded it. */
export async function markPaymentRefunded(em: EntityManager, endToEndId: string): Promise<boolean> {
  const updated = await em.execute<{ affectedRows: number }>(
    `update payments.psp_payments set outcome = 'refunded' where end_to_end_id = ? and outcome <> 'refunded'`,
    [endToEndId],
    'run',
  );
  return updated.affectedRows > 0;
}

/** A PIX paid to our key without a txid, kept for an operator: false when it was recorded before. */
export async function recordPaymentWithoutTxid(
  em: EntityManager,
  payment: { endToEndId: string; amountCents: number; paidAt: Date },
): Promise<boolean> {
  const inserted = await em.execute<{ affectedRows: number }>(
    `insert into payments.psp_payments (end_to_end_id, txid, amount, paid_at, outcome, detail)
     values (?, null, ?, ?, 'unknown_txid', 'no txid') on conflict (end_to_end_id) do nothing`,
    [payment.endToEndId, payment.amountCents, payment.paidAt],
    'run',
  );
  return inserted.affectedRows > 0;
}
