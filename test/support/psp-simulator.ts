import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { PspPixNotification } from '@seller-api/contracts';
import { pspNotificationHeaders } from '../../services/payments/src/http/psp-senders';
import { buildDynamicBrCode } from '../../services/payments/src/domain/brcode';
import {
  cobvDesk,
  type CobvDesk,
  type DeskAnswer,
  type PayCobvOptions,
  type SimCobv,
} from './psp-simulator-cobv';

/*
 * A PSP speaking the subset of the Central Bank's API Pix that payments' `bacen-api-pix` charge adapter
 * uses, on a free 127.0.0.1 port, so that path runs in the tests end to end (API Pix covers receiving
 * only: payouts go through a PSP's own API, simulated for Efí in test/support/efi-simulator.ts):
 *
 *   POST /oauth/token                      client credentials (HTTP Basic), random bearer tokens; the
 *                                          token carries the `scope` asked for (all when none) and each
 *                                          call below needs its scope (403 otherwise)
 *   PUT  /cob/:txid                        immediate charge (cob.write): validates, stores, answers the
 *                                          spec's CobGerada, with pixCopiaECola or not (cobAnswer)
 *   GET  /cob/:txid                        the charge, with its payments once paid (cob.read)
 *   PUT/PATCH/GET /cobv/:txid              due-date charges (cobv.write, cobv.read), their location (a
 *                                          JWS served open at /qr/v2/cobv/:token) and its key set
 *                                          (/qr/v2/jwks): test/support/psp-simulator-cobv.ts
 *   GET  /pix/:e2eid                       a payment made through pay(), with its refunds (pix.read)
 *   PUT  /pix/:e2eid/devolucao/:id         refund of a payment made through pay() (pix.write): answered
 *                                          with `refundStatus`; EM_PROCESSAMENTO stays so until
 *                                          settleRefund(), and notifyRefunds() tells it as the spec's
 *                                          callback does (`pix[].devolucoes`)
 *   GET  /pix/:e2eid/devolucao/:id         that refund as it stands (pix.read)
 *
 * The API sits at the root: pass `url` as the adapter's apiUrl and `tokenUrl` (= url + /oauth/token).
 * Errors are RFC 7807 problems as API Pix has them ({type, title, status, detail, violacoes?}).
 *
 * Payments: pay() marks a charge paid and POSTs the standard notification
 * {pix: [{endToEndId, txid, valor, horario}]} to `webhookUrl + '/pix'` (the URL registered with a PSP is
 * .../api/v1/psp/webhook; the standard appends /pix), either as API Pix has it, over mutual TLS with the
 * PSP's client certificate (`tls`: to an ingress such as test/support/psp-ingress.ts), or with the
 * per-PSP secret as `Authorization: Bearer <secret>` (pspNotificationHeaders from
 * services/payments/src/http/psp-senders.ts), or both.
 */

const PROBLEM_BASE = 'https://pix.bcb.gov.br/api/v2/error/';
const VALOR = /^\d{1,10}\.\d{2}$/;
const TXID = /^[A-Za-z0-9]{26,35}$/;
const REFUND_ID = /^[A-Za-z0-9]{1,35}$/;
const E2E_ID = /^[A-Za-z0-9]{32}$/;
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export type SimRefundStatus = 'DEVOLVIDO' | 'EM_PROCESSAMENTO' | 'NAO_REALIZADO';

export interface SimRefund {
  endToEndId: string;
  id: string;
  rtrId: string;
  valor: string;
  horario: { solicitacao: string; liquidacao?: string };
  status: SimRefundStatus;
  motivo?: string;
}

/**
 * How PUT /cob answers (all are CobGerada as API Pix 2.9.0 has it): `code` with pixCopiaECola, location
 * and loc; `location` without pixCopiaECola (optional since 2.6.0), with location and loc, like every
 * example answer of the spec; `loc` with only `loc.location`.
 */
export type SimCobAnswer = 'code' | 'location' | 'loc';

/** The API Pix scopes the simulator knows; a token asked without `scope` gets them all. */
const SCOPES = ['cob.write', 'cob.read', 'cobv.write', 'cobv.read', 'pix.write', 'pix.read'] as const;

export interface SimPix {
  endToEndId: string;
  txid: string;
  valor: string;
  horario: string;
  /** What the amount is made of: due-date charges only (payCobv). */
  componentesValor?: Record<string, { valor: string }>;
  devolucoes: SimRefund[];
}

export interface SimCob {
  txid: string;
  revisao: number;
  calendario: { criacao: string; expiracao: number };
  status: 'ATIVA' | 'CONCLUIDA';
  valor: { original: string };
  chave: string;
  devedor?: { cpf?: string; cnpj?: string; nome: string };
  solicitacaoPagador?: string;
  loc: { id: number; location: string; tipoCob: 'cob'; criacao: string };
  location: string;
  pixCopiaECola: string;
  /** Payments received for this charge (through pay()). */
  pix: SimPix[];
}

export interface SimRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export interface PspSimulatorOptions {
  clientId: string;
  clientSecret: string;
  /** Lifetime of issued tokens (`expires_in`); can be changed later through `tokenTtlSeconds`. */
  tokenTtlSeconds?: number;
  merchantName?: string;
  merchantCity?: string;
  /** The PSP's ISPB (8 digits), the start of its end-to-end ids. */
  ispb?: string;
}

export interface PayOptions {
  /** The URL registered with the PSP, e.g. http://127.0.0.1:1234/api/v1/psp/webhook; `/pix` is appended. */
  webhookUrl: string;
  /** Sent as `Authorization: Bearer <secret>`; null sends no Authorization header. */
  secret: string | null;
  /** Sends over mutual TLS with this client certificate (webhookUrl then names the ingress). */
  tls?: PspClientTls;
  /** Amount paid in integer cents; the charge's amount by default. */
  amount?: number;
  /** The payment's end-to-end id; a new one in the standard's format by default. */
  endToEndId?: string;
  /** When the payment settled; now by default. */
  horario?: Date;
}

export interface NotifyOptions {
  webhookUrl: string;
  secret: string | null;
  tls?: PspClientTls;
}

/** The PSP's side of mutual TLS towards our ingress. */
export interface PspClientTls {
  /** The PSP's client certificate and key (PEM). */
  cert: string;
  key: string;
  /** The CA of the ingress's server certificate. */
  ca: string;
  /** Our PSP host: the TLS server name and the Host header (webhookUrl names the address to dial). */
  host: string;
}

export interface NotifyRefundsOptions extends NotifyOptions {
  /** Only these refund ids (default: every refund of each payment, in the order they were asked). */
  refundIds?: string[];
}

export interface NotificationDelivery {
  url: string;
  payload: unknown;
  /** The receiver's answer; status 0 when it could not be reached. */
  status: number;
  body: string;
}

export interface PaymentResult extends NotificationDelivery {
  endToEndId: string;
  pix: SimPix;
}

export interface PspSimulator {
  /** Base URL of the API Pix (the adapter's apiUrl). */
  url: string;
  /** The OAuth2 client credentials it accepts. */
  readonly clientId: string;
  readonly clientSecret: string;
  /** POST here for tokens (the adapter's tokenUrl). */
  tokenUrl: string;
  /** Token requests answered, successful or not. */
  readonly tokenRequests: number;
  /** Lifetime of tokens issued from now on. */
  tokenTtlSeconds: number;
  /**
   * Status the next refunds get (DEVOLVIDO by default); NAO_REALIZADO comes with a `motivo`;
   * EM_PROCESSAMENTO stays so until settleRefund().
   */
  refundStatus: SimRefundStatus;
  /** How PUT /cob answers from now on (`code` by default). */
  cobAnswer: SimCobAnswer;
  /**
   * How a PUT of a refund id already used for that payment is answered: `refuse` (default), a 400
   * `PixDevolucaoInvalida` as API Pix specifies; `replay`, the refund as it stands, as some PSPs do.
   */
  reusedRefundId: 'refuse' | 'replay';
  /** Finishes a refund left EM_PROCESSAMENTO (by its id; an end-to-end id picks one of several). */
  settleRefund(
    id: string,
    status: 'DEVOLVIDO' | 'NAO_REALIZADO',
    motivo?: string,
    endToEndId?: string,
  ): SimRefund;
  /**
   * POSTs the spec's callback for refunds: `{pix: [{endToEndId, txid, valor, horario, devolucoes}]}`,
   * one item per payment, each with its refunds as they stand (Devolucao without endToEndId).
   */
  notifyRefunds(endToEndIds: string[], options: NotifyRefundsOptions): Promise<NotificationDelivery>;
  cobs: Map<string, SimCob>;
  refunds: SimRefund[];
  /** Every request to the API (tokens included), in order. */
  requests: SimRequest[];
  /** Every notification sent by pay() or notify(). */
  notifications: NotificationDelivery[];
  /** Invalidates every issued token: the next API call gets 401. */
  revokeTokens(): void;
  /*
   * Injected faults hit the next `count` API calls (never token requests), of `method` only when one
   * is given: a method keeps a fault meant for a refund request (PUT) off the background look-ups
   * (GET) that refunds left open by an earlier run of the same test database may cause.
   */
  /** The next calls answer `status` with a problem body. */
  failNext(status: number, count?: number, method?: string): void;
  /** The next calls get no answer at all, until close(). */
  hangNext(count?: number, method?: string): void;
  /** The next calls are carried out, but their answers are lost (the connection drops). */
  loseAnswerNext(count?: number, method?: string): void;
  /** Due-date charges (`cobv`) by txid. */
  cobvs: Map<string, SimCobv>;
  /** The ids of the keys that sign locations (the current one first). */
  readonly locationKeyIds: string[];
  /** A new location signing key; the old one leaves the key set. */
  rotateLocationKey(): void;
  /**
   * The payer pays a due-date charge as on `date` (today by default): only the final amount of that
   * day (amountDue) is taken, else CobvPaymentRefused is thrown and nothing changes. The charge becomes
   * CONCLUIDA and the notification, with `componentesValor`, is POSTed as pay() does.
   */
  payCobv(txid: string, options: PayCobvOptions & NotifyOptions): Promise<PaymentResult>;
  /** The payer pays the charge: it becomes CONCLUIDA and the notification is POSTed. */
  pay(txid: string, options: PayOptions): Promise<PaymentResult>;
  /** POSTs any payload as a notification (duplicates, unknown txid, wrong amount, bad shape). */
  notify(payload: unknown, options: NotifyOptions): Promise<NotificationDelivery>;
  /** An end-to-end id in the standard's format: E + ISPB + yyyyMMddHHmm + 11 letters or digits. */
  newEndToEndId(at?: Date): string;
  close(): Promise<void>;
}

export async function startPspSimulator(options: PspSimulatorOptions): Promise<PspSimulator> {
  const merchantName = options.merchantName ?? 'SELLER API';
  const merchantCity = options.merchantCity ?? 'SAO PAULO';
  const ispb = options.ispb ?? '99999999';
  if (!/^\d{8}$/.test(ispb)) throw new Error('ispb must be 8 digits');

  const tokens = new Map<string, { expiresAt: number; scopes: Set<string> }>();
  let locations = 0;
  const cobs = new Map<string, SimCob>();
  const payments = new Map<string, SimPix>();
  const refunds: SimRefund[] = [];
  const requests: SimRequest[] = [];
  const notifications: NotificationDelivery[] = [];
  let tokenRequests = 0;
  let failures: { status: number; count: number } | null = null;
  let failMethod: string | null = null;
  let hangs = 0;
  let hangMethod: string | null = null;
  let lostAnswers = 0;
  let lostMethod: string | null = null;

  const sim = {
    tokenTtlSeconds: options.tokenTtlSeconds ?? 3600,
    refundStatus: 'DEVOLVIDO' as SimRefundStatus,
    cobAnswer: 'code' as SimCobAnswer,
    reusedRefundId: 'refuse' as 'refuse' | 'replay',
  };

  function stamp(prefix: 'E' | 'D', at: Date): string {
    const iso = at.toISOString();
    const minute = iso.slice(0, 16).replace(/[-T:]/g, '');
    return prefix + ispb + minute + randomAlnum(11);
  }

  function issueToken(req: http.IncomingMessage, body: string, res: http.ServerResponse): void {
    tokenRequests += 1;
    const header = req.headers.authorization ?? '';
    const match = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(header);
    const decoded = match?.[1] ? Buffer.from(match[1], 'base64').toString('utf8') : '';
    const colon = decoded.indexOf(':');
    const ok =
      colon > 0 &&
      same(decoded.slice(0, colon), options.clientId) &&
      same(decoded.slice(colon + 1), options.clientSecret);
    if (!ok) {
      res.setHeader('www-authenticate', 'Basic realm="psp-simulator"');
      return send(res, 401, { error: 'invalid_client', error_description: 'Client authentication failed.' });
    }
    const grant = new URLSearchParams(body).get('grant_type');
    if (grant !== 'client_credentials') {
      return send(res, 400, {
        error: 'unsupported_grant_type',
        error_description: 'Only client_credentials.',
      });
    }
    // RFC 6749 3.3: the scopes asked for, space-separated; an unknown one is invalid_scope.
    const asked = new URLSearchParams(body).get('scope');
    const scopes = asked === null ? [...SCOPES] : asked.split(' ').filter((name) => name !== '');
    const unknown = scopes.filter((name) => !(SCOPES as readonly string[]).includes(name));
    if (unknown.length > 0) {
      return send(res, 400, {
        error: 'invalid_scope',
        error_description: `Unknown scope ${unknown.join(' ')}.`,
      });
    }
    const token = randomBytes(24).toString('base64url');
    tokens.set(token, { expiresAt: Date.now() + sim.tokenTtlSeconds * 1000, scopes: new Set(scopes) });
    send(res, 200, {
      access_token: token,
      token_type: 'Bearer',
      expires_in: sim.tokenTtlSeconds,
      scope: scopes.join(' '),
    });
  }

  /** The scopes of the request's bearer token, or null when it has none that is valid. */
  function authorised(req: http.IncomingMessage): Set<string> | null {
    const match = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '');
    const token = match?.[1] ? tokens.get(match[1]) : undefined;
    return token !== undefined && Date.now() < token.expiresAt ? token.scopes : null;
  }

  function putCob(txid: string, body: unknown, res: http.ServerResponse): void {
    const violations: Violation[] = [];
    if (!TXID.test(txid))
      violations.push({ propriedade: 'txid', razao: 'Must be 26 to 35 letters and digits.' });
    if (!isRecord(body)) return problem(res, 400, 'CobPayloadInvalido', 'Body is not a JSON object.');
    const calendario = isRecord(body.calendario) ? body.calendario : {};
    const expiracao = calendario.expiracao;
    if (!Number.isInteger(expiracao) || (expiracao as number) <= 0) {
      violations.push({ propriedade: 'cob.calendario.expiracao', razao: 'Must be an integer above 0.' });
    }
    const valor = isRecord(body.valor) ? body.valor : {};
    const original = valor.original;
    if (typeof original !== 'string' || !VALOR.test(original) || /^0+\.00$/.test(original)) {
      violations.push({
        propriedade: 'cob.valor.original',
        razao: 'Must match ^\\d{1,10}\\.\\d{2}$, above 0.',
      });
    }
    const chave = body.chave;
    if (typeof chave !== 'string' || chave.length === 0 || chave.length > 77) {
      violations.push({ propriedade: 'cob.chave', razao: 'Must be a Pix key of 1 to 77 characters.' });
    }
    let devedor: SimCob['devedor'];
    if (body.devedor !== undefined) {
      const d = isRecord(body.devedor) ? body.devedor : {};
      const cpf = typeof d.cpf === 'string' && /^\d{11}$/.test(d.cpf) ? d.cpf : undefined;
      const cnpj = typeof d.cnpj === 'string' && /^[0-9A-Z]{12}\d{2}$/.test(d.cnpj) ? d.cnpj : undefined;
      // JSON Schema's maxLength counts code points; a lone surrogate is no text at all.
      const nome =
        typeof d.nome === 'string' && isText(d.nome) && codePoints(d.nome) > 0 && codePoints(d.nome) <= 200
          ? d.nome
          : undefined;
      if (!nome || (cpf === undefined) === (cnpj === undefined) || Object.keys(d).length !== 2) {
        violations.push({
          propriedade: 'cob.devedor',
          razao: 'Must have nome and exactly one of cpf or cnpj.',
        });
      } else {
        devedor = cpf ? { cpf, nome } : { cnpj: cnpj as string, nome };
      }
    }
    const solicitacao = body.solicitacaoPagador;
    if (
      solicitacao !== undefined &&
      (typeof solicitacao !== 'string' || !isText(solicitacao) || codePoints(solicitacao) > 140)
    ) {
      violations.push({ propriedade: 'cob.solicitacaoPagador', razao: 'At most 140 characters.' });
    }
    if (violations.length > 0) {
      return problem(res, 400, 'CobPayloadInvalido', 'The charge does not follow the schema.', violations);
    }
    if (cobs.has(txid)) return problem(res, 400, 'CobOperacaoInvalida', 'A charge with this txid exists.');

    const location = `pix.sim.example/qr/v2/${randomUUID()}`;
    const criacao = new Date().toISOString();
    locations += 1;
    const cob: SimCob = {
      txid,
      revisao: 0,
      calendario: { criacao, expiracao: expiracao as number },
      status: 'ATIVA',
      valor: { original: original as string },
      chave: chave as string,
      ...(devedor ? { devedor } : {}),
      ...(typeof solicitacao === 'string' ? { solicitacaoPagador: solicitacao } : {}),
      loc: { id: locations, location, tipoCob: 'cob', criacao },
      location,
      pixCopiaECola: buildDynamicBrCode({
        location,
        amountCents: valorToCents(original as string),
        merchantName,
        merchantCity,
      }),
      pix: [],
    };
    cobs.set(txid, cob);
    const { pixCopiaECola, location: _location, ...rest } = cobView(cob);
    if (sim.cobAnswer === 'code') return send(res, 201, { ...rest, location, pixCopiaECola });
    if (sim.cobAnswer === 'location') return send(res, 201, { ...rest, location });
    send(res, 201, rest);
  }

  function putRefund(e2eid: string, id: string, body: unknown, res: http.ServerResponse): void {
    const valor = isRecord(body) ? body.valor : undefined;
    if (!E2E_ID.test(e2eid)) {
      return problem(res, 400, 'PixDevolucaoInvalida', 'The e2eid is not an EndToEndId.', [
        { propriedade: 'e2eid', razao: 'Must be 32 letters and digits.' },
      ]);
    }
    if (!REFUND_ID.test(id) || typeof valor !== 'string' || !VALOR.test(valor) || valorToCents(valor) === 0) {
      return problem(
        res,
        400,
        'PixDevolucaoInvalida',
        'Needs an id of 1 to 35 letters and digits and a valor.',
        [{ propriedade: 'valor', razao: 'Must match ^\\d{1,10}\\.\\d{2}$, above 0.' }],
      );
    }
    const pix = payments.get(e2eid);
    if (!pix) return problem(res, 404, 'PixNaoEncontrado', 'No payment with this endToEndId.');
    const existing = pix.devolucoes.find((refund) => refund.id === id);
    if (existing) {
      if (existing.valor !== valor || sim.reusedRefundId === 'refuse') {
        return problem(res, 400, 'PixDevolucaoInvalida', 'This refund id was already used for this payment.');
      }
      return send(res, 200, refundView(existing));
    }
    const refunded = pix.devolucoes
      .filter((refund) => refund.status !== 'NAO_REALIZADO')
      .reduce((sum, refund) => sum + valorToCents(refund.valor), 0);
    if (refunded + valorToCents(valor) > valorToCents(pix.valor)) {
      return problem(res, 400, 'PixDevolucaoInvalida', 'The refunds would exceed the payment.');
    }
    const now = new Date();
    const refund: SimRefund = {
      endToEndId: e2eid,
      id,
      rtrId: stamp('D', now),
      valor,
      horario: { solicitacao: now.toISOString() },
      status: sim.refundStatus,
      ...(sim.refundStatus === 'NAO_REALIZADO' ? { motivo: 'Conta do pagador encerrada.' } : {}),
    };
    if (sim.refundStatus === 'DEVOLVIDO') refund.horario.liquidacao = now.toISOString();
    pix.devolucoes.push(refund);
    refunds.push(refund);
    send(res, 201, refundView(refund));
  }

  async function route(req: http.IncomingMessage, body: string, res: http.ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'http://sim').pathname;
    const method = req.method ?? '';
    if (path === '/oauth/token') {
      if (method !== 'POST') return problem(res, 405, 'RequisicaoInvalida', 'Use POST.');
      return issueToken(req, body, res);
    }
    // The location and its key set are open (a payer's bank has no token) and no injected fault hits them.
    const open = desk.open(method, path, new URL(req.url ?? '/', 'http://sim').searchParams);
    if (open) return answer(res, open);
    if (hangs > 0 && (hangMethod === null || method === hangMethod)) {
      hangs -= 1;
      return; // never answered; close() drops the connection
    }
    if (failures && failures.count > 0 && (failMethod === null || method === failMethod)) {
      failures.count -= 1;
      return problem(res, failures.status, 'ServicoIndisponivel', 'Injected failure.');
    }
    const scopes = authorised(req);
    if (!scopes) return problem(res, 401, 'AcessoNegado', 'Missing, invalid or expired token.');
    // The scope each operation needs in API Pix 2.9.0 (security: OAuth2).
    const needs = (scope: string) =>
      scopes.has(scope) ? false : (problem(res, 403, 'AcessoNegado', `The token lacks ${scope}.`), true);

    let json: unknown = undefined;
    if (method === 'PUT' || method === 'PATCH') {
      try {
        json = JSON.parse(body);
      } catch {
        return problem(res, 400, 'RequisicaoInvalida', 'Body is not JSON.');
      }
    }
    const cob = /^\/cob\/([^/]+)$/.exec(path);
    if (cob?.[1]) {
      const txid = decodeURIComponent(cob[1]);
      if (method === 'PUT') return needs('cob.write') ? undefined : putCob(txid, json, res);
      if (method === 'GET') {
        if (needs('cob.read')) return;
        const found = cobs.get(txid);
        return found
          ? send(res, 200, cobView(found))
          : problem(res, 404, 'CobNaoEncontrado', 'No such charge.');
      }
    }
    if (path.startsWith('/cobv/')) {
      if (needs(method === 'GET' ? 'cobv.read' : 'cobv.write')) return;
      const done = desk.api(method, path, json);
      if (done) return answer(res, done);
    }
    const refund = /^\/pix\/([^/]+)\/devolucao\/([^/]+)$/.exec(path);
    if (refund?.[1] && refund[2] && method === 'PUT') {
      if (needs('pix.write')) return;
      return putRefund(decodeURIComponent(refund[1]), decodeURIComponent(refund[2]), json, res);
    }
    if (refund?.[1] && refund[2] && method === 'GET') {
      if (needs('pix.read')) return;
      const [e2eid, id] = [decodeURIComponent(refund[1]), decodeURIComponent(refund[2])];
      const found = payments.get(e2eid)?.devolucoes.find((r) => r.id === id);
      return found
        ? send(res, 200, refundView(found))
        : problem(res, 404, 'NaoEncontrado', 'No refund with this id for this endToEndId.');
    }
    const received = /^\/pix\/([A-Za-z0-9]+)$/.exec(path);
    if (received?.[1] && method === 'GET') {
      if (needs('pix.read')) return;
      const found = payments.get(received[1]);
      return found ? send(res, 200, pixView(found)) : problem(res, 404, 'NaoEncontrado', 'No such Pix.');
    }
    problem(res, 404, 'NaoEncontrado', `No route ${method} ${path}.`);
  }

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      requests.push({ method: req.method ?? '', path: req.url ?? '/', headers: req.headers, body });
      // A lost answer: the call is carried out, then the connection drops before any byte is sent.
      const lose =
        req.url !== '/oauth/token' &&
        (lostMethod === null || req.method === lostMethod) &&
        lostAnswers > 0 &&
        (lostAnswers -= 1) >= 0;
      const answer = lose
        ? ({ writeHead: () => ({ end: () => req.socket.destroy() }) } as unknown as http.ServerResponse)
        : res;
      route(req, body, answer).catch((err: Error) =>
        problem(answer, 500, 'ErroInternoDoServidor', err.message),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const desk: CobvDesk = cobvDesk({
    url,
    merchantName,
    merchantCity,
    nextLocationId: () => (locations += 1),
    endToEndId: (at) => stamp('E', at),
    recordPayment: (pix) => payments.set(pix.endToEndId, pix),
  });

  async function deliver(
    webhookUrl: string,
    { secret, tls }: { secret: string | null; tls?: PspClientTls },
    payload: unknown,
  ): Promise<NotificationDelivery> {
    const target = `${webhookUrl.replace(/\/+$/, '')}/pix`;
    let status = 0;
    let text: string;
    const headers = {
      'content-type': 'application/json',
      ...(secret === null ? {} : pspNotificationHeaders(secret)),
    };
    try {
      if (tls) ({ status, text } = await postMutualTls(target, tls, headers, JSON.stringify(payload)));
      else {
        const res = await fetch(target, {
          method: 'POST',
          headers,
          body: JSON.stringify(payload),
          signal: AbortSignal.timeout(10_000),
        });
        status = res.status;
        text = await res.text();
      }
    } catch (err) {
      text = (err as Error).message;
    }
    const delivery = { url: target, payload, status, body: text };
    notifications.push(delivery);
    return delivery;
  }

  const simulator: PspSimulator = {
    url,
    clientId: options.clientId,
    clientSecret: options.clientSecret,
    tokenUrl: `${url}/oauth/token`,
    get tokenRequests() {
      return tokenRequests;
    },
    get tokenTtlSeconds() {
      return sim.tokenTtlSeconds;
    },
    set tokenTtlSeconds(value: number) {
      sim.tokenTtlSeconds = value;
    },
    get refundStatus() {
      return sim.refundStatus;
    },
    set refundStatus(value: SimRefundStatus) {
      sim.refundStatus = value;
    },
    get reusedRefundId() {
      return sim.reusedRefundId;
    },
    set reusedRefundId(value: 'refuse' | 'replay') {
      sim.reusedRefundId = value;
    },
    get cobAnswer() {
      return sim.cobAnswer;
    },
    set cobAnswer(value: SimCobAnswer) {
      sim.cobAnswer = value;
    },
    settleRefund(id, status, motivo, endToEndId) {
      const found = refunds.filter(
        (r) => r.id === id && (endToEndId === undefined || r.endToEndId === endToEndId),
      );
      if (found.length !== 1) throw new Error(`psp-simulator: ${found.length} refunds with id ${id}`);
      const refund = found[0] as SimRefund;
      if (refund.status !== 'EM_PROCESSAMENTO') {
        throw new Error(`psp-simulator: refund ${id} is ${refund.status}`);
      }
      refund.status = status;
      if (status === 'DEVOLVIDO') refund.horario.liquidacao = new Date().toISOString();
      else refund.motivo = motivo ?? 'Conta do pagador encerrada.';
      return refund;
    },
    notifyRefunds(endToEndIds, notifyOptions) {
      const pix = endToEndIds.map((endToEndId) => {
        const found = payments.get(endToEndId);
        if (!found) throw new Error(`psp-simulator: no payment ${endToEndId}`);
        const chosen = found.devolucoes.filter(
          (r) => notifyOptions.refundIds === undefined || notifyOptions.refundIds.includes(r.id),
        );
        return { ...pixView(found), devolucoes: chosen.map(refundView) };
      });
      return deliver(notifyOptions.webhookUrl, notifyOptions, { pix });
    },
    cobs,
    refunds,
    requests,
    notifications,
    revokeTokens() {
      tokens.clear();
    },
    failNext(status, count = 1, method?: string) {
      failures = { status, count };
      failMethod = method ?? null;
    },
    loseAnswerNext(count = 1, method?: string) {
      lostAnswers = count;
      lostMethod = method ?? null;
    },
    hangNext(count = 1, method?: string) {
      hangs = count;
      hangMethod = method ?? null;
    },
    newEndToEndId(at = new Date()) {
      return stamp('E', at);
    },
    async pay(txid, payOptions) {
      const cob = cobs.get(txid);
      if (!cob) throw new Error(`psp-simulator: no charge with txid ${txid}`);
      if (cob.status !== 'ATIVA') throw new Error(`psp-simulator: charge ${txid} is ${cob.status}`);
      const horario = payOptions.horario ?? new Date();
      const pix: SimPix = {
        endToEndId: payOptions.endToEndId ?? stamp('E', horario),
        txid,
        valor: payOptions.amount === undefined ? cob.valor.original : centsToValor(payOptions.amount),
        horario: horario.toISOString(),
        devolucoes: [],
      };
      cob.status = 'CONCLUIDA';
      cob.pix.push(pix);
      payments.set(pix.endToEndId, pix);
      const { devolucoes: _none, ...item } = pix;
      const payload: PspPixNotification = { pix: [item] };
      const delivery = await deliver(payOptions.webhookUrl, payOptions, payload);
      return { ...delivery, endToEndId: pix.endToEndId, pix };
    },
    cobvs: desk.cobvs,
    get locationKeyIds() {
      return desk.kids;
    },
    rotateLocationKey() {
      desk.rotateKey();
    },
    async payCobv(txid, payOptions) {
      const pix = desk.pay(txid, payOptions);
      const { devolucoes: _none, ...item } = pix;
      const delivery = await deliver(payOptions.webhookUrl, payOptions, { pix: [item] });
      return { ...delivery, endToEndId: pix.endToEndId, pix };
    },
    notify(payload, notifyOptions) {
      return deliver(notifyOptions.webhookUrl, notifyOptions, payload);
    },
    close() {
      return new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      });
    },
  };
  return simulator;
}

/** One POST over mutual TLS: the PSP's certificate, our ingress's CA, server name and Host `tls.host`. */
function postMutualTls(
  target: string,
  tls: PspClientTls,
  headers: Record<string, string>,
  body: string,
): Promise<{ status: number; text: string }> {
  const url = new URL(target);
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname + url.search,
        method: 'POST',
        servername: tls.host,
        ca: tls.ca,
        cert: tls.cert,
        key: tls.key,
        headers: { ...headers, host: tls.host },
        timeout: 10_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
        );
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end(body);
  });
}

interface Violation {
  propriedade: string;
  razao: string;
}

/** A refund as API Pix shows it (`Devolucao`: the payment's end-to-end id is in the path). */
function refundView(refund: SimRefund): Omit<SimRefund, 'endToEndId'> {
  const { endToEndId: _path, horario, ...rest } = refund;
  return { ...rest, horario: { ...horario } };
}

/** A payment as API Pix shows it (`Pix`), its refunds only when it has some. */
function pixView(pix: SimPix): Omit<SimPix, 'devolucoes'> & { devolucoes?: Omit<SimRefund, 'endToEndId'>[] } {
  const { devolucoes, ...rest } = pix;
  return devolucoes.length === 0 ? rest : { ...rest, devolucoes: devolucoes.map(refundView) };
}

function cobView(cob: SimCob): Omit<SimCob, 'pix'> & { pix?: Omit<SimPix, 'devolucoes'>[] } {
  const { pix, ...rest } = cob;
  return pix.length === 0 ? rest : { ...rest, pix: pix.map(({ devolucoes: _d, ...item }) => item) };
}

function answer(res: http.ServerResponse, desk: DeskAnswer): void {
  if ('jws' in desk) return void res.writeHead(200, { 'content-type': 'application/jose' }).end(desk.jws);
  if ('problem' in desk) return problem(res, desk.status, desk.problem, desk.detail, desk.violacoes);
  send(res, desk.status, desk.body);
}

function send(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

function problem(
  res: http.ServerResponse,
  status: number,
  type: string,
  detail: string,
  violacoes?: Violation[],
): void {
  res.writeHead(status, { 'content-type': 'application/problem+json' }).end(
    JSON.stringify({
      type: PROBLEM_BASE + type,
      title: type,
      status,
      detail,
      ...(violacoes ? { violacoes } : {}),
    }),
  );
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function codePoints(text: string): number {
  return [...text].length;
}

/** Well-formed UTF-16: no half of a surrogate pair alone. */
function isText(text: string): boolean {
  return !/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text);
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

function randomAlnum(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte >= 248) continue; // 248 = 62 * 4: no modulo bias
      out += ALNUM[byte % ALNUM.length];
      if (out.length === length) break;
    }
  }
  return out;
}

function valorToCents(valor: string): number {
  const [whole = '0', fraction = '00'] = valor.split('.');
  return Number(whole) * 100 + Number(fraction);
}

function centsToValor(cents: number): string {
  if (!Number.isSafeInteger(cents) || cents < 0)
    throw new Error(`amount must be integer cents, got ${cents}`);
  const rest = cents % 100;
  return `${(cents - rest) / 100}.${String(rest).padStart(2, '0')}`;
}

/**
 * The payments variables that make `sim` the PSP (`bacen-api-pix`) of `environment`: the live group
 * (`PSP_`, `PIX_KEY`) or the homologation one (`PSP_TEST_`, `PIX_KEY_TEST`), with its credentials and
 * the secret its notifications carry.
 */
export function apiPixPspEnv(
  sim: Pick<PspSimulator, 'url' | 'clientId' | 'clientSecret'>,
  environment: 'live' | 'test',
  options: { webhookSecret: string; pixKey: string },
): Record<string, string> {
  const prefix = environment === 'live' ? 'PSP_' : 'PSP_TEST_';
  return {
    [environment === 'live' ? 'PIX_PSP' : 'PIX_PSP_TEST']: 'bacen-api-pix',
    [`${prefix}API_URL`]: sim.url,
    [`${prefix}CLIENT_ID`]: sim.clientId,
    [`${prefix}CLIENT_SECRET`]: sim.clientSecret,
    [`${prefix}WEBHOOK_SECRET`]: options.webhookSecret,
    [environment === 'live' ? 'PIX_KEY' : 'PIX_KEY_TEST']: options.pixKey,
  };
}
