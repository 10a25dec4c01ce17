import { randomUUID } from 'node:crypto';
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import {
  ChargeState,
  PaymentApprovedData,
  PaymentEvents,
  PaymentRefundFailedData,
  PaymentRefundedData,
  type Environment,
  type PspPaymentOutcome,
  type RefundStatus,
} from '@seller-api/contracts';
import {
  HttpError,
  conflict,
  enqueue,
  inTransaction,
  notFound,
  callerOrFork,
  serviceUnavailable,
  type Logger,
} from '@seller-api/service-kit';
import { TransactionSchema, type ChargeStatus, type Transaction } from '../db/entities';
import { insertPspPayment, markPspPayment } from '../db/psp-payments';
import { EXCHANGE } from '../events/topology';
import {
  chargeOfPayment,
  markPaymentRefunded,
  recordPaymentWithoutTxid,
  recordRefundAsk,
  recordRefundHold,
} from '../db/refunds';
import { eventHeaders, type ChargeOwner } from './charges';
import { move, refundsLatePayment, type ChargeAction } from './charge-state';
import {
  PspError,
  pspFor,
  type PspAdapter,
  type PspAdapters,
  type PspRefund,
  type PspRefundInput,
} from './psp';
import {
  attemptOfRefundId,
  currentAttempt,
  decideRefund,
  reasonText,
  refundIdFor,
  refundRefusal,
  refundView,
} from './refund-state';
import type { PaymentMetrics } from '../metrics';

export interface LifecycleDeps {
  /** Each environment's PSP: a refund asks the one of its charge's environment. */
  psps: PspAdapters;
  logger: Logger;
  now?: () => Date;
  metrics?: PaymentMetrics;
  /**
   * When a refund whose end has not arrived is looked up at the PSP (jobs/refund-checks.ts): first
   * `baseMs` after it was asked, then doubling up to `maxMs`. Defaults 30 s and 1 h.
   */
  refundChecks?: { baseMs: number; maxMs: number };
}

const DEFAULT_REFUND_CHECKS = { baseMs: 30_000, maxMs: 3_600_000 };
const refundChecksOf = (deps: Pick<LifecycleDeps, 'refundChecks'>) =>
  deps.refundChecks ?? DEFAULT_REFUND_CHECKS;

/**
 * Moves decided in a transaction, recorded in the metrics once it has returned (for a keyed request,
 * whose outer transaction commits later, a crash in between counts a move that did not happen).
 */
type Moved = Array<{ to: ChargeStatus | `REFUND_${RefundStatus}`; amount: number }>;
const recordMoves = (deps: LifecycleDeps, moved: Moved) => {
  for (const m of moved) deps.metrics?.chargeMoved(m.to, m.amount);
};

const iso = (d: Date | null) => (d ? d.toISOString() : null);

function chargeState(t: Transaction, previous: ChargeStatus | null): ChargeState {
  return ChargeState.parse({
    order_uuid: t.orderId,
    status: t.chargeStatus,
    previous_status: previous,
    version: t.version,
    paid_at: iso(t.approvedAt),
    changed_at: (t.statusChangedAt ?? t.createdAt).toISOString(),
    refund: refundView(t),
  });
}

export const currentState = (t: Transaction) => chargeState(t, null);

/** Applies a decided move on the locked row and queues what it causes, in the caller's transaction. */
function commitMove(
  tx: EntityManager,
  t: Transaction,
  to: ChargeStatus,
  now: Date,
  moved: Moved,
): ChargeState {
  const previous = t.chargeStatus;
  moved.push({ to, amount: t.grossAmount });
  t.chargeStatus = to;
  t.version += 1;
  t.statusChangedAt = now;
  if (to === 'PAID' && previous === 'PENDING') {
    t.status = 'APPROVED';
    t.approvedAt ??= now;
    enqueue(tx, {
      exchange: EXCHANGE,
      routingKey: PaymentEvents.APPROVED,
      payload: approvedData(t),
      headers: eventHeaders(t),
    });
  }
  if (to === 'REFUNDED') {
    t.status = 'REFUNDED';
    t.refundedAt = now;
    enqueue(tx, {
      exchange: EXCHANGE,
      routingKey: PaymentEvents.REFUNDED,
      payload: refundedData(t),
      headers: eventHeaders(t),
    });
  }
  return queueState(tx, t, previous);
}

/**
 * Queues the charge's state as `internal.charge.<status>`: orders mirrors it (and emits the public
 * order.* event of a move); the ledger follows it.
 */
function queueState(tx: EntityManager, t: Transaction, previous: ChargeStatus | null): ChargeState {
  const state = chargeState(t, previous);
  enqueue(tx, {
    exchange: EXCHANGE,
    routingKey: `internal.charge.${t.chargeStatus.toLowerCase()}`,
    payload: state,
    headers: eventHeaders(t),
  });
  return state;
}

function lockByOrder(tx: EntityManager, orderId: string) {
  return tx.findOne(TransactionSchema, { orderId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
}

function owned(t: Transaction | null, owner: ChargeOwner): Transaction {
  if (!t || t.sellerId !== owner.sellerId || t.environment !== owner.environment)
    throw notFound('Order not found.');
  return t;
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
  em: EntityManager,
  owner: ChargeOwner,
  orderId: string,
  deps: Pick<LifecycleDeps, 'refundChecks'>,
  holdSeq: number | null,
  /** The request's Idempotency-Key (null: not keyed), kept with the ask it starts. */
  key: string | null = null,
  now: Date = new Date(),
): Promise<void> {
  await recordRefundAsk(
    em,
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
  em: EntityManager,
  owner: ChargeOwner,
  orderId: string,
  holdSeq: number,
): Promise<void> {
  await recordRefundHold(em, { orderId, ...owner }, holdSeq);
}

/**
 * A seller's action or a sandbox simulation on the order's charge: decided on the locked row, so
 * concurrent actions (or a payment racing a cancel) have one winner. A refund asks the PSP first,
 * inside the lock: a failed PSP call leaves everything as it was, but for `refund_asked_at`, which the
 * caller committed beforehand (noteRefundAsked). The PSP may answer that it is still making the refund
 * (the charge stays PAID, its refund PROCESSING) or that it will not (RefundRefused, which the caller
 * records with recordRefundRefused once this transaction has rolled back).
 */
export async function actOnCharge(
  em: EntityManager,
  owner: ChargeOwner,
  orderId: string,
  action: Exclude<ChargeAction, 'pay'>,
  deps: LifecycleDeps,
  /** A refund request's Idempotency-Key (null: not keyed). */
  askKey: string | null = null,
): Promise<ChargeState> {
  const moved: Moved = [];
  const state = await inTransaction(em, async (tx) => {
    const t = owned(await lockByOrder(tx, orderId), owner);
    // A retry of the keyed request that asked this refund, whose answer was lost with its transaction
    // (the PSP answered, the database did not take it): the same refund, answered as it stands.
    if (
      action === 'refund' &&
      askKey !== null &&
      t.refundAskKey === askKey &&
      (t.refundStatus === 'PROCESSING' || t.refundStatus === 'REFUNDED')
    )
      return currentState(t);
    const decided = move(t.chargeStatus, action);
    if (!decided.ok) throw conflict(decided.message);
    const now = deps.now?.() ?? new Date();
    if (action === 'refund') {
      if (!t.endToEndId) throw conflict('This payment has no PSP reference to refund.');
      const refusal = refundRefusal(t);
      if (refusal) throw conflict(refusal);
      // The PSP is never asked unless the ask was recorded first: see noteRefundAsked.
      // (Absent only when the charge became PAID after the caller's mark: nothing was asked, retry.)
      if (!t.refundAskedAt || t.refundStatus === 'FAILED')
        throw serviceUnavailable('The charge changed meanwhile; retry the request.');
      const attempt = currentAttempt(t);
      // The request that asks the PSP, under the lock: two requests that both noted the ask (each
      // writing its key) leave the key of the one that asked.
      t.refundAskKey = askKey;
      const answer = await askRefund(
        pspFor(deps.psps, t.environment),
        { endToEndId: t.endToEndId, refundId: refundIdFor(t.id, attempt), amountCents: t.grossAmount },
        attempt,
        deps.logger,
      );
      if (answer.status === 'FAILED') throw new RefundRefused(attempt, reasonText(answer.reason), true);
      if (answer.status === 'PROCESSING') return commitRefund(tx, t, 'PROCESSING', now, deps, moved);
    }
    if (decided.to === 'REFUNDED' && t.refundAskedAt !== null && t.refundStatus !== 'REFUNDED')
      setRefund(t, 'REFUNDED', now);
    return commitMove(tx, t, decided.to, now, moved);
  });
  recordMoves(deps, moved);
  return state;
}

/**
 * The PSP did not make the refund: it answered `NAO_REALIZADO` (`atPsp`: a refund with this id exists
 * there, failed, so the next ask is a new attempt), or refused the request itself (a 4xx: nothing was
 * made). The seller is answered 502 with the PSP's reason and orders gives the refund's hold back;
 * recordRefundRefused keeps the outcome.
 */
export class RefundRefused extends HttpError {
  /** The ledger hold of the request the PSP refused (set by the route; null: none known). */
  holdSeq: number | null = null;

  constructor(
    readonly attempt: number,
    readonly reason: string | null,
    readonly atPsp: boolean,
  ) {
    super(
      502,
      'bad_gateway',
      atPsp
        ? `The PSP did not make the refund${reason ? `: ${reason.replace(/[.\s]+$/, '')}` : ''}. The order is unchanged; the refund can be asked again.`
        : 'The PSP refused the refund; the order is unchanged.',
    );
    this.name = 'RefundRefused';
  }
}

/** What became of a refusal once recorded (recordRefundRefused). */
export type RefusalRecord = 'recorded' | 'held';

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
      const same = currentAttempt(t) === refused.attempt;
      // Recorded meanwhile (another request's refusal, or a report of the same failure).
      if (same && t.refundStatus === 'FAILED') return 'recorded';
      if (!same || t.refundStatus !== null) return 'held';
      if (!refused.atPsp) {
        // Nothing was made (the PSP refused the request and has no refund of this id). Unless a newer
        // request reached us since (it may be asking now), the ask is taken back: the ledger's sweep
        // then reads no refund asked, and releases a hold whose count a lost answer kept.
        if (refused.holdSeq !== null && refused.holdSeq >= t.refundHoldSeq) {
          t.refundAskedAt = null;
          t.refundCheckAt = null;
          t.refundAskKey = null;
        }
        return 'recorded';
      }
      t.refundReason = refused.reason;
      commitRefund(tx, t, 'FAILED', deps.now?.() ?? new Date(), deps, []);
      return 'recorded';
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
 * The PSP's refund of a seller's refund. A failure rolls the transaction back, and the answer tells the
 * caller what the PSP said: 502 `bad_gateway` when it refused the request (a 4xx, and it has no refund
 * with this id: it was certainly not made; orders gives the refund's hold back, docs/finance.md
 * "Refunds"); 503 when it could not be asked or did not answer, so it may have refunded (the refund
 * checks look it up; a retry asks again with the same refund id, and a PSP that refuses an id it knows
 * is looked up instead).
 */
async function askRefund(
  psp: PspAdapter,
  input: PspRefundInput,
  attempt: number,
  logger: Logger,
): Promise<PspRefund> {
  try {
    return await psp.refund(input);
  } catch (err) {
    if (!(err instanceof PspError)) throw err;
    logger.warn(
      { err: err.message, psp: psp.name, psp_status: err.status, retryable: err.retryable },
      'PSP refund failed; the charge is unchanged',
    );
    if (err.retryable)
      throw serviceUnavailable('The PSP could not be asked for the refund; retry the request.');
    // API Pix refuses a refund id it already knows (400): the refund asked before, whose answer was
    // lost, may be made or on its way. Only a PSP that has no refund with this id refused for sure.
    const found = await psp.lookupRefund(input).catch((lookupErr: unknown) => {
      logger.warn(
        { err: (lookupErr as Error).message, psp: psp.name },
        'refund look-up after a refusal failed',
      );
      return undefined;
    });
    if (found === undefined)
      throw serviceUnavailable('The PSP could not be asked for the refund; retry the request.');
    if (found === null) throw new RefundRefused(attempt, null, false);
    return found;
  }
}

/** Sets the refund's state on the locked row (no event: the caller's move or commitRefund queues it). */
function setRefund(t: Transaction, status: RefundStatus, now: Date): void {
  t.refundStatus = status;
  t.refundUpdatedAt = now;
  t.refundRequestedAt ??= t.refundAskedAt ?? now;
  if (status !== 'PROCESSING') t.refundCheckAt = null;
  if (status !== 'FAILED') t.refundReason = null;
}

/**
 * A change of the refund alone (PROCESSING, FAILED; or REFUNDED on a charge no longer PAID): a new
 * version of the charge's state with the same status, queued as `internal.charge.<status>` so orders
 * shows it and the ledger releases a failed refund's hold; a FAILED one also tells the seller through
 * `payment.refund_failed`.
 */
function commitRefund(
  tx: EntityManager,
  t: Transaction,
  status: RefundStatus,
  now: Date,
  deps: LifecycleDeps,
  moved: Moved,
): ChargeState {
  setRefund(t, status, now);
  if (status === 'PROCESSING' && t.refundCheckAt === null) {
    t.refundCheckAt = new Date(now.getTime() + refundChecksOf(deps).baseMs);
  }
  t.version += 1;
  moved.push({ to: `REFUND_${status}`, amount: t.grossAmount });
  if (status === 'FAILED') {
    enqueue(tx, {
      exchange: EXCHANGE,
      routingKey: PaymentEvents.REFUND_FAILED,
      payload: refundFailedData(t),
      headers: eventHeaders(t),
    });
  }
  return queueState(tx, t, t.chargeStatus);
}

/** Where a refund is reported from, for the logs and metrics. */
export type RefundReportSource = 'notification' | 'check';

/** A refund's state as the PSP reported it (a notification's `devolucoes`, or a look-up). */
export interface RefundReportInput {
  /** Whose PSP reported it: a report of the other environment's charge changes nothing. */
  environment: Environment;
  /** The refunded payment's end-to-end id. */
  endToEndId: string;
  /** Our refund id. */
  refundId: string;
  status: RefundStatus;
  reason: string | null;
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
  deps: LifecycleDeps,
  source: RefundReportSource,
): Promise<'applied' | 'unchanged' | 'unknown'> {
  const moved: Moved = [];
  const result = await inTransaction(em, async (tx) => {
    // The payment's record names its charge; a late payment's e2e id is not the charge's own.
    const where = await chargeOfPayment(tx, report.endToEndId);
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
async function settleLateRefund(tx: EntityManager, report: RefundReportInput, deps: LifecycleDeps) {
  if (report.refundId !== lateRefundId(report.endToEndId)) return false;
  if (report.status === 'REFUNDED') return markPaymentRefunded(tx, report.endToEndId);
  if (report.status === 'FAILED') {
    deps.logger.error(
      { end_to_end_id: report.endToEndId, reason: reasonText(report.reason) },
      'refund of a late payment was not made; left for an operator',
    );
  }
  return false;
}

/** Our refund id for a late payment: `L` and its end-to-end id. */
const lateRefundId = (endToEndId: string) => `L${endToEndId}`.slice(0, 35);

export interface PixPayment {
  /**
   * Whose PSP reports it: the live PSP's notifications pay live charges only; the homologation PSP's
   * and the sandbox pay route test charges only. A charge of the other environment is an unknown txid.
   */
  environment: Environment;
  /** Null for a PIX paid to the key without a charge (API Pix makes `txid` optional). */
  txid: string | null;
  endToEndId: string;
  amountCents: number;
  paidAt: Date;
}

/** What became of a notified payment (contracts' PspPaymentOutcome, answered to the PSP). */
export type PaymentOutcome = PspPaymentOutcome;

/**
 * A PSP payment notification (or a sandbox pay, through the same code): recorded once per end-to-end
 * id, so a notification seen twice changes nothing. An unknown txid or a wrong amount changes nothing
 * and is kept for an operator; a payment for an expired or cancelled order, or a second payment of a
 * paid one, is refunded to the payer at once and the order stays as it is.
 */
export async function confirmPayment(
  em: EntityManager,
  payment: PixPayment,
  deps: LifecycleDeps,
): Promise<{ outcome: PaymentOutcome; state: ChargeState | null }> {
  const recorded = await recordPayment(em, payment, deps);
  await recorded.refundLate?.();
  return { outcome: recorded.outcome, state: recorded.state };
}

export interface RecordedPayment {
  outcome: PaymentOutcome;
  state: ChargeState | null;
  /** A payment the charge can no longer take: give it back to the payer, once the recording committed. */
  refundLate: (() => Promise<void>) | null;
}

/**
 * confirmPayment's recording, in the caller's transaction when it has one (a keyed sandbox pay, whose
 * refund of a late payment must wait for that transaction's commit: the caller runs `refundLate`).
 */
export async function recordPayment(
  em: EntityManager,
  payment: PixPayment,
  deps: LifecycleDeps,
): Promise<RecordedPayment> {
  if (payment.txid === null) return recordWithoutTxid(em, payment, deps);
  const txid = payment.txid;
  const moved: Moved = [];
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
    const recorded = await insertPspPayment(tx, { ...payment, txid });
    if (!recorded) return { outcome: 'duplicate' as const, state: null, refund: null };
    const record = (outcome: PaymentOutcome, detail: string | null = null) =>
      markPspPayment(tx, payment.endToEndId, outcome, t?.id ?? null, detail);
    if (!t) {
      await record('unknown_txid');
      return { outcome: 'unknown_txid' as const, state: null, refund: null };
    }
    if (payment.amountCents !== t.grossAmount) {
      await record('amount_mismatch', `expected ${t.grossAmount}, received ${payment.amountCents}`);
      return { outcome: 'amount_mismatch' as const, state: currentState(t), refund: null };
    }
    if (t.chargeStatus === 'PENDING') {
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
  if (result.outcome === 'unknown_txid' || result.outcome === 'amount_mismatch') {
    deps.logger.warn(
      { txid: payment.txid, outcome: result.outcome },
      'PSP payment not applied; flagged for an operator',
    );
  }
  return {
    outcome: result.outcome,
    state: result.state,
    refundLate: result.refund ? () => refundLatePayment(em, payment, deps) : null,
  };
}

/**
 * A PIX paid to our key without a txid: no charge of ours, so nothing changes; it is kept for an
 * operator (outcome `unknown_txid`, detail `no txid`), once per end-to-end id.
 */
async function recordWithoutTxid(
  em: EntityManager,
  payment: PixPayment,
  deps: LifecycleDeps,
): Promise<RecordedPayment> {
  if (!(await recordPaymentWithoutTxid(callerOrFork(em), payment)))
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
async function refundLatePayment(em: EntityManager, payment: PixPayment, deps: LifecycleDeps): Promise<void> {
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
    await markPaymentRefunded(em.fork(), payment.endToEndId);
  } catch (err) {
    deps.logger.error({ err, txid: payment.txid }, 'refund of a late payment failed; left for an operator');
  }
}

/** Expires due PENDING charges, a batch at a time; replicas share the work through SKIP LOCKED. */
export async function expireDue(em: EntityManager, deps: LifecycleDeps, limit = 100): Promise<number> {
  const moved: Moved = [];
  const count = await em.fork().transactional(async (tx) => {
    const due = await tx.find(
      TransactionSchema,
      { chargeStatus: 'PENDING', expiresAt: { $lte: deps.now?.() ?? new Date() } },
      { orderBy: { expiresAt: 'asc' }, limit, lockMode: LockMode.PESSIMISTIC_PARTIAL_WRITE },
    );
    const now = deps.now?.() ?? new Date();
    for (const t of due) commitMove(tx, t, 'EXPIRED', now, moved);
    return due.length;
  });
  recordMoves(deps, moved);
  return count;
}

export async function findCharge(
  em: EntityManager,
  owner: ChargeOwner,
  orderId: string,
): Promise<Transaction> {
  return owned(await callerOrFork(em).findOne(TransactionSchema, { orderId }), owner);
}

function approvedData(t: Transaction): PaymentApprovedData {
  return PaymentApprovedData.parse({
    transaction: {
      id: t.id,
      method: t.method,
      status: 'APPROVED',
      gross_amount: t.grossAmount,
      fee_amount: t.feeAmount,
      net_amount: t.netAmount,
      approved_at: iso(t.approvedAt),
    },
    order: { uuid: t.orderId, status: 'PAID' },
    seller: { name: t.sellerName ?? '' },
  });
}

function refundedData(t: Transaction): PaymentRefundedData {
  return PaymentRefundedData.parse({
    transaction: {
      id: t.id,
      method: t.method,
      status: 'REFUNDED',
      gross_amount: t.grossAmount,
      fee_amount: t.feeAmount,
      net_amount: t.netAmount,
      approved_at: iso(t.approvedAt),
      refunded_at: iso(t.refundedAt),
    },
    order: { uuid: t.orderId, status: 'REFUNDED' },
    seller: { name: t.sellerName ?? '' },
  });
}

function refundFailedData(t: Transaction): PaymentRefundFailedData {
  const view = refundView(t);
  return PaymentRefundFailedData.parse({
    transaction: {
      id: t.id,
      method: t.method,
      status: t.status,
      gross_amount: t.grossAmount,
      fee_amount: t.feeAmount,
      net_amount: t.netAmount,
      approved_at: iso(t.approvedAt),
    },
    order: { uuid: t.orderId, status: t.chargeStatus },
    refund: {
      amount: t.grossAmount,
      requested_at: view?.requested_at ?? iso(t.refundAskedAt),
      failed_at: view?.updated_at ?? iso(t.refundUpdatedAt),
      reason: t.refundReason,
    },
    seller: { name: t.sellerName ?? '' },
  });
}

export const newEndToEndId = (now: Date) =>
  `E00000000${now.toISOString().replace(/\D/g, '').slice(0, 12)}${randomUUID().replace(/-/g, '').slice(0, 11)}`;
