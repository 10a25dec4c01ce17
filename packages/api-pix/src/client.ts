import { Agent, request } from 'undici';
import { z } from 'zod';

/*
 * The transport every API Pix adapter shares (charges in payments, payouts in withdrawals): OAuth2
 * client credentials with a cached token shared by concurrent callers, authorised JSON calls that renew
 * the token once on a 401, optional mutual TLS, and the PSP's RFC 7807 problems turned into PspError.
 */

/** A PSP that cannot be asked (retryable) or that refused (not retryable, with the PSP's words). */
export class PspError extends Error {
  readonly retryable: boolean;
  readonly status: number | null;

  constructor(message: string, options: { retryable: boolean; status?: number | null; cause?: unknown }) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'PspError';
    this.retryable = options.retryable;
    this.status = options.status ?? null;
  }
}

/** The subset of `fetch` the client uses; the global fetch and undici's fetch both fit. */
export type PspFetch = (
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string; signal: AbortSignal },
) => Promise<{ status: number; text(): Promise<string> }>;

export interface ApiPixClientOptions {
  /** Base URL of the PSP's API, e.g. https://pix.example-psp.com/api/v2 (no trailing slash needed). */
  apiUrl: string;
  /** OAuth2 token endpoint. */
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  /**
   * The OAuth2 scopes to ask for (API Pix names them, e.g. `cob.write`, `pix.read`), sent as the token
   * request's `scope`; none sends no `scope` (the PSP then grants what the client is registered for).
   */
  scopes?: readonly string[];
  /** Deadline of each HTTP request (connect, headers and body). */
  timeoutMs: number;
  /** A token is renewed this many seconds before it expires (default 30; half its life if shorter). */
  tokenRefreshMarginSeconds?: number;
  /** Client certificate for the PSP's mutual TLS (PEM). Ignored when fetchImpl is given. */
  tls?: { cert: string | Buffer; key: string | Buffer; ca?: string | Buffer };
  /** Replaces the built-in undici client (tests, proxies). */
  fetchImpl?: PspFetch;
  /** Clock for token expiry; tests move it instead of waiting. */
  now?: () => Date;
}

/** An answer of the API: its status, its text and the text parsed as JSON (undefined when it is not). */
export interface ApiPixAnswer {
  status: number;
  text: string;
  json: unknown;
}

export interface ApiPixClient {
  /** An authorised call; any status comes back (a failure to get an answer at all throws, retryable). */
  send(method: string, path: string, body?: unknown): Promise<ApiPixAnswer>;
  /** An authorised call that must succeed with a JSON body: anything else throws `refusal`. */
  call(method: string, path: string, body?: unknown): Promise<unknown>;
  /** Closes the client's own connections (not those of an injected fetchImpl). */
  close(): Promise<void>;
}

const TokenAnswer = z.object({
  access_token: z.string().min(1),
  token_type: z.string().optional(),
  expires_in: z.coerce.number().positive().optional(),
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

const MAX_DETAIL = 500;

export function apiPixClient(options: ApiPixClientOptions): ApiPixClient {
  const apiUrl = options.apiUrl.replace(/\/+$/, '');
  const now = options.now ?? (() => new Date());
  const marginMs = (options.tokenRefreshMarginSeconds ?? 30) * 1000;
  const agent = options.fetchImpl
    ? null
    : new Agent({
        connect: { timeout: options.timeoutMs, ...options.tls },
        headersTimeout: options.timeoutMs,
        bodyTimeout: options.timeoutMs,
        // HTTP/1.1 as with undici 7 (undici 8 would take HTTP/2 where the PSP's TLS offers it).
        allowH2: false,
      });
  const fetchImpl = options.fetchImpl ?? undiciFetch(agent as Agent);
  // RFC 6749 2.3.1: each credential form-urlencoded, then joined and Base64-encoded.
  const form = (text: string) => new URLSearchParams({ v: text }).toString().slice(2);
  const basic = Buffer.from(`${form(options.clientId)}:${form(options.clientSecret)}`, 'utf8').toString(
    'base64',
  );

  // RFC 6749 3.3: space-delimited, each scope without spaces.
  const scope = (options.scopes ?? []).filter((name) => name !== '').join(' ');
  if (/[\s"\\]/.test((options.scopes ?? []).join(''))) {
    throw new TypeError('OAuth2 scopes cannot contain spaces, quotes or backslashes');
  }

  let cached: { token: string; renewAt: number } | null = null;
  let pending: Promise<string> | null = null;

  /** One HTTP exchange; only a failure to get an answer at all throws (retryable). */
  async function exchange(
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
    const res = await exchange(
      'POST',
      options.tokenUrl,
      what,
      {
        authorization: `Basic ${basic}`,
        'content-type': 'application/x-www-form-urlencoded',
        accept: 'application/json',
      },
      new URLSearchParams({
        grant_type: 'client_credentials',
        ...(scope === '' ? {} : { scope }),
      }).toString(),
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

  async function send(method: string, path: string, body?: unknown): Promise<ApiPixAnswer> {
    const what = `${method} ${path}`;
    const json = body === undefined ? undefined : JSON.stringify(body);
    const attempt = (bearer: string) =>
      exchange(
        method,
        apiUrl + path,
        what,
        {
          authorization: `Bearer ${bearer}`,
          accept: 'application/json',
          ...(json === undefined ? {} : { 'content-type': 'application/json' }),
        },
        json,
      );
    // A 401 drops the token, and the call is made once more with a new one.
    let bearer = await token();
    let res = await attempt(bearer);
    if (res.status === 401) {
      if (cached?.token === bearer) cached = null;
      bearer = await token();
      res = await attempt(bearer);
    }
    return { ...res, json: parseJson(res.text) };
  }

  return {
    send,
    async call(method, path, body) {
      const what = `${method} ${path}`;
      const res = await send(method, path, body);
      if (res.status < 200 || res.status > 299) throw refusal(what, res.status, res.text);
      if (res.json === undefined) {
        throw new PspError(`PSP answered ${what} with ${res.status} and no JSON body`, {
          retryable: false,
          status: res.status,
        });
      }
      return res.json;
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

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The PSP's words, cut so a huge answer cannot flood a log line or a stored reason. */
export function clip(text: string, max = MAX_DETAIL): string {
  const cut = cutCodePoints(text, max);
  return cut.length < text.length ? `${cut}…` : text;
}

/**
 * The first `max` characters of `text`, counted in code points as JSON Schema's `maxLength` counts
 * them (API Pix `nome` 200, `solicitacaoPagador` 140, `motivo` 140), so a cut never leaves half of a
 * surrogate pair (an emoji, say) behind.
 */
export function cutCodePoints(text: string, max: number): string {
  if (text.length <= max) return text;
  let points = 0;
  let end = 0;
  for (const point of text) {
    if (points === max) break;
    points += 1;
    end += point.length;
  }
  return text.slice(0, end);
}

/**
 * A PSP answer that is not a success. 5xx, 408 and 429 may pass, so they are retryable; any other 4xx
 * is a refusal, reported with the PSP's own words (RFC 7807 title, detail and violations, or OAuth2's
 * error and error_description).
 */
export function refusal(what: string, status: number, text: string): PspError {
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

/** An amount in integer cents as API Pix writes `valor`: "1234.56". */
export function valor(cents: number): string {
  if (!Number.isSafeInteger(cents) || cents <= 0) {
    throw new PspError(`amount must be a positive integer number of cents, got ${cents}`, {
      retryable: false,
    });
  }
  const rest = cents % 100;
  return `${(cents - rest) / 100}.${String(rest).padStart(2, '0')}`;
}
