import type { EntityManager } from '@mikro-orm/postgresql';

/** A payment the PSP reported, as `payments.psp_payments` keeps it (one row per end-to-end id). */
export interface PspPaymentRecord {
  endToEndId: string;
  txid: string;
  amountCents: number;
  paidAt: Date;
}

/**
 * Records a reported payment as applied, in the caller's transaction; false when its end-to-end id was
 * already recorded (a repeated notification).
 */
export async function insertPspPayment(em: EntityManager, payment: PspPaymentRecord): Promise<boolean> {
  const inserted = await em.execute<{ affectedRows: number }>(
    `insert into payments.psp_payments (end_to_end_id, txid, amount, paid_at, outcome) values (?, ?, ?, ?, 'applied')
     on conflict (end_to_end_id) do nothing`,
    [payment.endToEndId, payment.txid, payment.amountCents, payment.paidAt],
    'run',
  );
  return inserted.affectedRows > 0;
}

/** What became of a recorded payment when it could not simply be applied. */
export async function markPspPayment(
  em: EntityManager,
  endToEndId: string,
  outcome: string,
  transactionId: string | null,
  detail: string | null,
): Promise<void> {
  await em.execute(
    `update payments.psp_payments set outcome = ?, transaction_id = ?, detail = ? where end_to_end_id = ?`,
    [outcome, transactionId, detail, endToEndId],
  );
}
