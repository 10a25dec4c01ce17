import { createHash, timingSafeEqual } from 'node:crypto';
import { Agent, request } from 'undici';
import { z } from 'zod';
import { formatAmountCents, parseBrCode } from '../domain/brcode';
import { PspError, type PspAdapter, type PspChargeInput, type PspRefundInput } from '../domain/psp';

/*
 * `bacen-api-pix` (decisions.md 6): the Central Bank's standard API Pix as PSPs expose it.
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

/** The subset of `fetch` the adapter uses; the global fetch and undici's fetch both fit. */
export type PspFetch = (
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string; signal: AbortSignal },
) => Promise<{ status: number; text(): Promise<string> }>;

export interface BacenApiPixOptions {
  /** Base URL of the PSP's API Pix, e.g. https://pix.example-psp.com/api/v2 (no trailing slash needed). */
  apiUrl: string;
  /** OAuth2 token endpoint. */
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  /** Our receiving key at the PSP (the cob's `chave`). */
  pixKey: string;
  /** Deadline of each HTTP request (connect, headers and body). */
  timeoutMs: number;
  /** A token is renewed this many seconds before it expires (default 30; half its life if shorter). */
  tokenRefreshMarginSeconds?: number;
  /** Client certificate for the PSP's mutual TLS (PEM). Ignored when fetchImpl is given. */
  tls?: { cert: string | Buffer; key: string | Buffer; ca?: string | Buffer };
  /** Replaces the built-in undici client (tests, proxies). */
  fetchImpl?: PspFetch;
  /** Clock for token expiry and `calendario.expiracao`; tests move it instead of waiting. */
  now?: () => Date;
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
const MAX_DETAIL = 500;
const PIX_GUI = 'br.gov.bcb.pix';

const TokenAnswer = z.object({
  access_token: z.string().min(1),
  token_type: z.string().optional(),
  expires_in: z.coerce.number().positive().optional(),
});

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

// RFC 7807 as API Pix uses it; `violacoes` lists the fields refused. OAuth2 errors use error/description.
const Problem = z.object({
  title: z.string().optional(),
  detail: z.string().optional(),
  violacoes: z
    .array(z.object({ razao: z.string().optional(), propriedade: z.string().optional() }))
    .optional(),
  error: z.string().optional(),
  error_description: z.string().optional(),
});

/** The PSP's adapter for the standard API Pix, with OAuth2 client credentials. */
export function bacenApiPix(options: BacenApiPixOptions): BacenApiPixAdapter {
  const apiUrl = options.apiUrl.replace(/\/+$/, '');
  const now = options.now ?? (() => new Date());
  const marginMs = (options.tokenRefreshMarginSeconds ?? 30) * 1000;
  const agent = options.fetchImpl
    ? null
    : new Agent({
        connect: { timeout: options.timeoutMs, ...options.tls },
        headersTimeout: options.timeoutMs,
        bodyTimeout: options.timeoutMs,
      });
  const fetchImpl = options.fetchImpl ?? undiciFetch(agent as Agent);
  const basic = Buffer.from(`${options.clientId}:${options.clientSecret}`, 'utf8').toString('base64');

  let cached: { token: string; renewAt: number } | null = null;
  let pending: Promise<string> | null = null;

  /** One HTTP exchange; only a failure to get an answer at all throws (retryable). */
  async function send(
    method: string,
    url: string,
    what: string,
    headers: Record<string, string>,
    body?: string,
  ): Promise<{ status: number; text: string }> {
    try {
      const res = await fetchImpl(url, {
        method,
        headers,
        body,
        signal: AbortSignal.timeout(options.timeoutMs),
      });
      return { status: res.status, text: await res.text() };
    } catch (err) {
      throw new PspError(`PSP did not answer ${what}: ${describeFailure(err, options.timeoutMs)}`, {
        retryable: true,
        cause: err,
      });
    }
  }

  async function fetchToken(): Promise<string> {
    const what = 'the token request';
    const res = await send(
      'POST',
      options.tokenUrl,
      what,
      {
        authorization: `Basic ${basic}`,
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
      },
      new URLSearchParams({ grant_type: 'client_credentials' }).toString(),
    );
    if (res.status !== 200) throw refusal(what, res.status, res.text);
    const answer = TokenAnswer.safeParse(parseJson(res.text));
    if (!answer.success || (answer.data.token_type ?? 'bearer').toLowerCase() !== 'bearer') {
      throw new PspError(`PSP answered ${what} with no usable bearer token`, {
        retryable: false,
        status: 200,
      });
    }
    const lifeMs = (answer.data.expires_in ?? 60) * 1000;
    cached = {
      token: answer.data.access_token,
      renewAt: now().getTime() + Math.max(lifeMs - marginMs, lifeMs / 2),
    };
    return cached.token;
  }

  /** The cached token, or a new one; concurrent callers share one token request. */
  function token(): Promise<string> {
    if (cached && now().getTime() < cached.renewAt) return Promise.resolve(cached.token);
    pending ??= fetchToken().finally(() => {
      pending = null;
    });
    return pending;
  }

  /** An authorised JSON call; a 401 drops the token, and the call is made once more with a new one. */
  async function call(method: string, path: string, body: unknown): Promise<unknown> {
    const what = `${method} ${path}`;
    const json = JSON.stringify(body);
    const attempt = async (bearer: string) =>
      send(
        method,
        apiUrl + path,
        what,
        {
          authorization: `Bearer ${bearer}`,
          'content-type': 'application/json',
          accept: 'application/json',
        },
        json,
      );
    let bearer = await token();
    let res = await attempt(bearer);
    if (res.status === 401) {
      if (cached?.token === bearer) cached = null;
      bearer = await token();
      res = await attempt(bearer);
    }
    if (res.status < 200 || res.status > 299) throw refusal(what, res.status, res.text);
    const parsed = parseJson(res.text);
    if (parsed === undefined) {
      throw new PspError(`PSP answered ${what} with ${res.status} and no JSON body`, {
        retryable: false,
        status: res.status,
      });
    }
    return parsed;
  }

  return {
    name: 'bacen-api-pix',
    txidLength: 35,

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
      const answer = RefundAnswer.safeParse(await call('PUT', path, { valor }));
      if (!answer.success) {
        throw new PspError(`PSP answered PUT ${path} without a refund status`, { retryable: false });
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
            retryable: false,
          });
      }
    },

    async close() {
      await agent?.close().catch(() => undefined);
    },
  };
}

function undiciFetch(agent: Agent): PspFetch {
  return async (url, init) => {
    const res = await request(url, {
      method: init.method,
      headers: init.headers,
      body: init.body,
      signal: init.signal,
      dispatcher: agent,
    });
    return { status: res.statusCode, text: () => res.body.text() };
  };
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

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function clip(text: string): string {
  return text.length > MAX_DETAIL ? `${text.slice(0, MAX_DETAIL)}…` : text;
}

/**
 * A PSP answer that is not a success. 5xx, 408 and 429 may pass, so they are retryable; any other 4xx
 * is a refusal, reported with the PSP's own words (RFC 7807 title, detail and violations, or OAuth2's
 * error and error_description).
 */
function refusal(what: string, status: number, text: string): PspError {
  const problem = Problem.safeParse(parseJson(text));
  const parts: string[] = [];
  if (problem.success) {
    const p = problem.data;
    for (const part of [p.title, p.detail, p.error, p.error_description]) if (part) parts.push(part);
    for (const v of p.violacoes ?? []) parts.push([v.propriedade, v.razao].filter(Boolean).join(': '));
  }
  const retryable = status >= 500 || status === 408 || status === 429;
  const words = parts.filter(Boolean).join('; ');
  return new PspError(`PSP answered ${what} with ${status}${words ? `: ${clip(words)}` : ''}`, {
    retryable,
    status,
  });
}

function describeFailure(err: unknown, timeoutMs: number): string {
  const error = err as { name?: string; code?: string; message?: string; cause?: { code?: string } };
  if (
    error.name === 'TimeoutError' ||
    error.code === 'UND_ERR_HEADERS_TIMEOUT' ||
    error.code === 'UND_ERR_BODY_TIMEOUT'
  ) {
    return `no answer within ${timeoutMs} ms`;
  }
  if (error.code === 'UND_ERR_CONNECT_TIMEOUT') return `could not connect within ${timeoutMs} ms`;
  const code = error.code ?? error.cause?.code;
  return [code, error.message].filter(Boolean).join(' ') || 'network error';
}
