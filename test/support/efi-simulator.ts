import { randomBytes, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';

/*
 * Efí's Pix send API ("Envio de Pix") as its public documentation describes it (dev.efipay.com.br,
 * "API Pix": "Credenciais, certificado e autorização", "Envio e Pagamento Pix"), on a free 127.0.0.1
 * port, for the `efi` payout adapter's tests:
 *
 *   POST /oauth/token                              HTTP Basic; {"grant_type":"client_credentials"} as
 *                                                  JSON (Efí's examples) or a form (RFC 6749); an
 *                                                  optional `scope` narrows the application's scopes
 *   PUT  /v3/gn/pix/:idEnvio                       scope pix.send; 201 {idEnvio, e2eId, valor,
 *                                                  horario: {solicitacao}, status: EM_PROCESSAMENTO}
 *   GET  /v2/gn/pix/enviados/id-envio/:idEnvio     scope gn.pix.send.read; the send, or 404
 *   GET  /v2/gn/pix/enviados/:e2eId                the same, by end-to-end id
 *
 * A send starts EM_PROCESSAMENTO and ends REALIZADO or NAO_REALIZADO: by itself after `settleAfterMs`
 * with `autoSettle` (REALIZADO by default; null leaves it to settle()), as Efí reports later by webhook
 * or lookup. A repeated idEnvio is a 409 `id_envio_duplicado`; send errors are {nome, mensagem};
 * authorisation and lookup errors are RFC 7807 problems. With `tls`, it is served over https and
 * requires a client certificate signed by `tls.ca` (Efí requires it on every call).
 *
 * Not in Efí's documentation, so chosen here: the words of a refusal for an unknown receiving key, of
 * a 401 (missing or expired token), and that a requested scope the application lacks is left out of
 * the token rather than refused.
 */

const ID_ENVIO = /^[a-zA-Z0-9]{1,35}$/;
const VALOR = /^\d{1,10}\.\d{2}$/;
const ALNUM = 'abcdefghijklmnopqrstuvwxyz0123456789';
/** Efí's ISPB, the start of its end-to-end ids. */
const EFI_ISPB = '09089356';
const DEFAULT_SCOPES = ['cob.write', 'cob.read', 'pix.write', 'pix.read', 'pix.send', 'gn.pix.send.read'];

export type EfiSendStatus = 'EM_PROCESSAMENTO' | 'REALIZADO' | 'NAO_REALIZADO';

/** A send, as the lookup answers it. */
export interface EfiSend {
  endToEndId: string;
  idEnvio: string;
  valor: string;
  /** Our paying key (the send's `pagador.chave`). */
  chave: string;
  status: EfiSendStatus;
  infoPagador?: string;
  horario: { solicitacao: string; liquidacao?: string };
  favorecido: { chave: string };
}

export interface EfiRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  /** Whether the caller presented a client certificate the CA verified (always false without `tls`). */
  clientCertificate: boolean;
}

export interface EfiSimulatorOptions {
  clientId: string;
  clientSecret: string;
  /** The account's Pix key: the only `pagador.chave` a send may name. */
  payingKey: string;
  /** The scopes enabled on the application (all the Pix API's by default). */
  scopes?: string[];
  tokenTtlSeconds?: number;
  /** Serve over https, requiring a client certificate signed by `ca`. */
  tls?: { cert: string | Buffer; key: string | Buffer; ca: string | Buffer };
}

export interface EfiSimulator {
  /** The API's host (the adapter's apiUrl). */
  url: string;
  tokenUrl: string;
  readonly tokenRequests: number;
  /** The `scope` of every token request (null when absent), in order. */
  requestedScopes: Array<string | null>;
  tokenTtlSeconds: number;
  /** Sends received, by idEnvio. */
  sends: Map<string, EfiSend>;
  /** How a send ends by itself once `settleAfterMs` old; null: only settle() ends it. */
  autoSettle: 'REALIZADO' | 'NAO_REALIZADO' | null;
  settleAfterMs: number;
  /** Receiving keys Efí refuses in the request (a 400 `chave_invalida`). */
  unknownKeys: Set<string>;
  /**
   * How a repeated idEnvio is answered: the documented 409 (default), or as a refusal of the repeat
   * for the balance the first send used (422 `pagamento_negado`), which the adapter must not believe.
   */
  repeatAnswer: 409 | 422;
  /** Ends a send still EM_PROCESSAMENTO. */
  settle(idEnvio: string, status: 'REALIZADO' | 'NAO_REALIZADO'): EfiSend;
  requests: EfiRequest[];
  revokeTokens(): void;
  /** The next `count` API calls (not token requests) answer `status` with `body` (an erro_aplicacao). */
  failNext(status: number, count?: number, body?: unknown): void;
  /** The next `count` API calls are carried out but their answers are lost (the connection drops). */
  loseAnswerNext(count?: number): void;
  close(): Promise<void>;
}

export async function startEfiSimulator(options: EfiSimulatorOptions): Promise<EfiSimulator> {
  const enabled = new Set(options.scopes ?? DEFAULT_SCOPES);
  const tokens = new Map<string, { expiresAt: number; scopes: Set<string> }>();
  const sends = new Map<string, EfiSend>();
  const requests: EfiRequest[] = [];
  const requestedScopes: Array<string | null> = [];
  const unknownKeys = new Set<string>();
  let tokenRequests = 0;
  let failures: { status: number; count: number; body: unknown } | null = null;
  let lostAnswers = 0;
  const sim = {
    tokenTtlSeconds: options.tokenTtlSeconds ?? 3600,
    autoSettle: 'REALIZADO' as 'REALIZADO' | 'NAO_REALIZADO' | null,
    settleAfterMs: 0,
    repeatAnswer: 409 as 409 | 422,
  };

  function endToEndId(at: Date): string {
    // E + ISPB + yyyyMMddHHmm + 11 characters, as Efí's examples (E09089356202011251226APIff82f2e5).
    return `E${EFI_ISPB}${at.toISOString().slice(0, 16).replace(/[-T:]/g, '')}API${randomText(8)}`;
  }

  /** A send's state now: one old enough ends by itself when autoSettle says how. */
  function current(send: EfiSend): EfiSend {
    if (
      send.status === 'EM_PROCESSAMENTO' &&
      sim.autoSettle !== null &&
      Date.now() - Date.parse(send.horario.solicitacao) >= sim.settleAfterMs
    ) {
      finish(send, sim.autoSettle);
    }
    return send;
  }

  function finish(send: EfiSend, status: 'REALIZADO' | 'NAO_REALIZADO'): void {
    send.status = status;
    if (status === 'REALIZADO') send.horario.liquidacao = new Date().toISOString();
  }

  function issueToken(req: http.IncomingMessage, body: string, res: http.ServerResponse): void {
    tokenRequests += 1;
    const match = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(req.headers.authorization ?? '');
    const decoded = match?.[1] ? Buffer.from(match[1], 'base64').toString('utf8') : '';
    const colon = decoded.indexOf(':');
    const ok =
      colon > 0 &&
      same(formDecoded(decoded.slice(0, colon)), options.clientId) &&
      same(formDecoded(decoded.slice(colon + 1)), options.clientSecret);
    if (!ok) return send(res, 401, { error: 'invalid_client', error_description: 'Credenciais inválidas.' });
    const form = /json/i.test(req.headers['content-type'] ?? '')
      ? (parse(body) as Record<string, unknown> | undefined)
      : Object.fromEntries(new URLSearchParams(body));
    if (form?.grant_type !== 'client_credentials') {
      return send(res, 400, {
        error: 'unsupported_grant_type',
        error_description: 'Use client_credentials.',
      });
    }
    const asked = typeof form.scope === 'string' ? form.scope : null;
    requestedScopes.push(asked);
    const scopes = new Set(asked === null ? enabled : asked.split(' ').filter((scope) => enabled.has(scope)));
    const token = randomBytes(24).toString('base64url');
    tokens.set(token, { expiresAt: Date.now() + sim.tokenTtlSeconds * 1000, scopes });
    send(res, 200, {
      access_token: token,
      token_type: 'Bearer',
      expires_in: sim.tokenTtlSeconds,
      scope: [...scopes].join(' '),
    });
  }

  function putSend(id: string, body: unknown, res: http.ServerResponse): void {
    const invalid = (mensagem: string) => send(res, 400, { nome: 'valor_invalido', mensagem });
    if (!ID_ENVIO.test(id)) return invalid('Campo idEnvio deve ter de 1 a 35 letras ou dígitos');
    if (!isRecord(body)) return invalid('Corpo da requisição inválido');
    const { valor, pagador, favorecido } = body;
    if (typeof valor !== 'string' || !VALOR.test(valor) || /^0+\.00$/.test(valor)) {
      return invalid('Campo valor deve ser maior que zero');
    }
    if (!isRecord(pagador) || typeof pagador.chave !== 'string' || pagador.chave.length > 77) {
      return invalid('Campo pagador.chave é obrigatório');
    }
    if (
      pagador.infoPagador !== undefined &&
      (typeof pagador.infoPagador !== 'string' || pagador.infoPagador.length >= 140)
    ) {
      return invalid('Campo pagador.infoPagador deve ter menos de 140 caracteres');
    }
    if (!isRecord(favorecido) || typeof favorecido.chave !== 'string' || favorecido.chave.length > 77) {
      return invalid('Campo favorecido.chave é obrigatório');
    }
    if (sends.has(id)) {
      return sim.repeatAnswer === 409
        ? send(res, 409, {
            nome: 'id_envio_duplicado',
            mensagem: 'O id de envio informado já foi utilizado em outro pagamento',
          })
        : send(res, 422, { nome: 'pagamento_negado', mensagem: 'Pagamento negado por análises' });
    }
    if (pagador.chave !== options.payingKey) {
      return send(res, 400, {
        nome: 'chave_invalida',
        mensagem: 'A chave informada não faz referência à conta Efí autenticada',
      });
    }
    if (unknownKeys.has(favorecido.chave)) {
      return send(res, 400, { nome: 'chave_invalida', mensagem: 'A chave do favorecido é inválida' });
    }
    const now = new Date();
    const created: EfiSend = {
      endToEndId: endToEndId(now),
      idEnvio: id,
      valor,
      chave: pagador.chave,
      status: 'EM_PROCESSAMENTO',
      ...(typeof pagador.infoPagador === 'string' ? { infoPagador: pagador.infoPagador } : {}),
      horario: { solicitacao: now.toISOString() },
      favorecido: { chave: favorecido.chave },
    };
    sends.set(id, created);
    send(res, 201, {
      idEnvio: id,
      e2eId: created.endToEndId,
      valor,
      horario: { solicitacao: created.horario.solicitacao },
      status: created.status,
    });
  }

  async function route(req: http.IncomingMessage, body: string, res: http.ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://sim').pathname;
    const method = req.method ?? '';
    if (path === '/oauth/token' && method === 'POST') return issueToken(req, body, res);
    if (failures && failures.count > 0) {
      failures.count -= 1;
      return send(res, failures.status, failures.body);
    }
    const match = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '');
    const token = match?.[1] ? tokens.get(match[1]) : undefined;
    if (!token || Date.now() >= token.expiresAt) {
      return problem(res, 401, 'NaoAutorizado', 'Não Autorizado', 'Token ausente, inválido ou expirado.');
    }
    const needs = (scope: string) => {
      if (token.scopes.has(scope)) return true;
      problem(
        res,
        403,
        'AcessoNegado',
        'Acesso Negado',
        'Requisição de participante autenticado que viola alguma regra de autorização.',
      );
      return false;
    };
    const put = /^\/v3\/gn\/pix\/([^/]+)$/.exec(path);
    if (put?.[1] && method === 'PUT') {
      if (!needs('pix.send')) return;
      return putSend(decodeURIComponent(put[1]), parse(body), res);
    }
    const byId = /^\/v2\/gn\/pix\/enviados\/id-envio\/([^/]+)$/.exec(path);
    const byE2e = /^\/v2\/gn\/pix\/enviados\/([^/]+)$/.exec(path);
    if ((byId?.[1] || byE2e?.[1]) && method === 'GET') {
      if (!needs('gn.pix.send.read')) return;
      const found = byId?.[1]
        ? sends.get(decodeURIComponent(byId[1]))
        : [...sends.values()].find((s) => s.endToEndId === decodeURIComponent(byE2e?.[1] ?? ''));
      if (found) return send(res, 200, current(found));
      const by = byId ? 'idEnvio' : 'e2eId';
      return problem(
        res,
        404,
        'PixEnviadoNaoEncontrado',
        'Não Encontrado',
        `Pix enviado não encontrado para o ${by} informado.`,
      );
    }
    problem(res, 404, 'NaoEncontrado', 'Não Encontrado', `Rota ${method} ${path} inexistente.`);
  }

  const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const socket = req.socket as Partial<TLSSocket>;
      requests.push({
        method: req.method ?? '',
        path: req.url ?? '/',
        headers: req.headers,
        body,
        clientCertificate: socket.authorized === true,
      });
      // A lost answer: the call is carried out, then the connection drops before any byte is sent.
      const lose = req.url !== '/oauth/token' && lostAnswers > 0 && (lostAnswers -= 1) >= 0;
      const answer = lose
        ? ({ writeHead: () => ({ end: () => req.socket.destroy() }) } as unknown as http.ServerResponse)
        : res;
      route(req, body, answer).catch((err: Error) =>
        send(answer, 500, { nome: 'erro_aplicacao', mensagem: err.message }),
      );
    });
  };
  const server = options.tls
    ? https.createServer({ ...options.tls, requestCert: true, rejectUnauthorized: true }, handler)
    : http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const url = `${options.tls ? 'https' : 'http'}://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    url,
    tokenUrl: `${url}/oauth/token`,
    get tokenRequests() {
      return tokenRequests;
    },
    requestedScopes,
    get tokenTtlSeconds() {
      return sim.tokenTtlSeconds;
    },
    set tokenTtlSeconds(value: number) {
      sim.tokenTtlSeconds = value;
    },
    sends,
    get autoSettle() {
      return sim.autoSettle;
    },
    set autoSettle(value: 'REALIZADO' | 'NAO_REALIZADO' | null) {
      sim.autoSettle = value;
    },
    get settleAfterMs() {
      return sim.settleAfterMs;
    },
    set settleAfterMs(value: number) {
      sim.settleAfterMs = value;
    },
    unknownKeys,
    get repeatAnswer() {
      return sim.repeatAnswer;
    },
    set repeatAnswer(value: 409 | 422) {
      sim.repeatAnswer = value;
    },
    settle(idEnvio, status) {
      const found = sends.get(idEnvio);
      if (!found) throw new Error(`efi-simulator: no send ${idEnvio}`);
      if (found.status !== 'EM_PROCESSAMENTO')
        throw new Error(`efi-simulator: send ${idEnvio} is ${found.status}`);
      finish(found, status);
      return found;
    },
    requests,
    revokeTokens() {
      tokens.clear();
    },
    failNext(status, count = 1, body = { nome: 'erro_aplicacao', mensagem: 'Ocorreu um erro interno' }) {
      failures = { status, count, body };
    },
    loseAnswerNext(count = 1) {
      lostAnswers = count;
    },
    close() {
      return new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
    },
  };
}

function send(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function problem(
  res: http.ServerResponse,
  status: number,
  type: string,
  title: string,
  detail: string,
): void {
  res
    .writeHead(status, { 'content-type': 'application/problem+json' })
    .end(JSON.stringify({ type: `https://pix.bcb.gov.br/api/v2/error/${type}`, title, status, detail }));
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A Basic credential as RFC 6749 2.3.1 form-encodes it (a plain one, as Efí's examples send, decodes to itself). */
function formDecoded(text: string): string {
  return new URLSearchParams(`v=${text}`).get('v') ?? '';
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function randomText(length: number): string {
  let out = '';
  for (const byte of randomBytes(length * 2)) {
    if (byte >= 252) continue; // 252 = 36 * 7: no modulo bias
    out += ALNUM[byte % ALNUM.length];
    if (out.length === length) break;
  }
  return out.length === length ? out : randomText(length);
}
