import { createHash, timingSafeEqual } from 'node:crypto';
import { apiPixClient, clip, type ApiPixClientOptions, type PspFetch } from '@seller-api/api-pix';
import { z } from 'zod';
import { formatAmountCents, parseBrCode } from '../domain/brcode';
import { PspError, type PspAdapter, type PspChargeInput, type PspRefundInput } from '../domain/psp';

/*
 * `bacen-api-pix` (docs/payments.md): the Central Bank's standard API Pix as PSPs expose it.
 *
 *   POST {tokenUrl}                         OAuth2 client credentials (HTTP Basic, form-encoded)
 *   PUT  {apiUrl}/cob/{txid}                immediate charge; we take pixCopiaECola and location
 *   PUT  {apiUrl}/pix/{e2eid}/devolucao/{id} refund of a received payment
 *
 * Payments come back as the standard's notification, which the PSP POSTs to the URL we registered with
 * `/pix` appended: POST /api/v1/psp/webhook/pix with {pix: [{endToEndId, txid, valor, horario}]},
 * carrying our per-PSP secret (PSP_WEBHOOK_SECRET) as `Authorization: Bearer <secret>`. mTLS towards us
 * belongs to the ingress. The body's schema is PspPixNotification in @seller-api/contracts.
 */

// ---------------------------------------------------------------------------------------------------
// Notifications (PSP → us)
// ---------------------------------------------------------------------------------------------------

/** Where the PSP delivers payment notifications: the registered `/api/v1/psp/webhook` plus `/pix`. */
export const PSP_NOTIFICATION_PATH = '/api/v1/psp/webhook/pix';

/**
 * The header carrying the per-PSP secret on notifications, as a bearer token:
 * `Authorization: Bearer <PSP_WEBHOOK_SECRET>`. The gateway forwards `Authorization` untouched on public
 * routes (no API key there), so it reaches the payments route as sent.
 */
export const PSP_NOTIFICATION_SECRET_HEADER = 'authorization';
export const PSP_NOTIFICATION_SECRET_SCHEME = 'Bearer';

/** The headers a PSP (or the test simulator) sends with a notification. */
export function pspNotificationHeaders(secret: string): Record<string, string> {
  return { [PSP_NOTIFICATION_SECRET_HEADER]: `${PSP_NOTIFICATION_SECRET_SCHEME} ${secret}` };
}

/**
 * True when the header value is `Bearer <secret>` (the secret compared in constant time). Pass
 * `req.headers[PSP_NOTIFICATION_SECRET_HEADER]`; a missing, repeated or differently shaped header is refused.
 */
export function isPspNotificationAuthorized(value: string | string[] | undefined, secret: string): boolean {
  if (typeof value !== 'string' || secret === '') return false;
  const given = /^Bearer[ ]+(\S+)[ ]*$/i.exec(value)?.[1];
  if (given === undefined) return false;
  const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();
  return timingSafeEqual(digest(given), digest(secret));
}

// ---------------------------------------------------------------------------------------------------
// Adapter (us → PSP)
// ---------------------------------------------------------------------------------------------------

export type { PspFetch };

export interface BacenApiPixOptions extends ApiPixClientOptions {
  /** Our receiving key at the PSP (the cob's `chave`). */
  pixKey: string;
}

export interface BacenApiPixAdapter extends PspAdapter {
  /** Closes the adapter's own connections (not those of an injected fetchImpl). */
  close(): Promise<void>;
}

/** API Pix: txid of a cob is 26 to 35 letters and digits; a refund's id 1 to 35. */
const COB_TXID = /^[A-Za-z0-9]{26,35}$/;
const REFUND_ID = /^[A-Za-z0-9]{1,35}$/;
const E2E_PATH_PART = /^[A-Za-z0-9]{1,35}$/;
const MAX_EXPIRACAO = 2_147_483_647;
const MAX_DEBTOR_NAME = 200;
const MAX_PAYER_REQUEST = 140;
const PIX_GUI = 'br.gov.bcb.pix';

const CobAnswer = z.object({
  txid: z.string().optional(),
  pixCopiaECola: z.string().min(1),
  location: z.string().min(1).optional(),
  loc: z.object({ location: z.string().min(1).optional() }).optional(),
});

const RefundAnswer = z.object({
  status: z.string(),
  motivo: z.string().optional(),
});

/** The PSP's adapter for the standard API Pix, with OAuth2 client credentials. */
export function bacenApiPix(options: BacenApiPixOptions): BacenApiPixAdapter {
  const now = options.now ?? (() => new Date());
  const client = apiPixClient(options);
  const call = client.call;

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
      const payerRequest = input.description?.trim().slice(0, MAX_PAYER_REQUEST);
      if (payerRequest) body.solicitacaoPagador = payerRequest;

      const path = `/cob/${encodeURIComponent(input.txid)}`;
      const answer = CobAnswer.safeParse(await call('PUT', path, body));
      if (!answer.success) {
        throw new PspError(`PSP answered PUT ${path} without pixCopiaECola`, { retryable: false });
      }
      const cob = answer.data;
      if (cob.txid !== undefined && cob.txid !== input.txid) {
        throw new PspError(`PSP answered PUT ${path} for another txid`, { retryable: false });
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
      const location = cob.location ?? cob.loc?.location ?? account['25'] ?? null;
      return { copyAndPaste: cob.pixCopiaECola, location };
    },

    async refund(input: PspRefundInput) {
      if (!E2E_PATH_PART.test(input.endToEndId) || !REFUND_ID.test(input.refundId)) {
        throw new PspError('API Pix needs an end-to-end id and a refund id of 1 to 35 letters and digits', {
          retryable: false,
        });
      }
      const valor = amount(input.amountCents);
      const path = `/pix/${encodeURIComponent(input.endToEndId)}/devolucao/${encodeURIComponent(input.refundId)}`;
      // Only NAO_REALIZADO is a refusal. Any other answer the PSP accepted (no status, one we do not
      // know) may be a refund it made: an unknown outcome, retryable with the same refund id, so the
      // refund's hold is kept (docs/finance.md "Refunds").
      const answer = RefundAnswer.safeParse(await refundCall(path, valor));
      if (!answer.success) {
        throw new PspError(`PSP answered PUT ${path} without a refund status`, { retryable: true });
      }
      switch (answer.data.status) {
        case 'DEVOLVIDO':
          return { status: 'REFUNDED' };
        case 'EM_PROCESSAMENTO':
          return { status: 'PROCESSING' };
        case 'NAO_REALIZADO':
          throw new PspError(
            `PSP did not make the refund${answer.data.motivo ? `: ${clip(answer.data.motivo)}` : ''}`,
            { retryable: false },
          );
        default:
          throw new PspError(`PSP answered PUT ${path} with refund status ${clip(answer.data.status)}`, {
            retryable: true,
          });
      }
    },

    close: () => client.close(),
  };

  /** The refund's PUT; a 2xx without a JSON body is an unknown outcome too (see refund). */
  async function refundCall(path: string, valor: string): Promise<unknown> {
    try {
      return await call('PUT', path, { valor });
    } catch (err) {
      if (err instanceof PspError && err.status !== null && err.status >= 200 && err.status <= 299)
        throw new PspError(err.message, { retryable: true, status: err.status, cause: err });
      throw err;
    }
  }
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
  const nome = name?.trim().slice(0, MAX_DEBTOR_NAME);
  const clean = document?.replace(/[.\-/\s]/g, '').toUpperCase();
  if (!nome || !clean) return null;
  if (/^\d{11}$/.test(clean)) return { cpf: clean, nome };
  // Alphanumeric CNPJs (12 letters or digits, 2 check digits) are CNPJs too.
  if (/^[0-9A-Z]{12}\d{2}$/.test(clean)) return { cnpj: clean, nome };
  return null;
}
