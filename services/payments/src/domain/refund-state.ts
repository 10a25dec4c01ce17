import type { ChargeRefund, RefundStatus } from '@seller-api/contracts';
import { scrub } from '@seller-api/service-kit';
import type { ChargeStatus } from '../db/entities';

/*
 * A seller's refund at the PSP (docs/payments.md, "Refunds"), decided in one place. API Pix answers a
 * refund `EM_PROCESSAMENTO` (PROCESSING), `DEVOLVIDO` (REFUNDED) or `NAO_REALIZADO` (FAILED), and
 * reports the end of a PROCESSING one later: in a notification's `pix[].devolucoes`, or when we look it
 * up. The charge stays PAID until the PSP says REFUNDED; a FAILED refund leaves it PAID and may be asked
 * again, as a new attempt with its own refund id (asking again with the same id would only read the
 * failed refund back).
 */

/** The refund fields of a charge, as stored. */
export interface RefundFields {
  chargeStatus: ChargeStatus;
  refundStatus: RefundStatus | null;
  /** 0 before the first ask. */
  refundAttempt: number;
  refundAskedAt: Date | null;
}

/** The attempt asked now: the first is 1 (a row of an earlier release that asked has 0). */
export const currentAttempt = (fields: Pick<RefundFields, 'refundAttempt'>) =>
  Math.max(1, fields.refundAttempt);

/**
 * Our refund id for an attempt (API Pix `DevolucaoId`: 1 to 35 letters and digits): `D` and the
 * transaction's uuid without dashes for the first, as earlier releases asked; then two digits more.
 */
export function refundIdFor(transactionId: string, attempt: number): string {
  const base = `D${transactionId.replace(/-/g, '')}`;
  if (attempt <= 1) return base.slice(0, 35);
  if (attempt > MAX_REFUND_ATTEMPTS) throw new Error(`refund attempt ${attempt} has no refund id`);
  return `${base}${String(attempt).padStart(2, '0')}`;
}

/** The attempt a refund id names for this transaction; null when it is not one of ours for it. */
export function attemptOfRefundId(transactionId: string, refundId: string): number | null {
  const base = `D${transactionId.replace(/-/g, '')}`;
  if (refundId === base) return 1;
  if (refundId.length !== base.length + 2 || !refundId.startsWith(base)) return null;
  const attempt = Number(refundId.slice(base.length));
  return Number.isInteger(attempt) && attempt >= 2 && attempt <= MAX_REFUND_ATTEMPTS ? attempt : null;
}

/** Two digits of attempt number: a seller cannot keep retrying a refund the PSP keeps refusing. */
export const MAX_REFUND_ATTEMPTS = 99;

/** What the PSP reported of one attempt. */
export type RefundReport = { attempt: number; status: RefundStatus };

/**
 * What a report does to the charge's refund:
 * - `processing`: the outcome was unknown (asked, answer lost) and the PSP has it in progress;
 * - `refunded` / `failed`: the end of the current attempt;
 * - `none`: nothing changes (a report of an older attempt, of an attempt whose end is known, the same
 *   PROCESSING again, or a charge that no refund of ours can move).
 */
export type RefundDecision =
  { kind: 'processing' } | { kind: 'refunded' } | { kind: 'failed' } | { kind: 'none'; why: string };

export function decideRefund(fields: RefundFields, report: RefundReport): RefundDecision {
  if (fields.refundAskedAt === null) return { kind: 'none', why: 'no refund was asked of this charge' };
  if (report.attempt !== currentAttempt(fields))
    return { kind: 'none', why: `a report of attempt ${report.attempt}, not the current one` };
  if (fields.refundStatus === 'REFUNDED' || fields.refundStatus === 'FAILED')
    return { kind: 'none', why: `the refund is already ${fields.refundStatus}` };
  // A MED opened or a chargeback decided meanwhile: the refund's end still counts (the money went back).
  if (!REFUNDABLE.has(fields.chargeStatus) && report.status !== 'REFUNDED')
    return { kind: 'none', why: `the charge is ${fields.chargeStatus}` };
  switch (report.status) {
    case 'PROCESSING':
      return fields.refundStatus === 'PROCESSING'
        ? { kind: 'none', why: 'already PROCESSING' }
        : { kind: 'processing' };
    case 'REFUNDED':
      return { kind: 'refunded' };
    case 'FAILED':
      return { kind: 'failed' };
  }
}

/** Charge statuses a refund's end can move: PAID, and a MED opened while the refund was on its way. */
const REFUNDABLE: ReadonlySet<ChargeStatus> = new Set(['PAID', 'MED']);

/**
 * A seller's new refund on a charge in this refund state: refused while one is in progress (it ends
 * on its own), and past the last attempt.
 */
export function refundRefusal(fields: Pick<RefundFields, 'refundStatus' | 'refundAttempt'>): string | null {
  if (fields.refundStatus === 'PROCESSING') return 'A refund of this order is already in progress.';
  if (fields.refundStatus === 'FAILED' && fields.refundAttempt >= MAX_REFUND_ATTEMPTS)
    return 'This order cannot be refunded through the API any more; contact support.';
  return null;
}

/**
 * Delay before the next look-up of a refund whose end has not arrived: doubling from `baseMs` with each
 * look-up made, at most `maxMs`, with up to 10 % of jitter so replicas' look-ups spread.
 */
export function nextCheckDelay(checks: number, baseMs: number, maxMs: number, random = Math.random): number {
  const delay = Math.min(maxMs, baseMs * 2 ** Math.min(30, Math.max(0, checks)));
  return Math.round(delay * (1 + 0.1 * random()));
}

/** The refund as ChargeState and Charge carry it; null while no refund has an outcome. */
export function refundView(t: {
  refundStatus: RefundStatus | null;
  refundAttempt: number;
  grossAmount: number;
  refundRequestedAt: Date | null;
  refundAskedAt: Date | null;
  refundUpdatedAt: Date | null;
  refundReason: string | null;
  refundHoldSeq: number;
}): ChargeRefund | null {
  if (t.refundStatus === null) return null;
  const requested = t.refundRequestedAt ?? t.refundAskedAt ?? t.refundUpdatedAt ?? new Date(0);
  return {
    status: t.refundStatus,
    attempt: currentAttempt(t),
    amount: t.grossAmount,
    requested_at: requested.toISOString(),
    updated_at: (t.refundUpdatedAt ?? requested).toISOString(),
    failure_reason: t.refundStatus === 'FAILED' ? t.refundReason : null,
    hold_seq: t.refundHoldSeq,
  };
}

/**
 * The PSP's reason, kept short and on one line (API Pix `motivo` is at most 140 characters), with
 * personal data it may quote (a CPF, an e-mail or phone key) masked as in the logs: it is stored,
 * answered to the seller and logged. Scrubbed before the cut, so a cut never leaves a piece unmasked.
 */
export function reasonText(reason: string | null | undefined): string | null {
  const text = reason?.replace(/\s+/g, ' ').trim();
  if (!text) return null;
  return Array.from(scrub(text)).slice(0, 140).join('');
}
