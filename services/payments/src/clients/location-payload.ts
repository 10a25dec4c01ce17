import { createHash, createPublicKey, verify, type JsonWebKey } from 'node:crypto';
import { fromCobvDecimal, isIsoDate, type AmountComponents, type IsoDate } from '@seller-api/due-date';
import { z } from 'zod';

/*
 * What a payer's bank reads at a due-date charge's location (docs/payments.md, "The location and its
 * signature"): GET https://<location>?DPP=<date>&codMun=<IBGE> answers a JWS (RS256) whose header names
 * the signing key (`kid`), the key set that holds it (`jku`, on the location's own host) and, maybe,
 * the certificate's SHA-1 thumbprint (`x5t`); its payload is the charge with the amounts of that day.
 *
 * node:crypto does it all (JWK import, RS256): one algorithm, a handful of header checks, no
 * dependency to follow. A `jku` on another host is refused before anything is fetched from it, so a
 * forged code cannot point us at a key set its author controls.
 */

export interface LocationFetchInit {
  method: string;
  headers: Record<string, string>;
  signal: AbortSignal;
  redirect: 'error';
}

/** The subset of `fetch` used; the global fetch fits. */
export type LocationFetch = (
  url: string,
  init: LocationFetchInit,
) => Promise<{ status: number; text(): Promise<string> }>;

export interface LocationPayloadOptions {
  /** The intended payment date (`DPP`). */
  date: IsoDate;
  /** The payer's municipality, an IBGE code of 7 digits (`codMun`); its holidays count. */
  municipality?: string;
  timeoutMs: number;
  fetchImpl?: LocationFetch;
  /**
   * `http` for a local simulator only: locations are always fetched over https (the BR Code carries
   * them without a scheme because payers' apps never use another).
   */
  scheme?: 'https' | 'http';
}

export type LocationPayloadProblem =
  | 'unreachable'
  | 'not_payable'
  | 'not_found'
  | 'refused'
  | 'malformed'
  | 'bad_header'
  | 'foreign_jku'
  | 'unknown_key'
  | 'bad_signature';

export class LocationPayloadError extends Error {
  readonly problem: LocationPayloadProblem;
  constructor(problem: LocationPayloadProblem, message: string) {
    super(message);
    this.name = 'LocationPayloadError';
    this.problem = problem;
  }
}

const Money = z.string().regex(/^\d{1,10}\.\d{2}$/);
/** `CobVPayload` as we read it; the PSP may add fields. */
const CobvPayloadSchema = z.looseObject({
  txid: z.string().regex(/^[A-Za-z0-9]{26,35}$/),
  revisao: z.coerce.number().int().nonnegative(),
  status: z.string(),
  chave: z.string(),
  calendario: z.looseObject({
    criacao: z.string(),
    apresentacao: z.string(),
    dataDeVencimento: z.string().refine(isIsoDate).optional(),
    validadeAposVencimento: z.number().int().nonnegative(),
  }),
  devedor: z.looseObject({
    nome: z.string().optional(),
    cpf: z.string().optional(),
    cnpj: z.string().optional(),
  }),
  recebedor: z.looseObject({ nome: z.string().optional() }),
  valor: z.looseObject({
    original: Money.optional(),
    multa: Money.optional(),
    juros: Money.optional(),
    abatimento: Money.optional(),
    desconto: Money.optional(),
    final: Money,
  }),
});
export type CobvPayload = z.infer<typeof CobvPayloadSchema>;

export interface VerifiedCobvPayload {
  payload: CobvPayload;
  /** `valor` in cents: the final amount and its parts (0 for a part the payload leaves out). */
  finalCents: number;
  components: AmountComponents;
  /** The key that signed it. */
  kid: string;
}

const Header = z.looseObject({
  alg: z.string(),
  kid: z.string().min(1),
  jku: z.string().min(1),
  x5t: z.string().optional(),
});
const Jwks = z.looseObject({ keys: z.array(z.looseObject({ kid: z.string().optional() })) });

/** Fetches `location` for `options.date` as a payer's bank does, and verifies what it answers. */
export async function fetchCobvPayload(
  location: string,
  options: LocationPayloadOptions,
): Promise<VerifiedCobvPayload> {
  if (!isIsoDate(options.date)) throw new RangeError(`DPP is not a date: ${options.date}`);
  if (options.municipality !== undefined && !/^\d{7}$/.test(options.municipality))
    throw new RangeError('codMun is an IBGE code of 7 digits');
  const base = locationUrl(location, options.scheme ?? 'https');
  const query = new URLSearchParams({ DPP: options.date });
  if (options.municipality !== undefined) query.set('codMun', options.municipality);
  base.search = query.toString();
  const fetchText = textFetcher(options);
  const answer = await fetchText(base.toString(), 'application/jose');
  if (answer.status === 400) {
    throw new LocationPayloadError(
      'not_payable',
      `The location refused ${options.date}: ${cut(answer.text)}`,
    );
  }
  if (answer.status === 404 || answer.status === 410) {
    throw new LocationPayloadError('not_found', `The location serves no charge (${answer.status})`);
  }
  if (answer.status !== 200) {
    throw new LocationPayloadError('refused', `The location answered ${answer.status}`);
  }
  return verifyCobvPayloadJws(answer.text.trim(), {
    location,
    scheme: options.scheme ?? 'https',
    fetchJwks: async (url) => {
      const res = await fetchText(url, 'application/json');
      if (res.status !== 200)
        throw new LocationPayloadError('unknown_key', `The key set answered ${res.status}`);
      return res.text;
    },
  });
}

/**
 * Verifies a location's JWS: RS256, its `jku` on the location's host, the `kid` in that key set (and
 * its `x5t`, when the header has one), the signature; then reads the payload.
 */
export async function verifyCobvPayloadJws(
  jws: string,
  context: { location: string; scheme?: 'https' | 'http'; fetchJwks(url: string): Promise<string> },
): Promise<VerifiedCobvPayload> {
  const parts = jws.split('.');
  if (parts.length !== 3 || parts.some((part) => !/^[A-Za-z0-9_-]*$/.test(part))) {
    throw new LocationPayloadError('malformed', 'Not a compact JWS');
  }
  const [encodedHeader, encodedPayload, signature] = parts as [string, string, string];
  const header = Header.safeParse(decodeJson(encodedHeader));
  if (!header.success) throw new LocationPayloadError('bad_header', 'The JWS header lacks kid or jku');
  if (header.data.alg !== 'RS256') {
    throw new LocationPayloadError('bad_header', `The JWS is signed with ${cut(header.data.alg)}, not RS256`);
  }
  const scheme = context.scheme ?? 'https';
  const host = locationUrl(context.location, scheme).host;
  let jku: URL;
  try {
    jku = new URL(header.data.jku);
  } catch {
    throw new LocationPayloadError('bad_header', 'The JWS jku is not a URL');
  }
  if (jku.protocol !== `${scheme}:` || jku.host !== host || jku.username !== '' || jku.password !== '') {
    throw new LocationPayloadError('foreign_jku', `The JWS jku is not on the location's host ${host}`);
  }

  const keys = Jwks.safeParse(decodeJsonText(await context.fetchJwks(jku.toString())));
  if (!keys.success) throw new LocationPayloadError('unknown_key', 'The key set is not a JWKS');
  const jwk = keys.data.keys.find((key) => key.kid === header.data.kid) as
    (JsonWebKey & { kid: string; use?: string; x5t?: string; x5c?: string[] }) | undefined;
  if (!jwk) {
    throw new LocationPayloadError('unknown_key', `The key set has no key ${cut(header.data.kid)}`);
  }
  if (jwk.kty !== 'RSA' || (jwk.use !== undefined && jwk.use !== 'sig')) {
    throw new LocationPayloadError('unknown_key', 'The named key is not an RSA signing key');
  }
  if (header.data.x5t !== undefined && thumbprint(jwk) !== header.data.x5t) {
    throw new LocationPayloadError('unknown_key', "The JWS x5t is not the named key's certificate");
  }
  let ok: boolean;
  try {
    const key = createPublicKey({ key: jwk, format: 'jwk' });
    ok = verify(
      'RSA-SHA256',
      Buffer.from(`${encodedHeader}.${encodedPayload}`, 'ascii'),
      key,
      Buffer.from(signature, 'base64url'),
    );
  } catch {
    ok = false;
  }
  if (!ok) throw new LocationPayloadError('bad_signature', 'The JWS signature does not verify');

  const payload = CobvPayloadSchema.safeParse(decodeJson(encodedPayload));
  if (!payload.success) {
    throw new LocationPayloadError(
      'malformed',
      `The payload is not a CobVPayload: ${payload.error.issues.map((i) => i.path.join('.')).join(', ')}`,
    );
  }
  const valor = payload.data.valor;
  const cents = (text: string | undefined) => (text === undefined ? 0 : fromCobvDecimal(text));
  const components: AmountComponents = {
    original: cents(valor.original),
    rebate: cents(valor.abatimento),
    discount: cents(valor.desconto),
    fine: cents(valor.multa),
    interest: cents(valor.juros),
  };
  return {
    payload: payload.data,
    finalCents: fromCobvDecimal(valor.final),
    components,
    kid: header.data.kid,
  };
}

/** The x5t a key answers for: its own, or the SHA-1 of its first certificate (RFC 7517 4.8). */
function thumbprint(jwk: { x5t?: string; x5c?: string[] }): string | undefined {
  if (jwk.x5t !== undefined) return jwk.x5t;
  const first = jwk.x5c?.[0];
  return first === undefined
    ? undefined
    : createHash('sha1').update(Buffer.from(first, 'base64')).digest('base64url');
}

function locationUrl(location: string, scheme: 'https' | 'http'): URL {
  const bare = location.trim().replace(/^https?:\/\//i, '');
  try {
    return new URL(`${scheme}://${bare}`);
  } catch {
    throw new LocationPayloadError('malformed', 'The location is not a host and a path');
  }
}

function textFetcher(
  options: Pick<LocationPayloadOptions, 'fetchImpl' | 'timeoutMs'>,
): (url: string, accept: string) => Promise<{ status: number; text: string }> {
  const fetchImpl: LocationFetch = options.fetchImpl ?? ((url, init) => fetch(url, init));
  return async (url, accept) => {
    try {
      const res = await fetchImpl(url, {
        method: 'GET',
        headers: { accept },
        signal: AbortSignal.timeout(options.timeoutMs),
        redirect: 'error',
      });
      return { status: res.status, text: await res.text() };
    } catch (err) {
      throw new LocationPayloadError('unreachable', `Could not fetch ${url}: ${(err as Error).message}`);
    }
  };
}

function decodeJson(part: string): unknown {
  return decodeJsonText(Buffer.from(part, 'base64url').toString('utf8'));
}

function decodeJsonText(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function cut(text: string): string {
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
