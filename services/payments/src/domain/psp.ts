import { PspError } from '@seller-api/api-pix';
import type { DueDateTermsRecord, Environment } from '@seller-api/contracts';
import { buildStaticBrCode } from './brcode';

/** What the payments service asks of a PSP when it creates a charge. */
export interface PspChargeInput {
  /** Ours, letters and digits, `txidLength` of the adapter long (see txid.ts); notifications carry it back. */
  txid: string;
  amountCents: number;
  expiresAt: Date;
  debtorName: string | null;
  debtorDocument: string | null;
  /** Free text shown to the payer (API Pix `solicitacaoPagador`, at most 140 characters); optional. */
  description?: string | null;
}

export interface PspCharge {
  /** The BR Code the payer's bank app reads (the "PIX copia e cola"). */
  copyAndPaste: string;
  /** The PSP's payload location for a dynamic BR Code; null for a static one. */
  location: string | null;
}

/** A due-date charge (API Pix `cobv`): the original amount and its terms; the debtor is required. */
export interface PspDueDateChargeInput {
  /** Ours, `txidLength` of the adapter long, as for an immediate charge. */
  txid: string;
  /** The original amount, in cents: what is owed on any day follows from the terms. */
  amountCents: number;
  terms: DueDateTermsRecord;
  debtorName: string;
  debtorDocument: string;
  description?: string | null;
}

/**
 * What cancelling a due-date charge at the PSP came to: `removed` (now or before: a retry is fine), or
 * `paid`, when the PSP has it paid and will not remove it (its payment notification is on its way).
 */
export type PspDueDateCancel = 'removed' | 'paid';

export interface PspRefundInput {
  /** The payment's end-to-end id, from the PSP's notification. */
  endToEndId: string;
  /** Ours, 1 to 35 letters and digits, unique per payment: asking again with it is the same refund. */
  refundId: string;
  amountCents: number;
}

/** Where a refund of a received PIX stands at the PSP (API Pix `Devolucao.status`). */
export type PspRefundStatus = 'REFUNDED' | 'PROCESSING' | 'FAILED';

export interface PspRefund {
  /**
   * REFUNDED (`DEVOLVIDO`): the money went back to the payer. PROCESSING (`EM_PROCESSAMENTO`): accepted,
   * the PSP reports the end later (a notification's `devolucoes`, or asking with lookupRefund).
   * FAILED (`NAO_REALIZADO`): not made, with the PSP's reason (`motivo`) when it gave one.
   */
  status: PspRefundStatus;
  reason: string | null;
}

/**
 * Which refund to look up: the payment's end-to-end id and our refund id (API Pix needs no more); the
 * amount asked, for an adapter that decides by it (the sandbox).
 */
export type PspRefundRef = Pick<PspRefundInput, 'endToEndId' | 'refundId'> & { amountCents?: number };

/** A PSP behind the payments service (docs/payments.md); chosen per environment (PspAdapters). */
export interface PspAdapter {
  readonly name: string;
  /**
   * Length of the txid to make for this PSP: 25 for the sandbox (the static BR Code's limit, field
   * 62/05), 35 for API Pix, whose `PUT /cob/{txid}` takes 26 to 35 letters and digits only.
   */
  readonly txidLength: number;
  /**
   * True when `createCharge` asks a PSP: an order's existing charge is then looked up before asking,
   * so a repeated call makes no second charge there. A local adapter lets the insert find it.
   */
  readonly remote: boolean;
  /** Rejects with PspError when the PSP cannot or will not make the charge. */
  createCharge(input: PspChargeInput): Promise<PspCharge>;
  /**
   * Asks for a refund (asking again with the same refund id is the same refund). Resolves with where it
   * stands, a refusal (`NAO_REALIZADO`) included; rejects with PspError when the PSP refused the request
   * itself (a 4xx: not retryable) or could not be asked or did not answer (retryable: it may have
   * refunded).
   */
  refund(input: PspRefundInput): Promise<PspRefund>;
  /**
   * Where a refund asked before stands (API Pix `GET /pix/{e2eid}/devolucao/{id}`); null when the PSP
   * has no refund with that id. Rejects with PspError when the PSP cannot be asked.
   */
  lookupRefund(ref: PspRefundRef): Promise<PspRefund | null>;
  /**
   * Due-date charges (docs/pix.md "Due-date charges"); absent when the PSP is not set up for them
   * (PIX_DUE_DATE_CHARGES), so a due-date charge asked of it is refused before any call. The BR Code
   * carries no amount: what is owed depends on the day. Rejects with PspError as createCharge does.
   */
  createDueDateCharge?(input: PspDueDateChargeInput): Promise<PspCharge>;
  /**
   * Removes a due-date charge the seller cancelled, so no payer can pay it any more (idempotent).
   * Rejects with PspError when the PSP could not be asked or refused otherwise.
   */
  cancelDueDateCharge?(txid: string): Promise<PspDueDateCancel>;
  /** Closes the adapter's connections, after the last call. */
  close?(): Promise<void>;
}

/**
 * The PSP of each environment: `live` is `PIX_PSP`'s; `test` is the sandbox unless `PIX_PSP_TEST` names a
 * PSP's homologation endpoint, so a test key never moves real money. Every charge and refund takes the
 * adapter of its own order's environment (pspFor), never one shared by both.
 */
export type PspAdapters = Readonly<Record<Environment, PspAdapter>>;

/** The adapter for a charge or refund of this environment. */
export function pspFor(psps: PspAdapters, environment: Environment): PspAdapter {
  return psps[environment];
}

/**
 * A PSP call that failed. `retryable`: the PSP did not answer, timed out or failed on its side (5xx),
 * so the same call may succeed later; otherwise it refused the request (4xx, a refused refund, an
 * answer we cannot accept) and asking again the same way will not help. `status` is the PSP's HTTP
 * status when there was one. One type for every PSP adapter, the payout adapters of withdrawals too.
 */
export { PspError };

export interface SandboxPspOptions {
  pixKey: string;
  merchantName: string;
  merchantCity: string;
  /**
   * `instant` (default): refunds are made at once. `processing`: as a PSP that answers
   * `EM_PROCESSAMENTO` and reports the end later, so the refund checks end them on their next look-up:
   * made, but not for an amount whose cents are 13 (R$ 10,13), which fails as `NAO_REALIZADO`.
   */
  refunds?: SandboxRefunds;
}

export const SANDBOX_REFUNDS = ['instant', 'processing'] as const;
export type SandboxRefunds = (typeof SANDBOX_REFUNDS)[number];

/** In the `processing` sandbox, refunds of an amount whose cents are 13 are not made. */
export const SANDBOX_FAILING_REFUND_CENTS = 13;

/**
 * The sandbox PSP makes a static BR Code locally: the receiving key, the amount and our txid, so the
 * code is one any bank app or parser accepts, and no money can move without the sandbox pay route.
 * Expiry and debtor stay with us: a static code has no room for them. Refunds succeed at once, or as
 * SandboxPspOptions.refunds says.
 */
export function sandboxPsp(options: SandboxPspOptions): PspAdapter {
  return {
    name: 'sandbox',
    txidLength: 25,
    remote: false,
    async createCharge(input) {
      const copyAndPaste = buildStaticBrCode({
        pixKey: options.pixKey,
        amountCents: input.amountCents,
        merchantName: options.merchantName,
        merchantCity: options.merchantCity,
        txid: input.txid,
      });
      return { copyAndPaste, location: null };
    },
    // Our txid and no amount (field 54 left out): no money moves without the sandbox pay route, which
    // prices the day asked.
    async createDueDateCharge(input) {
      const copyAndPaste = buildStaticBrCode({
        pixKey: options.pixKey,
        merchantName: options.merchantName,
        merchantCity: options.merchantCity,
        txid: input.txid,
      });
      return { copyAndPaste, location: null };
    },
    // Nothing at any PSP: the static code was only ever paid through the sandbox pay route.
    async cancelDueDateCharge() {
      return 'removed';
    },
    async refund() {
      return { status: options.refunds === 'processing' ? 'PROCESSING' : 'REFUNDED', reason: null };
    },
    async lookupRefund(ref) {
      if (options.refunds === 'processing' && ref.amountCents !== undefined) {
        if (ref.amountCents % 100 === SANDBOX_FAILING_REFUND_CENTS)
          return { status: 'FAILED', reason: 'Sandbox: refunds of amounts ending in 13 cents are not made.' };
      }
      return { status: 'REFUNDED', reason: null };
    },
  };
}
