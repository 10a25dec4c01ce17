import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Environment } from '@seller-api/contracts';
import { inTransaction, sqlInTransaction, type Sql } from '@seller-api/service-kit';
import type { ChargeOwner } from '../domain/charges';
import {
  decideRefusal,
  lateRefundId,
  owned,
  recordMoves,
  refundChecksOf,
  setRefund,
  type LifecycleDeps,
  type Moved,
  type RefundRefused,
  type RefundReportInput,
  type RefundReportSource,
  type RefusalRecord,
} from '../domain/lifecycle';
import { MAX_REFUND_ATTEMPTS, attemptOfRefundId, decideRefund, reasonText } from '../domain/refund-state';
import { commitMove, commitRefund, lockByOrder, type ChargeStoreDeps } from './charges';
import { TransactionSchema } from './entities';
import { chargeOfPayment, markPaymentRefunded } from './psp-payments';

/*
 * A seller's refunds of a charge (on payments.transactions): the ask, recorded on its own before the
 * PSP is asked, the PSP's refusal, and the PSP's reports of where a refund stands.
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
  sql: Sql,
  charge: ChargeRef,
  ask: { holdSeq: number | null; at: Date; firstCheckAt: Date; key: string | null },
): Promise<void> {
  // A parameter, not text: the statement is prepared once whatever the hold's number.
  const seq = ask.holdSeq !== null && Number.isSafeInteger(ask.holdSeq) && ask.holdSeq > 0 ? ask.holdSeq : 0;
  const fresh = `refund_status is null`;
  const renew = `(refund_status = 'FAILED' and refund_attempt < ${MAX_REFUND_ATTEMPTS} and $8::int > refund_hold_seq)`;
  const asks = `(${fresh} or ${renew})`;
  await sql.query(
    `update payments.transactions set
       refund_hold_seq = greatest(refund_hold_seq, $8::int),
       refund_attempt = case when ${renew} then greatest(refund_attempt, 1) + 1
                             when ${fresh} then greatest(refund_attempt, 1) else refund_attempt end,
       refund_requested_at = case when ${renew} or (${fresh} and refund_requested_at is null) then $1
                                  else refund_requested_at end,
       refund_reason = case when ${renew} then null else refund_reason end,
       refund_checks = case when ${renew} then 0 else refund_checks end,
       refund_check_at = case when ${renew} or (${fresh} and refund_check_at is null) then $2
                              else refund_check_at end,
       refund_status = case when ${renew} then null else refund_status end,
       refund_asked_at = case when ${asks} then $3 else refund_asked_at end,
       refund_ask_key = case when ${asks} then $4 else refund_ask_key end
     where order_id = $5 and seller_id = $6 and environment = $7 and charge_status = 'PAID'
       and end_to_end_id is not null`,
    [ask.at, ask.firstCheckAt, ask.at, ask.key, charge.orderId, charge.sellerId, charge.environment, seq],
  );
}

/** Records a refund request's hold alone (a keyed retry that asks nothing). */
export async function recordRefundHold(sql: Sql, charge: ChargeRef, holdSeq: number): Promise<void> {
  await sql.query(
    `update payments.transactions set refund_hold_seq = greatest(refund_hold_seq, $1)
      where order_id = $2 and seller_id = $3 and environment = $4`,
    [holdSeq, charge.orderId, charge.sellerId, charge.environment],
  );
}

/**
 * Records, committed on its own connection before anything is locked, that the seller's refund of a
 * PAID charge is about to be asked of the PSP (`refund_asked_at`). The call's outcome may be lost (a
 * timeout, a 5xx) after the PSP made the refund: the charge then still reads PAID, and this mark tells
 * the ledger's sweep to keep the refund's hold rather than release it (docs/finance.md "Refunds"), and
 * the refund checks (jobs/refund-checks.ts) to look it up. After a FAILED refund the ask is a new
 * attempt, with its own refund id, committed here before the PSP can hear of it. Run it before the
 * request's transaction: taking a second connection while holding the row's lock could exhaust the pool.
 */
export async function noteRefundAsked(
  sql: Sql,
  owner: ChargeOwner,
  orderId: string,
  deps: Pick<LifecycleDeps, 'refundChecks'>,
  holdSeq: number | null,
  /** The request's Idempotency-Key (null: not keyed), kept with the ask it starts. */
  key: string | null = null,
  now: Date = new Date(),
): Promise<void> {
  await recordRefundAsk(
    sql,
    { orderId, ...owner },
    {
      holdSeq,
      key,
      at: now,
      firstCheckAt: new Date(now.getTime() + refundChecksOf(deps).baseMs),
    },
  );
}

/**
 * The ledger hold of a seller's refund request that asks nothing (a keyed retry answered with its
 * stored answer): recorded all the same, so that the failure of the refund it retried covers it.
 */
export async function noteRefundHold(
  sql: Sql,
  owner: ChargeOwner,
  orderId: string,
  holdSeq: number,
): Promise<void> {
  await recordRefundHold(sql, { orderId, ...owner }, holdSeq);
}

/**
 * Records a refund the PSP refused (RefundRefused), after the request's transaction rolled back. A
 * `NAO_REALIZADO`: the charge's refund becomes FAILED with the reason, `payment.refund_failed` tells the
 * seller, and the next refund is a new attempt; orders, answered 502, gives its hold back at once (the
 * ledger would too on the message: a hold is released once). A refused request (nothing at the PSP):
 * nothing to look up any more. `held` (answered 503, the hold left where it is) when the refund is no
 * longer a refusal (another request or a report moved it meanwhile), or a `NAO_REALIZADO` that could not
 * be recorded: the refund checks find it at the PSP and the ledger releases the hold then.
 */
export async function recordRefundRefused(
  em: EntityManager,
  owner: ChargeOwner,
  orderId: string,
  refused: RefundRefused,
  deps: LifecycleDeps,
): Promise<RefusalRecord> {
  try {
    return await inTransaction(em.fork(), async (tx): Promise<RefusalRecord> => {
      const t = owned(await lockByOrder(tx, orderId), owner);
      const step = decideRefusal(t, refused);
      if (step === 'take-back') {
        t.refundAskedAt = null;
        t.refundCheckAt = null;
        t.refundAskKey = null;
        return 'recorded';
      }
      if (step === 'fail') {
        t.refundReason = refused.reason;
        commitRefund(tx, t, 'FAILED', deps.now?.() ?? new Date(), deps, []);
        return 'recorded';
      }
      return step;
    });
  } catch (err) {
    deps.logger.error(
      { err, order_uuid: orderId },
      'refused refund not recorded; the refund checks will find it at the PSP',
    );
    // Nothing made at the PSP: the hold can go back all the same.
    return refused.atPsp ? 'held' : 'recorded';
  }
}

/**
 * Applies the PSP's report of a refund (docs/payments.md, "Refunds"): the end of a seller's refund
 * (REFUNDED: the charge becomes REFUNDED, with its events and the ledger's reversal; FAILED: the
 * charge stays PAID, the hold is released and the seller told), or its progress. A report seen twice,
 * late or out of order changes nothing (refund-state.ts decideRefund). A refund of a late payment
 * (id `L...`) is recorded on that payment. Returns what it did.
 */
export async function settleRefund(
  em: EntityManager,
  report: RefundReportInput,
  deps: ChargeStoreDeps,
  source: RefundReportSource,
): Promise<'applied' | 'unchanged' | 'unknown'> {
  const moved: Moved = [];
  const result = await inTransaction(em, async (tx) => {
    // The payment's record names its charge; a late payment's e2e id is not the charge's own.
    const where = await chargeOfPayment(sqlInTransaction(deps.sql, tx), report.endToEndId);
    if (!where) return 'unknown' as const;
    const t = await tx.findOne(TransactionSchema, where, { lockMode: LockMode.PESSIMISTIC_WRITE });
    if (!t || t.environment !== report.environment) return 'unknown' as const;
    if (t.endToEndId !== report.endToEndId) {
      return (await settleLateRefund(tx, report, deps)) ? ('applied' as const) : ('unchanged' as const);
    }
    const attempt = attemptOfRefundId(t.id, report.refundId);
    if (attempt === null) return 'unknown' as const;
    const decided = decideRefund(t, { attempt, status: report.status });
    const now = deps.now?.() ?? new Date();
    switch (decided.kind) {
      case 'none':
        if (report.status === 'FAILED' && t.chargeStatus === 'REFUNDED' && t.refundStatus !== 'FAILED') {
          // An earlier release booked any accepted refund as made: one of those the PSP did not make.
          deps.logger.error(
            { order_uuid: t.orderId, refund_id: report.refundId, reason: reasonText(report.reason), source },
            'PSP did not make a refund booked as REFUNDED; the payer is not refunded: check with the PSP',
          );
          deps.metrics?.refundContradicted();
        } else {
          deps.logger.debug(
            { order_uuid: t.orderId, why: decided.why, source },
            'refund report changes nothing',
          );
        }
        // Nothing left to follow on a charge no refund of ours can move any more.
        if (t.refundCheckAt !== null && !['PAID', 'MED'].includes(t.chargeStatus)) t.refundCheckAt = null;
        return 'unchanged' as const;
      case 'processing':
        commitRefund(tx, t, 'PROCESSING', now, deps, moved);
        return 'applied' as const;
      case 'failed':
        t.refundReason = reasonText(report.reason);
        commitRefund(tx, t, 'FAILED', now, deps, moved);
        deps.logger.warn(
          { order_uuid: t.orderId, reason: t.refundReason, source },
          'PSP did not make the refund; the order stays PAID',
        );
        return 'applied' as const;
      case 'refunded':
        if (t.chargeStatus === 'PAID' || t.chargeStatus === 'MED') {
          setRefund(t, 'REFUNDED', now);
          commitMove(tx, t, 'REFUNDED', now, moved);
        } else {
          // A chargeback decided meanwhile took the money already: the refund is recorded, nothing moves.
          commitRefund(tx, t, 'REFUNDED', now, deps, moved);
          deps.logger.error(
            { order_uuid: t.orderId, charge_status: t.chargeStatus },
            'PSP refunded a charge that is no longer PAID; check it with the PSP',
          );
        }
        return 'applied' as const;
    }
  });
  recordMoves(deps, moved);
  return result;
}

/** The end of a late payment's refund (refundLatePayment), recorded on that payment. */
async function settleLateRefund(tx: EntityManager, report: RefundReportInput, deps: ChargeStoreDeps) {
  if (report.refundId !== lateRefundId(report.endToEndId)) return false;
  if (report.status === 'REFUNDED')
    return markPaymentRefunded(sqlInTransaction(deps.sql, tx), report.endToEndId);
  if (report.status === 'FAILED') {
    deps.logger.error(
      { end_to_end_id: report.endToEndId, reason: reasonText(report.reason) },
      'refund of a late payment was not made; left for an operator',
    );
  }
  return false;
}
