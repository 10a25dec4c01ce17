import { readFileSync } from 'node:fs';
import { z } from 'zod';

/*
 * The connection variables of an API Pix adapter, checked the same way in every service that has one.
 * Each service names them with its own prefix (payments: PSP_API_URL...; withdrawals:
 * PAYOUT_PSP_API_URL...) and checks their shapes with zod; what depends on several of them is here.
 */

/** `${prefix}API_URL` and the other names of one adapter's connection variables. */
export function apiPixEnvNames(prefix: string) {
  return {
    apiUrl: `${prefix}API_URL`,
    tokenUrl: `${prefix}TOKEN_URL`,
    clientId: `${prefix}CLIENT_ID`,
    clientSecret: `${prefix}CLIENT_SECRET`,
    certFile: `${prefix}TLS_CERT_FILE`,
    keyFile: `${prefix}TLS_KEY_FILE`,
  } as const;
}

const httpUrl = () => z.url({ protocol: /^https?$/, error: 'Must be an http or https URL' }).optional();
const text = () => z.string().optional();
const timeoutMs = () => z.coerce.number().int().min(1).max(120_000).default(5000);

/**
 * The shapes of an adapter's connection variables, under the service's prefix:
 * - `API_URL`: base URL of the PSP's API Pix, e.g. https://pix.example-psp.com/api/v2;
 * - `TOKEN_URL`: the OAuth2 token endpoint the PSP publishes, `<API_URL>/oauth/token` when unset (PSPs
 *   often put it elsewhere, the standard's example at the host's root: set it);
 * - `CLIENT_ID`, `CLIENT_SECRET`: OAuth2 client credentials, sent with HTTP Basic to the token endpoint;
 * - `TLS_CERT_FILE`, `TLS_KEY_FILE`: client certificate and key (PEM paths) for the PSP's mutual TLS,
 *   both or neither, and both in production (API Pix requires mutual TLS);
 * - `TIMEOUT_MS`: deadline of each HTTP request to the PSP, token requests included.
 * All but the timeout are optional here: apiPixEnvProblems says which the chosen adapter needs.
 */
export function apiPixEnv<P extends string>(prefix: P) {
  const names = apiPixEnvNames(prefix);
  return {
    [names.apiUrl]: httpUrl(),
    [names.tokenUrl]: httpUrl(),
    [names.clientId]: text(),
    [names.clientSecret]: text(),
    [names.certFile]: text(),
    [names.keyFile]: text(),
    [`${prefix}TIMEOUT_MS`]: timeoutMs(),
  } as Record<`${P}API_URL` | `${P}TOKEN_URL`, ReturnType<typeof httpUrl>> &
    Record<
      `${P}CLIENT_ID` | `${P}CLIENT_SECRET` | `${P}TLS_CERT_FILE` | `${P}TLS_KEY_FILE`,
      ReturnType<typeof text>
    > &
    Record<`${P}TIMEOUT_MS`, ReturnType<typeof timeoutMs>>;
}

/**
 * What is wrong with the connection variables of an adapter chosen by `selector` (e.g. "PIX_PSP is
 * bacen-api-pix"), as `NAME: problem` lines: URL and credentials missing, half a client certificate,
 * plain http or no client certificate in production. `named` tells which variables already have a
 * problem (not reported twice).
 */
export function apiPixEnvProblems(
  source: NodeJS.ProcessEnv,
  prefix: string,
  selector: string,
  named: (name: string) => boolean,
): string[] {
  const names = apiPixEnvNames(prefix);
  const given = (name: string) => (source[name] ?? '') !== '';
  const problems: string[] = [];
  for (const name of [names.apiUrl, names.clientId, names.clientSecret]) {
    if (!given(name) && !named(name)) problems.push(`${name}: Required when ${selector}`);
  }
  for (const [name, other] of [
    [names.certFile, names.keyFile],
    [names.keyFile, names.certFile],
  ] as const) {
    if (given(other) && !given(name)) problems.push(`${name}: Required when ${other} is set`);
  }
  if (source.NODE_ENV === 'production') {
    // The client secret and the payers' or sellers' data must not cross the network in clear text.
    for (const name of [names.apiUrl, names.tokenUrl]) {
      const value = source[name];
      if (value && !named(name) && !value.toLowerCase().startsWith('https://')) {
        problems.push(`${name}: Must be an https URL in production`);
      }
    }
    // API Pix requires mutual TLS of its clients: a PSP, its homologation endpoint too, refuses a
    // connection without the client certificate it issued.
    if (!given(names.certFile) && !given(names.keyFile)) {
      for (const name of [names.certFile, names.keyFile]) {
        if (!named(name)) problems.push(`${name}: Required in production (API Pix requires mutual TLS)`);
      }
    }
  }
  return problems;
}

/** The API URL without trailing slashes, and the token URL (`<api>/oauth/token` unless given). */
export function apiPixUrls(
  apiUrl: string | undefined,
  tokenUrl: string | undefined,
): { apiUrl: string | undefined; tokenUrl: string | undefined } {
  const api = apiUrl?.replace(/\/+$/, '');
  return { apiUrl: api, tokenUrl: tokenUrl ?? (api === undefined ? undefined : `${api}/oauth/token`) };
}

/**
 * Two API URLs naming the same endpoint (case of the host and trailing slashes aside): the test
 * environment's PSP must never be the live one.
 */
export function sameApiUrl(a: string | undefined, b: string | undefined): boolean {
  const normal = (url: string | undefined) => {
    if (!url) return null;
    try {
      return new URL(url).href.replace(/\/+$/, '');
    } catch {
      return null;
    }
  };
  const [x, y] = [normal(a), normal(b)];
  return x !== null && x === y;
}

/**
 * The client certificate for the PSP's mutual TLS, read from the two PEM files, or the problems
 * (`NAME: Cannot read <path> (ENOENT)`). Nothing when either path is unset.
 */
export function readClientCertificate(
  prefix: string,
  certFile: string | undefined,
  keyFile: string | undefined,
): { certificate?: { cert: Buffer; key: Buffer }; problems: string[] } {
  if (!certFile || !keyFile) return { problems: [] };
  const names = apiPixEnvNames(prefix);
  const problems: string[] = [];
  const read = (name: string, path: string) => {
    try {
      return readFileSync(path);
    } catch (err) {
      problems.push(`${name}: Cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
      return Buffer.alloc(0);
    }
  };
  const cert = read(names.certFile, certFile);
  const key = read(names.keyFile, keyFile);
  return problems.length > 0 ? { problems } : { certificate: { cert, key }, problems };
}
