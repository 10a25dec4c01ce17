import {
  PspError,
  apiPixClient,
  clip,
  valor,
  type ApiPixAnswer,
  type ApiPixClientOptions,
} from '@seller-api/api-pix';
import { z } from 'zod';
import type { PayoutAdapter, PayoutOutcome, PayoutRequest } from '../domain/payouts';

/*
 * `efi` payouts: Efí's (formerly Gerencianet) "Envio de Pix", written against Efí's public API Pix
 * documentation (dev.efipay.com.br, "API Pix": "Credenciais, certificado e autorização", "Envio e
 * Pagamento Pix", "Webhooks"). API Pix itself covers receiving only; this send API is Efí's own.
 *
 *   POST {host}/oauth/token                            HTTP Basic client credentials; mTLS required
 *   PUT  {host}/v3/gn/pix/{idEnvio}                    scope pix.send: {valor, pagador: {chave}, favorecido: {chave}}
 *   GET  {host}/v2/gn/pix/enviados/id-envio/{idEnvio}  scope gn.pix.send.read: the send, by our id
 *
 * The PUT answers 201 {idEnvio, e2eId, valor, horario: {solicitacao}, status}, normally
 * EM_PROCESSAMENTO; the send ends REALIZADO or NAO_REALIZADO, which Efí reports by webhook on the paying
 * key and by the GET ({endToEndId, idEnvio, valor, status, horario: {solicitacao, liquidacao}}). We
 * poll: a payout answered EM_PROCESSAMENTO stays PROCESSING and the worker asks again after
 * PAYOUT_RETRY_AFTER_MS, when this adapter reads the send with the GET instead of sending it again.
 *
 * Idempotency: `idEnvio` (`^[a-zA-Z0-9]{1,35}$`) is the withdrawal id without dashes. Efí answers a PUT
 * of an idEnvio it already has with 409 `id_envio_duplicado` (not with the send): we then read the send.
 * Any other refusal of a PUT (400 `valor_invalido`, `chave_invalida`..., 422 `pagamento_negado`) is
 * final only once the GET answers 404: a PUT whose answer we lost may have made the send, and a repeat
 * may be refused for the balance that first send used. Errors come as {nome, mensagem} (sends) or as
 * RFC 7807 problems (lookups, authorisation). Whatever is not a definite answer (network, 5xx, 408,
 * 429, 401/403 from credentials or a missing scope, a 404 on the PUT, an unknown status) throws a
 * retryable PspError: the payout waits, it is never failed on a guess (docs/finance.md, "Payouts").
 */

/** Efí's API Pix hosts (docs: "Rotas base"); the token endpoint is `<host>/oauth/token`. */
export const EFI_PRODUCTION_URL = 'https://pix.api.efipay.com.br';
export const EFI_HOMOLOGATION_URL = 'https://pix-h.api.efipay.com.br';

/** The scopes the adapter asks for (docs: "Escopos"): sending, and reading sends back. */
export const EFI_PAYOUT_SCOPES = ['pix.send', 'gn.pix.send.read'] as const;

const ID_ENVIO = /^[a-zA-Z0-9]{1,35}$/;

export interface EfiPayoutsOptions extends Omit<ApiPixClientOptions, 'scopes'> {
  /** Our paying key at Efí (`pagador.chave`), of the account the token belongs to. */
  pixKey: string;
}

export interface EfiPayouts extends PayoutAdapter {
  close(): Promise<void>;
}

/** A send as the PUT (`e2eId`) or the GET (`endToEndId`) describes it; extra fields are ignored. */
const Send = z.object({
  idEnvio: z.string().optional(),
  e2eId: z.string().min(1).optional(),
  endToEndId: z.string().min(1).optional(),
  valor: z.string().optional(),
  status: z.string(),
  // Not in the lookup's documented answer; the webhook has it under gnExtras.erro. Read when present.
  motivo: z.string().optional(),
  gnExtras: z
    .object({ erro: z.object({ motivo: z.string().optional() }).partial().optional() })
    .partial()
    .optional(),
});

// Efí's own error body, and RFC 7807 problems (lookups, authorisation).
const EfiError = z.object({
  nome: z.string().optional(),
  mensagem: z.string().optional(),
  title: z.string().optional(),
  detail: z.string().optional(),
});

/** The idEnvio of a withdrawal: its UUID without dashes, 32 hex digits. */
export function idEnvioOf(withdrawalId: string): string {
  const id = withdrawalId.replace(/-/g, '');
  if (!ID_ENVIO.test(id)) {
    throw new PspError(`withdrawal id ${withdrawalId} makes no idEnvio`, { retryable: false });
  }
  return id;
}

/** Efí's words on a non-2xx answer: `status: nome; mensagem` or `status: title; detail`. */
export function efiWords(status: number, answer: Pick<ApiPixAnswer, 'json'>): string {
  const parsed = EfiError.safeParse(answer.json);
  const parts = parsed.success
    ? [parsed.data.nome, parsed.data.mensagem, parsed.data.title, parsed.data.detail].filter(Boolean)
    : [];
  return `${status}${parts.length > 0 ? `: ${clip(parts.join('; '))}` : ''}`;
}

/**
 * The outcome an Efí send describes, after checking it is ours (same idEnvio and amount: anything
 * else is never recorded as paid, it throws for an operator to look).
 */
export function sendOutcome(what: string, json: unknown, idEnvio: string, expected: string): PayoutOutcome {
  const parsed = Send.safeParse(json);
  if (!parsed.success) {
    throw new PspError(`Efí answered ${what} without a send status`, { retryable: true });
  }
  const s = parsed.data;
  if ((s.idEnvio !== undefined && s.idEnvio !== idEnvio) || (s.valor !== undefined && s.valor !== expected)) {
    throw new PspError(`Efí answered ${what} with another send (${s.idEnvio ?? idEnvio}, ${s.valor ?? ''})`, {
      retryable: true,
    });
  }
  switch (s.status) {
    case 'EM_PROCESSAMENTO':
      return { status: 'processing' };
    case 'REALIZADO': {
      const e2e = s.endToEndId ?? s.e2eId;
      if (!e2e) throw new PspError(`Efí answered ${what} REALIZADO without its e2eId`, { retryable: true });
      return { status: 'paid', reference: e2e };
    }
    case 'NAO_REALIZADO': {
      const motivo = s.gnExtras?.erro?.motivo ?? s.motivo;
      return {
        status: 'failed',
        reason: motivo
          ? `Payout refused by the PSP: ${clip(motivo)}`
          : 'Payout refused by the PSP (NAO_REALIZADO)',
      };
    }
    default:
      throw new PspError(`Efí answered ${what} with send status ${clip(s.status)}`, { retryable: true });
  }
}

const waiting = (message: string, status: number | null = null) =>
  new PspError(message, { retryable: true, status });

export function efiPayouts(options: EfiPayoutsOptions): EfiPayouts {
  const client = apiPixClient({ ...options, scopes: EFI_PAYOUT_SCOPES });
  // Efí advises against simultaneous sends from one account ("Envio e Pagamento Pix"): one PUT at a time.
  let sending: Promise<unknown> = Promise.resolve();

  /** The send of this idEnvio per Efí: its outcome, or null when Efí has none. */
  async function lookup(id: string, expected: string): Promise<PayoutOutcome | null> {
    const path = `/v2/gn/pix/enviados/id-envio/${id}`;
    const get = await client.send('GET', path);
    if (get.status === 200) return sendOutcome(`GET ${path}`, get.json, id, expected);
    if (get.status === 404) return null;
    const hint = get.status === 403 ? ' (does the application have the gn.pix.send.read scope?)' : '';
    throw waiting(`Efí answered GET ${path} with ${efiWords(get.status, get)}${hint}`, get.status);
  }

  async function put(id: string, expected: string, request: PayoutRequest): Promise<PayoutOutcome> {
    const path = `/v3/gn/pix/${id}`;
    const answer = await client.send('PUT', path, {
      valor: expected,
      pagador: { chave: options.pixKey },
      favorecido: { chave: request.pixKey },
    });
    if (answer.status === 200 || answer.status === 201) {
      return sendOutcome(`PUT ${path}`, answer.json, id, expected);
    }
    const words = efiWords(answer.status, answer);
    // Not an answer about this send (Efí's trouble, our credentials or scope, a wrong URL, a redirect):
    // the payout waits and is asked about again.
    if (answer.status < 400 || answer.status >= 500 || [401, 403, 404, 408, 429].includes(answer.status)) {
      const hint = answer.status === 403 ? ' (does the application have the pix.send scope?)' : '';
      throw waiting(`Efí answered PUT ${path} with ${words}${hint}`, answer.status);
    }
    // 409 id_envio_duplicado, or a refusal that may concern a repeat of a send already made: only
    // Efí's record of the send decides.
    const found = await lookup(id, expected);
    if (found) return found;
    if (answer.status === 409) {
      throw waiting(`Efí answered PUT ${path} with ${words}, yet has no send ${id}`, 409);
    }
    return { status: 'failed', reason: `Payout refused by the PSP (${words})` };
  }

  return {
    name: 'efi',

    async pay(request: PayoutRequest): Promise<PayoutOutcome> {
      const id = idEnvioOf(request.withdrawalId);
      const expected = valor(request.amount);
      try {
        // Asked again (an earlier attempt sent it, or may have): read the send first, send only if
        // Efí has none. A send Efí has not recorded yet is still caught by the 409 of the PUT.
        if ((request.attempt ?? 1) > 1) {
          const found = await lookup(id, expected);
          if (found) return found;
        }
        const turn = sending.then(() => put(id, expected, request));
        sending = turn.catch(() => undefined);
        return await turn;
      } catch (err) {
        // Whatever did not come back as an outcome (the token refused, say) says nothing about the
        // send: the payout waits.
        if (err instanceof PspError && !err.retryable) throw waiting(err.message, err.status);
        throw err;
      }
    },

    close: () => client.close(),
  };
}
