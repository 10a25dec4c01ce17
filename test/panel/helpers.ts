import { randomBytes } from 'node:crypto';
import { ensureUser } from '../../services/gateway/src/db/users';
import type { GatewayService } from '../../services/gateway/src/service';
import { uniqueEmail } from '../support/system';

export const PASSWORD = 'correct horse battery staple';

/** A panel user made the way `cli users create` makes one. */
export async function panelUser(
  gateway: GatewayService,
  role: 'seller' | 'operator' = 'seller',
): Promise<{ email: string; password: string; userId: string; sellerId: string | null; sellerName: string }> {
  const email = uniqueEmail(`panel-${role}`);
  // Unique, so a test finds its own seller's rows in lists across sellers (the operator queue).
  const sellerName = `Loja ${randomBytes(3).toString('hex')}`;
  const { user } = await ensureUser(gateway.runtime.sql, gateway.runtime.orm.em.fork(), {
    email,
    role,
    password: PASSWORD,
    sellerName: role === 'seller' ? sellerName : undefined,
  });
  return { email, password: PASSWORD, userId: user.id, sellerId: user.sellerId, sellerName };
}

/** The gateway's origin, from the URL startGateway gives (which ends in /api/v1). */
export const originOf = (apiUrl: string) => new URL(apiUrl).origin;

export interface PanelLogin {
  status: number;
  headers: Headers;
  cookie: string | null;
  setCookie: string | null;
  csrf: string | null;
  body: Record<string, unknown>;
}

export async function login(
  origin: string,
  email: string,
  password: string,
  headers: Record<string, string> = {},
): Promise<PanelLogin> {
  const res = await fetch(`${origin}/panel/api/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin, ...headers },
    body: JSON.stringify({ email, password }),
  });
  const body = (await res.json()) as Record<string, unknown>;
  const setCookie = res.headers.get('set-cookie');
  const data = body.data as { csrf_token?: string } | undefined;
  return {
    status: res.status,
    headers: res.headers,
    setCookie,
    cookie: setCookie ? (setCookie.split(';')[0] ?? null) : null,
    csrf: data?.csrf_token ?? null,
    body,
  };
}

/** A panel API call with the session cookie and, unless told otherwise, its CSRF token. */
export async function panelCall(
  origin: string,
  path: string,
  session: { cookie: string | null; csrf: string | null },
  options: { method?: string; body?: unknown; headers?: Record<string, string>; csrf?: boolean } = {},
): Promise<{ status: number; headers: Headers; body: Record<string, unknown> }> {
  const headers: Record<string, string> = { origin, ...options.headers };
  if (session.cookie) headers.cookie = session.cookie;
  if (options.csrf !== false && session.csrf) headers['x-csrf-token'] = session.csrf;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${origin}${path}`, {
    method: options.method ?? 'GET',
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const text = await res.text();
  let body: Record<string, unknown>;
  try {
    body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    body = {};
  }
  return { status: res.status, headers: res.headers, body };
}
