import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { ChargeState } from '@seller-api/contracts';
import { inTransaction, sqlInTransaction, type Sql } from '@seller-api/service-kit';
import { refundsLatePayment } from '../domain/charge-state';
import {
  dayOf,
  dueDateAmountBounds,
  immediateComponents,
  originalOf,
  priceDueDatePayment,
} from '../domain/due-date-payments';
import {
  currentState,
  lateRefundId,
  recordMoves,
  settlePayment,
  type Moved,
  type SettledPayment,
  type PaymentOutcome,
  type PixPayment,
  type RecordedPayment,
} from '../domain/lifecycle';
import { pspFor } from '../domain/psp';
import { reasonText } from '../domain/refund-state';
import { commitMove, sqlOfCaller, type ChargeStoreDeps } from './charges';
import { TransactionSchema } from './entities';

/*
 * The payments the PSPs report (payments.psp_payments, one row per end-to-end id) and what they do to
 * their charges.
 */

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
export async function insertPspPayment(sql: Sql, payment: PspPaymentRecord): Promise<boolean> {
  // `returning` tells whether a row was inserted (`on conflict do nothing` inserts none).
  const inserted = await sql.query(
    `insert into payments.psp_payments (end_to_end_id, txid, amount, paid_at, outcome) values ($1, $2, $3, $4, 'applied')
     on conflict (end_to_end_id) do nothing returning end_to_end_id`,
    [payment.endToEndId, payment.txid, payment.amountCents, payment.paidAt],
  );
  return inserted.length > 0;
}

/** What became of a recorded payment when it could not simply be applied. */
export async function markPspPayment(
  sql: Sql,
  endToEndId: string,
  outcome: string,
  transactionId: string | null,
  detail: string | null,
): Promise<void> {
  await sql.query(
    `update payments.psp_payments set outcome = $1, transaction_id = $2, detail = $3 where end_to_end_id = $4`,
    [outcome, transactionId, detail, endToEndId],
  );
}

/**
 * How to find the charge of a recorded payment: by the transaction its record names, or by its txid
 * (an applied payment's record names its charge by txid only); null for a payment never recorded.
 */
export async function chargeOfPayment(
  sql: Sql,
  endToEndId: string,
): Promise<{ id: string } | { txid: string } | null> {
  const [payment] = await sql.query<{ transaction_id: string | null; txid: string | null }>(
    `select transaction_id, txid from payments.psp_payments where end_to_end_id = $1`,
    [endToEndId],
  );
  if (payment?.transaction_id) return { id: payment.transaction_id };
  return payment?.txid ? { txid: payment.txid } : null;
}

/** A late payment given back to its payer: true when this call recorded it. */
export async function markPaymentRefunded(sql: Sql, endToEndId: string): Promise<boolean> {
  const updated = await sql.query(
    `update payments.psp_payments set outcome = 'refunded' where end_to_end_id = $1 and outcome <> 'refunded'
     returning end_to_end_id`,
    [endToEndId],
  );
  return updated.length > 0;
}

/** A PIX paid to our key without a txid, kept for an operator: false when it was recorded before. */
export async function recordPaymentWithoutTxid(
  sql: Sql,
  payment: { endToEndId: string; amountCents: number; paidAt: Date },
): Promise<boolean> {
  const inserted = await sql.query(
    `insert into payments.psp_payments (end_to_end_id, txid, amount, paid_at, outcome, detail)
     values ($1, null, $2, $3, 'unknown_txid', 'no txid') on conflict (end_to_end_id) do nothing
     returning end_to_end_id`,
    [payment.endToEndId, payment.amountCents, payment.paidAt],
  );
  return inserted.length > 0;
}

/**
 * A PSP payment notification (or a sandbox pay, through the same code): recorded once per end-to-end
 * id, so a notification seen twice changes nothing. An unknown txid or a wrong amount changes nothing
 * and is kept for an operator; a payment for an expired or cancelled order, or a second payment of a
 * paid one, is refunded to the payer at once and the order stays as it is.
 */
export async function confirmPayment(
  em: EntityManager,
  payment: PixPayment,
  deps: ChargeStoreDeps,
): Promise<{ outcome: PaymentOutcome; state: ChargeState | null }> {
  const recorded = await recordPayment(em, payment, deps);
  await recorded.refundLate?.();
  return { outcome: recorded.outcome, state: recorded.state };
}

/**
 * confirmPayment's recording, in the caller's transaction when it has one (a keyed sandbox pay, whose
 * refund of a late payment must wait for that transaction's commit: the caller runs `refundLate`).
 */
export async function recordPayment(
  em: EntityManager,
  payment: PixPayment,
  deps: ChargeStoreDeps,
): Promise<RecordedPayment> {
  if (payment.txid === null) return recordWithoutTxid(em, payment, deps);
  const txid = payment.txid;
  const moved: Moved = [];
  // A due-date payment whose amount is not ours for its day (the PSP's wins): logged once committed.
  const differs: { value: { ours: number; day: string } | null } = { value: null };
  const result = await inTransaction(em, async (tx) => {
    // The charge first, locked: one of the other environment is checked before anything is recorded
    // (recording the end-to-end id first would let a notification of the test PSP, or the sandbox, take
    // a live payment's id, so that the real payment would be ignored as a duplicate).
    const t = await tx.findOne(TransactionSchema, { txid }, { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (t && t.environment !== payment.environment) {
      // For an operator: a PSP (or its secret) naming the other environment's charges.
      deps.logger.warn(
        { txid: payment.txid, charge_environment: t.environment, notified_by: payment.environment },
        'PSP notification names a charge of the other environment; nothing recorded',
      );
      return { outcome: 'unknown_txid' as const, state: null, refund: null };
    }
    const statements = sqlInTransaction(deps.sql, tx);
    const recorded = await insertPspPayment(statements, { ...payment, txid });
    if (!recorded) return { outcome: 'duplicate' as const, state: null, refund: null };
    const record = (outcome: PaymentOutcome, detail: string | null = null) =>
      markPspPayment(statements, payment.endToEndId, outcome, t?.id ?? null, detail);
    if (!t) {
      await record('unknown_txid');
      return { outcome: 'unknown_txid' as const, state: null, refund: null };
    }
    // An immediate charge takes its amount only; a due-date charge, what its PSP took (docs/pix.md).
    if (t.dueDateTerms === null && payment.amountCents !== t.grossAmount) {
      await record('amount_mismatch', `expected ${t.grossAmount}, received ${payment.amountCents}`);
      return { outcome: 'amount_mismatch' as const, state: currentState(t), refund: null };
    }
    if (t.chargeStatus === 'PENDING') {
      let settled: SettledPayment = {
        amount: payment.amountCents,
        components: immediateComponents(payment.amountCents),
        day: payment.day ?? dayOf(payment.paidAt),
      };
      if (t.dueDateTerms !== null) {
        const priced = priceDueDatePayment({ ...t, dueDateTerms: t.dueDateTerms }, payment);
        if (!priced.payable) {
          // Paid after its last payable day (the expiry has not run yet): refunded like any late one.
          await record(
            'late',
            `paid on ${priced.day}, after the last payable date ${priced.lastPayableDate}`,
          );
          return { outcome: 'late' as const, state: currentState(t), refund: t };
        }
        // The PSP's amount wins for a day priced otherwise, not for any amount: outside what the terms
        // can come to, nothing is applied and an operator decides, as for an immediate charge.
        const bounds = dueDateAmountBounds(originalOf(t), t.dueDateTerms, dayOf(t.createdAt));
        if (payment.amountCents < bounds.least || payment.amountCents > bounds.most) {
          await record(
            'amount_mismatch',
            `expected ${priced.ours} on ${priced.day} (between ${bounds.least} and ${bounds.most}), received ${payment.amountCents}`,
          );
          return { outcome: 'amount_mismatch' as const, state: currentState(t), refund: null };
        }
        if (priced.ours !== payment.amountCents) differs.value = { ours: priced.ours, day: priced.day };
        settled = { amount: payment.amountCents, components: priced.components, day: priced.day };
      }
      settlePayment(t, settled, deps.fees);
      t.endToEndId = payment.endToEndId;
      t.approvedAt = payment.paidAt;
      const state = commitMove(tx, t, 'PAID', deps.now?.() ?? new Date(), moved);
      return { outcome: 'applied' as const, state, refund: null };
    }
    const outcome = refundsLatePayment(t.chargeStatus) ? ('late' as const) : ('duplicate_charge' as const);
    await record(outcome, `charge was ${t.chargeStatus}`);
    return { outcome, state: currentState(t), refund: t };
  });
  recordMoves(deps, moved);
  const difference = differs.value;
  if (difference !== null) {
    deps.logger.warn(
      {
        txid: payment.txid,
        end_to_end_id: payment.endToEndId,
        day: difference.day,
        psp_amount: payment.amountCents,
        our_amount: difference.ours,
      },
      "due-date payment's amount differs from ours for its day; the PSP's applied",
    );
    deps.metrics?.dueDateAmountDifference(payment.environment);
  }
  if (result.outcome === 'unknown_txid' || result.outcome === 'amount_mismatch') {
    deps.logger.warn(
      { txid: payment.txid, outcome: result.outcome },
      'PSP payment not applied; flagged for an operator',
    );
  }
  return {
    outcome: result.outcome,
    state: result.state,
    refundLate: result.refund ? () => refundLatePayment(payment, deps) : null,
  };
}

/**
 * A PIX paid to our key without a txid: no charge of ours, so nothing changes; it is kept for an
 * operator (outcome `unknown_txid`, detail `no txid`), once per end-to-end id.
 */
async function recordWithoutTxid(
  em: EntityManager,
  payment: PixPayment,
  deps: ChargeStoreDeps,
): Promise<RecordedPayment> {
  if (!(await recordPaymentWithoutTxid(sqlOfCaller(deps.sql, em), payment)))
    return { outcome: 'duplicate', state: null, refundLate: null };
  deps.logger.warn(
    { end_to_end_id: payment.endToEndId, notified_by: payment.environment },
    'PSP payment without a txid; flagged for an operator',
  );
  return { outcome: 'unknown_txid', state: null, refundLate: null };
}

/**
 * The payer gets the money back; the order stays as it is. Recorded on the payment once the PSP says it
 * is done (in its answer, or later in a notification's `devolucoes`).
 */
async function refundLatePayment(payment: PixPayment, deps: ChargeStoreDeps): Promise<void> {
  try {
    // The PSP that reported the payment gives it back (the charge is of that same environment).
    const answer = await pspFor(deps.psps, payment.environment).refund({
      endToEndId: payment.endToEndId,
      refundId: lateRefundId(payment.endToEndId),
      amountCents: payment.amountCents,
    });
    if (answer.status === 'FAILED') {
      deps.logger.error(
        { txid: payment.txid, reason: reasonText(answer.reason) },
        'refund of a late payment was not made; left for an operator',
      );
      return;
    }
    if (answer.status === 'PROCESSING') return;
    await markPaymentRefunded(deps.sql, payment.endToEndId);
  } catch (err) {
    deps.logger.error({ err, txid: payment.txid }, 'refund of a late payment failed; left for an operator');
  }
}
