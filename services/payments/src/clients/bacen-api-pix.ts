import {
  apiPixClient,
  clip,
  cutCodePoints,
  refusal,
  type ApiPixClientOptions,
  type PspFetch,
} from '@seller-api/api-pix';
import { z } from 'zod';
import {
  API_PIX_DUE_DATE_SCOPES,
  DueDateChargePaidError,
  dueDateCharges,
  type DueDateCharges,
} from './bacen-api-pix-cobv';
import { buildDynamicBrCode, formatAmountCents, parseBrCode } from '../domain/brcode';
import {
  PspError,
  type PspAdapter,
  type PspChargeInput,
  type PspDueDateCancel,
  type PspDueDateChargeInput,
  type PspRefund,
  type PspRefundInput,
  type PspRefundRef,
} from '../domain/psp';

/*
 * `bacen-api-pix` (docs/payments.md): the Central Bank's standard API Pix as PSPs expose it.
 *
 *   POST {tokenUrl}                         OAuth2 client credentials (HTTP Basic, form-encoded, scope)
 *   PUT  {apiUrl}/cob/{txid}                immediate charge; pixCopiaECola, or a code built from location
 *   PUT  {apiUrl}/pix/{e2eid}/devolucao/{id} refund of a received payment
 *   GET  {apiUrl}/pix/{e2eid}/devolucao/{id} where that refund stands
 *
 * Payments come back as the standard's notification, which the PSP POSTs to the URL we registered with
 * `/pix` appended: POST /api/v1/psp/webhook/pix with {pix: [{endToEndId, txid, valor, horario}]},
 * sent with the PSP's TLS client certificate, which the ingress verifies (or, for a PSP that can add
 * one, our per-PSP secret): http/psp-senders.ts. The body's schema is PspPixNotification in
 * @seller-api/contracts.
 */

// ---------------------------------------------------------------------------------------------------
// Adapter (us → PSP)
// ---------------------------------------------------------------------------------------------------

export type { PspFetch };

/**
 * The OAuth2 scopes the charge adapter asks for: immediate charges (`cob.*`) and refunds of received Pix
 * (`pix.*`). Due-date charges' scopes (`API_PIX_DUE_DATE_SCOPES`, bacen-api-pix-cobv.ts) are asked
 * for only when due-date charges are enabled for the PSP (PIX_DUE_DATE_CHARGES): a PSP client registered
 * without them may refuse a token that asks for them, which would stop immediate charges too.
 */
export const API_PIX_CHARGE_SCOPES = ['cob.write', 'cob.read', 'pix.write', 'pix.read'] as const;

/** The charge adapter's scopes with the due-date charges' ones. */
export const API_PIX_CHARGE_AND_DUE_DATE_SCOPES = [
  ...API_PIX_CHARGE_SCOPES,
  ...API_PIX_DUE_DATE_SCOPES,
] as const;

export interface BacenApiPixOptions extends ApiPixClientOptions {
  /** Our receiving key at the PSP (the cob's `chave`). */
  pixKey: string;
  /**
   * Name and city written in a BR Code we build from the charge's `location` when the PSP answers
   * without `pixCopiaECola` (payments' PIX_MERCHANT_NAME and PIX_MERCHANT_CITY).
   */
  merchantName: string;
  merchantCity: string;
  /**
   * Offer due-date charges through the adapter (createDueDateCharge, cancelDueDateCharge): only when
   * the token asks the `cobv.*` scopes too (API_PIX_CHARGE_AND_DUE_DATE_SCOPES; PIX_DUE_DATE_CHARGES).
   */
  dueDateCharges?: boolean;
}

export interface BacenApiPixAdapter extends PspAdapter {
  /** Due-date charges (`cobv`) on the same client and token. */
  readonly dueDate: DueDateCharges;
  /** Closes the adapter's own connections (not those of an injected fetchImpl). */
  close(): Promise<void>;
}

/** API Pix: txid of a cob is 26 to 35 letters and digits; a refund's id 1 to 35; `EndToEndId` 32. */
const COB_TXID = /^[A-Za-z0-9]{26,35}$/;
const REFUND_ID = /^[A-Za-z0-9]{1,35}$/;
const END_TO_END_ID = /^[A-Za-z0-9]{32}$/;
const MAX_EXPIRACAO = 2_147_483_647;
const MAX_DEBTOR_NAME = 200;
const MAX_PAYER_REQUEST = 140;
const MAX_REASON = 140;
/**
 * `location` as API Pix has it (maxLength 77, the room field 26/25 of a BR Code leaves): a host, an
 * optional port and a path, without a scheme (one is tolerated and dropped), printable ASCII only.
 */
const MAX_LOCATION = 77;
const LOCATION =
  /^[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*(?::\d{1,5})?\/[\x21-\x7e]*$/;
const PIX_GUI = 'br.gov.bcb.pix';

// Only what we read of `CobGerada`; PSPs add fields and the standard adds some in minor versions.
const CobAnswer = z.looseObject({
  txid: z.string().optional(),
  pixCopiaECola: z.string().nullish(),
  location: z.string().nullish(),
  loc: z.looseObject({ location: z.string().nullish() }).nullish(),
});

// Only what we read of `Devolucao`: an unknown or missing status is handled by the caller.
const RefundAnswer = z.looseObject({
  id: z.string().optional(),
  status: z.string(),
  motivo: z.string().nullish(),
});

/** The PSP's adapter for the standard API Pix, with OAuth2 client credentials. */
export function bacenApiPix(options: BacenApiPixOptions): BacenApiPixAdapter {
  const now = options.now ?? (() => new Date());
  const client = apiPixClient(options);
  const call = client.call;
  const dueDate = dueDateCharges(client, options);

  return {
    name: 'bacen-api-pix',
    txidLength: 35,
    remote: true,

    async createCharge(input: PspChargeInput) {
      if (!COB_TXID.test(input.txid)) {
        throw new PspError(
          `API Pix needs a txid of 26 to 35 letters and digits, got ${input.txid.length} characters`,
          { retryable: false },
        );
      }
      const original = amount(input.amountCents);
      const seconds = Math.floor((input.expiresAt.getTime() - now().getTime()) / 1000);
      const body: Record<string, unknown> = {
        calendario: { expiracao: Math.min(MAX_EXPIRACAO, Math.max(1, seconds)) },
      };
      const devedor = debtor(input.debtorName, input.debtorDocument);
      if (devedor) body.devedor = devedor;
      body.valor = { original };
      body.chave = options.pixKey;
      const payerRequest = cutCodePoints(input.description?.trim() ?? '', MAX_PAYER_REQUEST).trim();
      if (payerRequest) body.solicitacaoPagador = payerRequest;

      const path = `/cob/${encodeURIComponent(input.txid)}`;
      const answer = CobAnswer.safeParse(await call('PUT', path, body));
      if (!answer.success) {
        throw new PspError(`PSP answered PUT ${path} with a body that is not a charge`, { retryable: false });
      }
      const cob = answer.data;
      if (cob.txid !== undefined && cob.txid !== input.txid) {
        throw new PspError(`PSP answered PUT ${path} for another txid`, { retryable: false });
      }
      const location = payloadLocation(cob.location ?? cob.loc?.location);
      // `pixCopiaECola` is optional since API Pix 2.6.0: without it, the dynamic BR Code is the
      // location's, which we write ourselves (docs/payments.md, "bacen-api-pix").
      if (!cob.pixCopiaECola) {
        if (location.value === null) {
          throw new PspError(
            `PSP answered PUT ${path} with neither pixCopiaECola nor a usable location (${location.problem})`,
            { retryable: false },
          );
        }
        const copyAndPaste = buildDynamicBrCode({
          location: location.value,
          amountCents: input.amountCents,
          merchantName: options.merchantName,
          merchantCity: options.merchantCity,
        });
        return { copyAndPaste, location: location.value };
      }
      const code = parseBrCode(cob.pixCopiaECola);
      const account = code.fields['26'];
      if (!code.valid || typeof account !== 'object' || account['00']?.toLowerCase() !== PIX_GUI) {
        throw new PspError(
          `PSP answered PUT ${path} with an invalid BR Code (${code.error ?? 'field 26 is not a Pix account'})`,
          { retryable: false },
        );
      }
      const codeAmount = code.fields['54'];
      if (codeAmount !== undefined && codeAmount !== original) {
        throw new PspError(
          `PSP answered PUT ${path} with a BR Code of ${String(codeAmount)}, not ${original}`,
          {
            retryable: false,
          },
        );
      }
      // The code is what the payer reads: its own location wins over the answer's.
      return { copyAndPaste: cob.pixCopiaECola, location: account['25'] ?? location.value };
    },

    async refund(input: PspRefundInput) {
      const path = refundPath(input);
      const valor = amount(input.amountCents);
      // Only a status API Pix defines is an outcome. Any other answer the PSP accepted (no status, one
      // we do not know, no JSON) may be a refund it made: an unknown outcome, retryable with the same
      // refund id, so the refund's hold is kept (docs/finance.md "Refunds").
      const answer = await acceptedAnswer(() => call('PUT', path, { valor }));
      return refundOutcome(`PUT ${path}`, answer, input.refundId);
    },

    async lookupRefund(ref: PspRefundRef) {
      const path = refundPath(ref);
      const res = await client.send('GET', path);
      if (res.status === 404) return null;
      if (res.status < 200 || res.status > 299) throw refusal(`GET ${path}`, res.status, res.text);
      return refundOutcome(`GET ${path}`, res.json, ref.refundId);
    },

    dueDate,

    // `PUT /cobv/{txid}` with our txid; the code is the PSP's dynamic one (no amount in it).
    ...(options.dueDateCharges
      ? {
          async createDueDateCharge(input: PspDueDateChargeInput) {
            const made = await dueDate.create(input);
            return { copyAndPaste: made.copyAndPaste, location: made.location };
          },
          async cancelDueDateCharge(txid: string): Promise<PspDueDateCancel> {
            try {
              // A 2xx names the charge's status: only a removed one is removed (a PSP may answer the
              // PATCH of a charge paid meanwhile with its CONCLUIDA state).
              const state = await dueDate.cancel(txid);
              if (state.status === 'PAID') return 'paid';
              if (state.status === 'REMOVED_BY_RECEIVER' || state.status === 'REMOVED_BY_PSP')
                return 'removed';
              throw new PspError(
                `PSP answered the removal of ${txid} with the charge still ${state.status}`,
                {
                  retryable: true,
                },
              );
            } catch (err) {
              if (err instanceof DueDateChargePaidError) return 'paid';
              throw err;
            }
          },
        }
      : {}),

    close: () => client.close(),
  };

  /** A call the PSP answered with a 2xx counts as accepted even without a JSON body (see refund). */
  async function acceptedAnswer(send: () => Promise<unknown>): Promise<unknown> {
    try {
      return await send();
    } catch (err) {
      if (err instanceof PspError && err.status !== null && err.status >= 200 && err.status <= 299)
        throw new PspError(err.message, { retryable: true, status: err.status, cause: err });
      throw err;
    }
  }
}

/** The path of a refund, after checking both ids are what API Pix takes (no call otherwise). */
function refundPath(ref: PspRefundRef): string {
  if (!END_TO_END_ID.test(ref.endToEndId)) {
    throw new PspError('API Pix needs an end-to-end id of 32 letters and digits', { retryable: false });
  }
  if (!REFUND_ID.test(ref.refundId)) {
    throw new PspError('API Pix needs a refund id of 1 to 35 letters and digits', { retryable: false });
  }
  return `/pix/${ref.endToEndId}/devolucao/${ref.refundId}`;
}

/** `Devolucao.status` as ours; anything else is an unknown outcome (retryable). */
function refundOutcome(what: string, json: unknown, refundId: string): PspRefund {
  const answer = RefundAnswer.safeParse(json);
  if (!answer.success) {
    throw new PspError(`PSP answered ${what} without a refund status`, { retryable: true });
  }
  // An answer about another refund says nothing of ours: unknown, never read as its outcome.
  if (answer.data.id !== undefined && answer.data.id !== refundId) {
    throw new PspError(`PSP answered ${what} for another refund id`, { retryable: true });
  }
  switch (answer.data.status) {
    case 'DEVOLVIDO':
      return { status: 'REFUNDED', reason: null };
    case 'EM_PROCESSAMENTO':
      return { status: 'PROCESSING', reason: null };
    case 'NAO_REALIZADO': {
      const reason = answer.data.motivo?.trim();
      return { status: 'FAILED', reason: reason ? clip(reason, MAX_REASON) : null };
    }
    default:
      throw new PspError(`PSP answered ${what} with refund status ${clip(answer.data.status, 40)}`, {
        retryable: true,
      });
  }
}

/** The answer's location, scheme dropped, when it is one a BR Code can carry; else why not. */
function payloadLocation(
  raw: string | null | undefined,
): { value: string; problem?: undefined } | { value: null; problem: string } {
  if (raw === null || raw === undefined || raw.trim() === '') return { value: null, problem: 'no location' };
  const value = raw.trim().replace(/^https?:\/\//i, '');
  if (value.length > MAX_LOCATION) {
    return { value: null, problem: `location of ${value.length} characters, at most ${MAX_LOCATION}` };
  }
  if (!LOCATION.test(value)) return { value: null, problem: 'location is not a host and a path' };
  return { value };
}

function amount(cents: number): string {
  try {
    return formatAmountCents(cents);
  } catch (err) {
    throw new PspError((err as Error).message, { retryable: false, cause: err });
  }
}

/** `devedor` only when both name and document are known and the document is a CPF or CNPJ. */
function debtor(name: string | null, document: string | null): Record<string, string> | null {
  const nome = cutCodePoints(name?.trim() ?? '', MAX_DEBTOR_NAME).trim();
  const clean = document?.replace(/[.\-/\s]/g, '').toUpperCase();
  if (!nome || !clean) return null;
  if (/^\d{11}$/.test(clean)) return { cpf: clean, nome };
  // Alphanumeric CNPJs (12 letters or digits, 2 check digits) are CNPJs too.
  if (/^[0-9A-Z]{12}\d{2}$/.test(clean)) return { cnpj: clean, nome };
  return null;
}
