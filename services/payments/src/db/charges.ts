import { randomUUID } from 'node:crypto';
import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import {
  PaymentEvents,
  PaymentPixQrCodeCreatedData,
  type Charge,
  type ChargeState,
  type CreateChargeRequest,
  type DueDateTermsRecord,
  type RefundStatus,
} from '@seller-api/contracts';
import {
  HttpError,
  badRequest,
  callerOrFork,
  conflict,
  enqueue,
  inTransaction,
  outboxRow,
  serviceUnavailable,
  sqlInTransaction,
  type Sql,
} from '@seller-api/service-kit';
import {
  eventHeaders,
  newCharge,
  ownedBy,
  pixQrCodeCreatedData,
  toCharge,
  type ChargeOwner,
} from '../domain/charges';
import { move, type ChargeAction } from '../domain/charge-state';
import { computeFee } from '../domain/fees';
import {
  RefundRefused,
  applyMove,
  applyRefund,
  askRefund,
  checkRefundAsk,
  currentState,
  owned,
  recordMoves,
  refundAlreadyAsked,
  setRefund,
  type ChargeChange,
  type FeeSettings,
  type LifecycleDeps,
  type Moved,
} from '../domain/lifecycle';
import { dueDateTermsProblem } from '../domain/due-date-payments';
import {
  PspError,
  pspFor,
  type PspAdapter,
  type PspAdapters,
  type PspCharge,
  type PspDueDateCancel,
} from '../domain/psp';
import { currentAttempt, reasonText, refundIdFor } from '../domain/refund-state';
import { newTxid } from '../domain/txid';
import { EXCHANGE } from '../events/topology';
import type { ChargeWrites } from './charge-writes';
import { TransactionSchema, type ChargeStatus, type Transaction } from './entities';

/*
 * The charges (payments.transactions): made, read, and moved on their locked rows, each move with the
 * messages it causes in the same transaction (domain/lifecycle.ts decides them).
 */

/**
 * What the charge flows need: the lifecycle's, the service's plain statements, and the fee settings a
 * due-date payment's fee is computed with.
 */
export type ChargeStoreDeps = LifecycleDeps & { sql: Sql; fees: FeeSettings };

/**
 * `sql`'s statements where `em` runs: in its transaction when it is in one (a keyed request's), else
 * on a connection of their own, as `callerOrFork` does for the ORM.
 */
export const sqlOfCaller = (sql: Sql, em: EntityManager): Sql =>
  em.getTransactionContext() ? sqlInTransaction(sql, em) : sql;

/** Queues a change's messages in the transaction's outbox, in their order. */
function queue(tx: EntityManager, change: ChargeChange): ChargeState {
  for (const message of change.messages) enqueue(tx, { exchange: EXCHANGE, ...message });
  return change.state;
}

/** Applies a decided move on the locked row and queues what it causes, in the caller's transaction. */
export function commitMove(
  tx: EntityManager,
  t: Transaction,
  to: ChargeStatus,
  now: Date,
  moved: Moved,
): ChargeState {
  return queue(tx, applyMove(t, to, now, moved));
}

/** A change of the refund alone (domain/lifecycle.ts applyRefund), queued in the caller's transaction. */
export function commitRefund(
  tx: EntityManager,
  t: Transaction,
  status: RefundStatus,
  now: Date,
  deps: Pick<LifecycleDeps, 'refundChecks'>,
  moved: Moved,
): ChargeState {
  return queue(tx, applyRefund(t, status, now, deps, moved));
}

export function lockByOrder(tx: EntityManager, orderId: string) {
  return tx.findOne(TransactionSchema, { orderId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
}

export interface ChargeDeps {
  /** Each environment's PSP: a charge asks the one of its owner's environment. */
  psps: PspAdapters;
  feeBps: number;
  feeFixedAmount: number;
  writes: ChargeWrites;
  now?: () => Date;
  txid?: () => string;
  /** Told when an event was stored outside a flush, to wake the outbox relay. */
  outboxStored?: () => void;
}

export interface ChargeResult {
  transaction: Transaction;
  /** False when the order already had its charge and that one is returned. */
  created: boolean;
  /** The charge as the internal API shows it (toCharge), its QR image rendered. */
  charge: Charge;
}

/**
 * After the callbacks already queued: a write batch submitted this turn has started by then (its own
 * callback was queued first), so its statement is on its way unless the pool had no free connection.
 */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * The PIX charge of an order, idempotent on the order: when the same seller asks again, the existing
 * transaction is returned. Orders makes a new order id for every create, so only a repeated internal
 * call asks again: with a local PSP adapter the insert finds the charge (it loses on the unique order
 * index), which spares every charge a lookup; a remote PSP is never asked twice, so there the charge
 * is looked up first. A concurrent duplicate loses the race on that index and reads the winner's row.
 * The transaction and its `payment.pix_qr_code_created` event commit together.
 */
export async function createCharge(
  em: EntityManager,
  owner: ChargeOwner,
  input: CreateChargeRequest,
  deps: ChargeDeps,
): Promise<ChargeResult> {
  // The order's own environment picks the PSP: a test order never reaches the live PSP.
  const adapter = pspFor(deps.psps, owner.environment);
  if (adapter.remote) {
    const existing = await findByOrder(em.fork(), input.order_uuid);
    if (existing) return answered(ownedBy(existing, owner));
  }
  const now = deps.now?.() ?? new Date();
  // Static BR Codes hold 25 characters; API Pix wants 26 to 35: the adapter says which.
  const txid = deps.txid?.() ?? newTxid(adapter.txidLength);
  const expiresAt = new Date(input.expires_at);
  const fee = computeFee(input.gross_amount, deps.feeBps, deps.feeFixedAmount);
  // Asked before the database transaction opens, so no connection waits on the PSP.
  const psp = input.due_date
    ? await askDueDateCharge(adapter, { ...input, due_date: input.due_date }, txid)
    : await adapter.createCharge({
        txid,
        amountCents: input.gross_amount,
        expiresAt,
        debtorName: input.debtor_name,
        debtorDocument: input.debtor_document,
      });
  const transaction = newCharge({
    id: randomUUID(),
    owner,
    input,
    txid,
    copyAndPaste: psp.copyAndPaste,
    expiresAt,
    fee,
    feeSettings: { bps: deps.feeBps, fixedAmount: deps.feeFixedAmount },
    now,
  });
  // Validated before anything is written: a payload the contract refuses is a bug, not a charge.
  const payload = PaymentPixQrCodeCreatedData.parse(pixQrCodeCreatedData(transaction));

  const event = outboxRow({
    exchange: EXCHANGE,
    routingKey: PaymentEvents.PIX_QR_CODE_CREATED,
    payload,
    headers: eventHeaders(transaction),
  });
  // The transaction and its event in one statement: atomic, one round trip (the create-order path).
  const written = deps.writes.insert(transaction, event);
  // Handled below, after the image: a failure meanwhile must not count as unhandled.
  written.catch(() => undefined);
  // The QR image (~0.1 ms of CPU) is rendered while the statement travels and commits, not after:
  // the image needs only copy_and_paste.
  await nextTurn();
  const charge = toCharge(transaction);
  try {
    await written;
    deps.outboxStored?.();
  } catch (err) {
    if (!isUniqueViolation(err)) throw err;
    // This order's charge was made before (or by a concurrent request): answer with it.
    const winner = await findByOrder(em.fork(), input.order_uuid);
    if (!winner) throw err;
    return answered(ownedBy(winner, owner));
  }
  return { transaction, created: true, charge };
}

/** Where a due-date charge's refusals name the field: the order's, which orders passes on as it is. */
const DUE_DATE_FIELD = 'payment.due_date';

/**
 * A due-date charge at the environment's PSP (docs/pix.md "Due-date charges"): refused with a 400 on
 * the order's field when the PSP is not set up for them or the terms cannot price the charge; the
 * PSP's failure as 503 (it may work later) or 502 (it refused the charge), never a 500.
 */
async function askDueDateCharge(
  adapter: PspAdapter,
  input: CreateChargeRequest & { due_date: DueDateTermsRecord },
  txid: string,
): Promise<PspCharge> {
  if (!adapter.createDueDateCharge) {
    const message = 'Due-date charges are not available in this environment.';
    throw badRequest(message, { [DUE_DATE_FIELD]: [message] });
  }
  const problem = dueDateTermsProblem(input.gross_amount, input.due_date);
  if (problem) throw badRequest(`Invalid due-date terms: ${problem}`, { [DUE_DATE_FIELD]: [problem] });
  if (!input.debtor_name || !input.debtor_document) {
    const message = 'A due-date charge needs the debtor name and document.';
    throw badRequest(message, { [DUE_DATE_FIELD]: [message] });
  }
  try {
    return await adapter.createDueDateCharge({
      txid,
      amountCents: input.gross_amount,
      terms: input.due_date,
      debtorName: input.debtor_name,
      debtorDocument: input.debtor_document,
    });
  } catch (err) {
    if (!(err instanceof PspError)) throw err;
    if (err.retryable) throw serviceUnavailable('The PSP could not make the charge; retry the request.');
    throw new HttpError(502, 'bad_gateway', `The PSP refused the due-date charge: ${err.message}`);
  }
}

/** An existing charge, returned as it is. */
function answered(transaction: Transaction): ChargeResult {
  return { transaction, created: false, charge: toCharge(transaction) };
}

/** PostgreSQL's unique_violation, as pg reports it (the insert runs on a plain connection). */
function isUniqueViolation(err: unknown): boolean {
  return (err as { code?: string } | null)?.code === '23505';
}

function findByOrder(em: EntityManager, orderId: string): Promise<Transaction | null> {
  return em.findOne(TransactionSchema, { orderId });
}

export async function findCharge(
  em: EntityManager,
  owner: ChargeOwner,
  orderId: string,
): Promise<Transaction> {
  return owned(await callerOrFork(em).findOne(TransactionSchema, { orderId }), owner);
}

/**
 * Before a seller's cancel of a PENDING due-date charge: removes it at its PSP (API Pix `PATCH
 * /cobv/{txid}`, status REMOVIDA_PELO_USUARIO_RECEBEDOR), so no payer can pay it any more; then the
 * caller cancels it here as any charge. Asked on no locked row and in no transaction, as charges are
 * made: no connection waits on the PSP. Removing again is fine (a retry after the cancel here failed).
 * Refuses, leaving everything as it was: 409 when the PSP has it paid (its notification records the
 * payment), 503 when the PSP could not be asked, 502 when it refused.
 */
export async function removeDueDateChargeAtPsp(
  em: EntityManager,
  owner: ChargeOwner,
  orderId: string,
  deps: LifecycleDeps,
): Promise<void> {
  const t = owned(await em.fork().findOne(TransactionSchema, { orderId }), owner);
  if (t.dueDateTerms === null || t.chargeStatus !== 'PENDING') return;
  const adapter = pspFor(deps.psps, t.environment);
  if (!adapter.cancelDueDateCharge) return;
  let outcome: PspDueDateCancel;
  try {
    outcome = await adapter.cancelDueDateCharge(t.txid);
  } catch (err) {
    if (!(err instanceof PspError)) throw err;
    deps.logger.warn(
      { err: err.message, psp: adapter.name, psp_status: err.status, retryable: err.retryable },
      'PSP removal of a due-date charge failed; the charge is unchanged',
    );
    if (err.retryable)
      throw serviceUnavailable(
        'The PSP could not be asked to remove the charge; the order is unchanged. Retry the request.',
      );
    throw new HttpError(502, 'bad_gateway', 'The PSP refused to remove the charge; the order is unchanged.');
  }
  if (outcome === 'paid')
    throw conflict('The charge is already paid at the PSP and cannot be cancelled; the order is unchanged.');
}

/**
 * A seller's action or a sandbox simulation on the order's charge: decided on the locked row, so
 * concurrent actions (or a payment racing a cancel) have one winner. A refund asks the PSP first,
 * inside the lock: a failed PSP call leaves everything as it was, but for `refund_asked_at`, which the
 * caller committed beforehand (db/refunds.ts noteRefundAsked). The PSP may answer that it is still
 * making the refund (the charge stays PAID, its refund PROCESSING) or that it will not (RefundRefused,
 * which the caller records with recordRefundRefused once this transaction has rolled back).
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
    if (action === 'refund' && refundAlreadyAsked(t, askKey)) return currentState(t);
    const decided = move(t.chargeStatus, action);
    if (!decided.ok) throw conflict(decided.message);
    const now = deps.now?.() ?? new Date();
    if (action === 'refund') {
      checkRefundAsk(t);
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
