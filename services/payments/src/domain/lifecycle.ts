import { randomUUID } from 'node:crypto';
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import {
  ChargeState,
  PaymentApprovedData,
  PaymentEvents,
  PaymentRefundedData,
  type Environment,
  type PspPaymentOutcome,
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
import { EXCHANGE } from '../events/topology';
import { eventHeaders, type ChargeOwner } from './charges';
import { move, refundsLatePayment, type ChargeAction } from './charge-state';
import { PspError, pspFor, type PspAdapter, type PspAdapters, type PspRefundInput } from './psp';
import type { PaymentMetrics } from '../metrics';

export interface LifecycleDeps {
  /** Each environment's PSP: a refund asks the one of its charge's environment. */
  psps: PspAdapters;
  logger: Logger;
  now?: () => Date;
  metrics?: PaymentMetrics;
}

/**
 * Moves decided in a transaction, recorded in the metrics once it has returned (for a keyed request,
 * whose outer transaction commits later, a crash in between counts a move that did not happen).
 */
type Moved = Array<{ to: ChargeStatus; amount: number }>;
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
  const state = chargeState(t, previous);
  // Internal: orders mirrors the money state and emits the public order.* event.
  enqueue(tx, {
    exchange: EXCHANGE,
    routingKey: `internal.charge.${to.toLowerCase()}`,
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
 * the ledger's sweep to keep the refund's hold rather than release it (docs/finance.md "Refunds"). Run
 * it before the request's transaction: taking a second connection while holding the row's lock could
 * exhaust the pool.
 */
export async function noteRefundAsked(
  em: EntityManager,
  owner: ChargeOwner,
  orderId: string,
  now: Date = new Date(),
): Promise<void> {
  await em.fork().execute(
    `update payments.transactions set refund_asked_at = ?
       where order_id = ? and seller_id = ? and environment = ? and charge_status = 'PAID' and end_to_end_id is not null`,
    [now, orderId, owner.sellerId, owner.environment],
  );
}

/**
 * A seller's action or a sandbox simulation on the order's charge: decided on the locked row, so
 * concurrent actions (or a payment racing a cancel) have one winner. A refund asks the PSP first,
 * inside the lock: a failed PSP call leaves everything as it was, but for `refund_asked_at`, which the
 * caller committed beforehand (noteRefundAsked).
 */
export async function actOnCharge(
  em: EntityManager,
  owner: ChargeOwner,
  orderId: string,
  action: Exclude<ChargeAction, 'pay'>,
  deps: LifecycleDeps,
): Promise<ChargeState> {
  const moved: Moved = [];
  const state = await inTransaction(em, async (tx) => {
    const t = owned(await lockByOrder(tx, orderId), owner);
    const decided = move(t.chargeStatus, action);
    if (!decided.ok) throw conflict(decided.message);
    if (action === 'refund') {
      if (!t.endToEndId) throw conflict('This payment has no PSP reference to refund.');
      // The PSP is never asked unless the ask was recorded first: see noteRefundAsked.
      // (Absent only when the charge became PAID after the caller's mark: nothing was asked, retry.)
      if (!t.refundAskedAt) throw serviceUnavailable('The charge changed meanwhile; retry the request.');
      await askRefund(
        pspFor(deps.psps, t.environment),
        { endToEndId: t.endToEndId, refundId: refundIdFor(t), amountCents: t.grossAmount },
        deps.logger,
      );
    }
    return commitMove(tx, t, decided.to, deps.now?.() ?? new Date(), moved);
  });
  recordMoves(deps, moved);
  return state;
}

/**
 * The PSP's refund of a seller's refund. Its failure rolls the transaction back, and the answer tells
 * the caller what the PSP said: 502 `bad_gateway` when it refused the refund (it was certainly not made:
 * orders gives the refund's hold back, docs/finance.md "Refunds"); 503 when it could not be asked or did
 * not answer, so it may have refunded (a retry asks again with the same refund id, which the PSP takes
 * as the same refund).
 */
async function askRefund(psp: PspAdapter, input: PspRefundInput, logger: Logger): Promise<void> {
  try {
    await psp.refund(input);
  } catch (err) {
    if (!(err instanceof PspError)) throw err;
    logger.warn(
      { err: err.message, psp: psp.name, psp_status: err.status, retryable: err.retryable },
      'PSP refund failed; the charge is unchanged',
    );
    if (!err.retryable)
      throw new HttpError(502, 'bad_gateway', 'The PSP refused the refund; the order is unchanged.');
    throw serviceUnavailable('The PSP could not be asked for the refund; retry the request.');
  }
}

/** API Pix refund ids: up to 35 letters and digits, ours, stable per transaction (a retry is the same refund). */
function refundIdFor(t: Transaction): string {
  return `D${t.id.replace(/-/g, '')}`.slice(0, 35);
}

export interface PixPayment {
  /**
   * Whose PSP reports it: the live PSP's notifications pay live charges only; the homologation PSP's
   * and the sandbox pay route test charges only. A charge of the other environment is an unknown txid.
   */
  environment: Environment;
  txid: string;
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
  const moved: Moved = [];
  const result = await inTransaction(em, async (tx) => {
    // A charge of the other environment is checked before anything is recorded: recording the end-to-end
    // id first would let a notification of the test PSP (or the sandbox) take a live payment's id, so
    // that the real payment would be ignored as a duplicate.
    const [charge] = await tx.execute<Array<{ environment: Environment }>>(
      `select environment from payments.transactions where txid = ?`,
      [payment.txid],
    );
    if (charge && charge.environment !== payment.environment) {
      // For an operator: a PSP (or its secret) naming the other environment's charges.
      deps.logger.warn(
        { txid: payment.txid, charge_environment: charge.environment, notified_by: payment.environment },
        'PSP notification names a charge of the other environment; nothing recorded',
      );
      return { outcome: 'unknown_txid' as const, state: null, refund: null };
    }
    const inserted = await tx.execute<{ affectedRows: number }>(
      `insert into payments.psp_payments (end_to_end_id, txid, amount, paid_at, outcome) values (?, ?, ?, ?, 'applied')
       on conflict (end_to_end_id) do nothing`,
      [payment.endToEndId, payment.txid, payment.amountCents, payment.paidAt],
      'run',
    );
    if (inserted.affectedRows === 0) return { outcome: 'duplicate' as const, state: null, refund: null };
    const t = await tx.findOne(
      TransactionSchema,
      { txid: payment.txid },
      { lockMode: LockMode.PESSIMISTIC_WRITE },
    );
    const record = (outcome: PaymentOutcome, detail: string | null = null) =>
      tx.execute(
        `update payments.psp_payments set outcome = ?, transaction_id = ?, detail = ? where end_to_end_id = ?`,
        [outcome, t?.id ?? null, detail, payment.endToEndId],
      );
    if (!t || t.environment !== payment.environment) {
      // A test charge is never paid through the live PSP (nor a live one through the test PSP).
      await record('unknown_txid', t ? `charge is in the ${t.environment} environment` : null);
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

/** The payer gets the money back; the order stays as it is. Recorded on the payment once done. */
async function refundLatePayment(em: EntityManager, payment: PixPayment, deps: LifecycleDeps): Promise<void> {
  try {
    // The PSP that reported the payment gives it back (the charge is of that same environment).
    await pspFor(deps.psps, payment.environment).refund({
      endToEndId: payment.endToEndId,
      refundId: `L${payment.endToEndId}`.slice(0, 35),
      amountCents: payment.amountCents,
    });
    await em
      .fork()
      .execute(`update payments.psp_payments set outcome = 'refunded' where end_to_end_id = ?`, [
        payment.endToEndId,
      ]);
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

export const newEndToEndId = (now: Date) =>
  `E00000000${now.toISOString().replace(/\D/g, '').slice(0, 12)}${randomUUID().replace(/-/g, '').slice(0, 11)}`;
