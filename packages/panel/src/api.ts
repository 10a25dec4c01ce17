import { CSRF_HEADER, type PanelSession } from '@seller-api/contracts';
import type { z } from 'zod';

/** An answer other than 2xx, with the API's `{message, code, data}` body. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly code: string | null,
    /** Field path to messages, for validation errors. */
    readonly fields: Record<string, string[]>,
  ) {
    super(message);
  }
}

let csrfToken: string | null = null;
let onUnauthorized: () => void = () => undefined;

export function setSession(session: PanelSession | null): void {
  csrfToken = session?.csrf_token ?? null;
}

export function whenUnauthorized(handler: () => void): void {
  onUnauthorized = handler;
}

/**
 * Calls the gateway's panel routes with the session cookie and, for a change, the CSRF token; parses
 * the answer with the contract's schema, so the panel reads exactly what the API promises.
 */
interface SendOptions {
  method?: string;
  body?: unknown;
  /** For a POST that creates something: the gateway answers a retry with this key only once. */
  idempotencyKey?: string;
}

export async function request<S extends z.ZodType>(
  schema: S,
  path: string,
  options: SendOptions = {},
): Promise<z.output<S>> {
  const raw = await send(path, options);
  return schema.parse(raw);
}

/** For answers without a body worth parsing (204, action routes). */
export async function perform(path: string, options: SendOptions = {}): Promise<void> {
  await send(path, options);
}

async function send(path: string, { method = 'GET', body, idempotencyKey }: SendOptions): Promise<unknown> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (method !== 'GET' && csrfToken) headers[CSRF_HEADER] = csrfToken;
  if (idempotencyKey) headers['idempotency-key'] = idempotencyKey;
  if (body !== undefined) headers['content-type'] = 'application/json';
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'same-origin',
    });
  } catch {
    // No answer: the request may or may not have been carried out (see useIdempotencyKey).
    throw new Error('No answer from the server. Check the connection and try again.');
  }
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = null;
  }
  if (!res.ok) {
    const error = (parsed ?? {}) as { message?: string; code?: string; data?: Record<string, string[]> };
    if (res.status === 401 && path !== '/panel/api/login') onUnauthorized();
    throw new ApiError(
      res.status,
      error.message ?? `Request failed (${res.status}).`,
      error.code ?? null,
      error.data ?? {},
    );
  }
  return parsed;
}

/** The public API's routes, through the panel session (same paths as with an API key). */
export const apiPath = (path: string, query?: Record<string, string | undefined>) => {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v) params.set(k, v);
  const qs = params.toString();
  return `/panel/api/v1${path}${qs ? `?${qs}` : ''}`;
};

/** A random UUID (v4); crypto.randomUUID exists only on https and localhost pages. */
export function newIdempotencyKey(): string {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID();
  const b = crypto.getRandomValues(new Uint8Array(16));
  b[6] = (b[6]! & 0x0f) | 0x40;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const hex = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
