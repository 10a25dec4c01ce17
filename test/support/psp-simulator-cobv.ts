import { createPrivateKey, generateKeyPairSync, randomUUID, sign, type KeyObject } from 'node:crypto';
import {
  amountDue,
  brazilCalendar,
  calendarPlaceProblem,
  dayNumber,
  fromCobvCalendario,
  fromCobvValor,
  isIsoDate,
  isTierDiscount,
  todayInSaoPaulo,
  toCobvDecimal,
  toCobvPayloadValor,
  type AmountDue,
  type CobvValor,
  type DueDateTerms,
  type IsoDate,
} from '@seller-api/due-date';
import { buildDynamicBrCode } from '../../services/payments/src/domain/brcode';
import type { SimPix } from './psp-simulator';

/*
 * The due-date charges (API Pix `cobv`) of test/support/psp-simulator.ts, which routes to this desk:
 *
 *   PUT   /cobv/:txid              create (cobv.write): the spec's checks, a 400 problem with every
 *                                  violation; the same body again answers the same charge, another
 *                                  body revises an ATIVA one (revisao + 1, same location)
 *   PATCH /cobv/:txid              {status: REMOVIDA_PELO_USUARIO_RECEBEDOR} alone, while ATIVA
 *   GET   /cobv/:txid              the charge, with `pix[]` and `componentesValor` once paid (cobv.read)
 *   GET   /qr/v2/cobv/:token       the location, open as a payer's bank fetches it (?DPP=&codMun=): a
 *                                  JWS (RS256, header kid + jku) of the CobVPayload with the amounts
 *                                  of that day from @seller-api/due-date's amountDue; 400 outside the
 *                                  payable window or before today, 410 once removed or paid
 *   GET   /qr/v2/jwks              the key set that signs locations (an RSA key made at start)
 *
 * payCobv() pays as the payer's bank would on a date: only the final amount of that day is accepted.
 */

const TXID = /^[A-Za-z0-9]{26,35}$/;
const VALOR = /^\d{1,10}\.\d{2}$/;
const REMOVED = 'REMOVIDA_PELO_USUARIO_RECEBEDOR';
/** The receiver the simulated PSP writes into each charge (CobVGerada needs one). */
const RECEBEDOR = {
  cnpj: '56989000019533',
  nome: 'SELLER API LTDA',
  logradouro: 'Avenida Paulista, 1000',
  cidade: 'Sao Paulo',
  uf: 'SP',
  cep: '01310100',
};

export type SimCobvStatus = 'ATIVA' | 'CONCLUIDA' | typeof REMOVED | 'REMOVIDA_PELO_PSP';

export interface SimCobv {
  txid: string;
  revisao: number;
  calendario: { criacao: string; dataDeVencimento: IsoDate; validadeAposVencimento: number };
  status: SimCobvStatus;
  devedor: Record<string, string>;
  valor: CobvValor;
  chave: string;
  solicitacaoPagador?: string;
  loc: { id: number; location: string; tipoCob: 'cobv'; criacao: string; txid: string };
  location: string;
  pixCopiaECola: string;
  pix: SimPix[];
  /** The request body that made the current revision (a repeat of it is the same charge). */
  request: string;
  /** Our terms read back from the request (what amountDue takes). */
  amount: number;
  terms: DueDateTerms;
}

export interface CobvDeskDeps {
  /** http://127.0.0.1:<port>: locations are on the simulator's own host. */
  url: string;
  merchantName: string;
  merchantCity: string;
  /** A location id, shared with the immediate charges. */
  nextLocationId(): number;
  /** A new end-to-end id settled at `at`. */
  endToEndId(at: Date): string;
  /** Records a payment so its refunds go through the simulator's /pix routes. */
  recordPayment(pix: SimPix): void;
}

export interface Violation {
  propriedade: string;
  razao: string;
}

/** How a route answers: status and JSON, a problem, or a JWS. */
export type DeskAnswer =
  | { status: number; body: unknown }
  | { status: number; problem: string; detail: string; violacoes?: Violation[] }
  | { status: 200; jws: string };

export interface PayCobvOptions {
  /** The day paid (São Paulo); today by default. */
  date?: IsoDate;
  /** Cents paid; the final amount of that day by default. Any other is refused. */
  amount?: number;
  /** The payer's municipality (IBGE), whose holidays count. */
  municipality?: string;
  endToEndId?: string;
}

/** A payment the simulated PSP refuses (not payable that day, or not the amount of that day). */
export class CobvPaymentRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CobvPaymentRefused';
  }
}

export interface CobvDesk {
  cobvs: Map<string, SimCobv>;
  /** The ids of the published keys, the current signing key first. */
  readonly kids: string[];
  /** A new signing key; the old one is no longer published (its signatures stop verifying). */
  rotateKey(): void;
  /** The API routes (bearer checked by the caller); null when the path is not one of them. */
  api(method: string, path: string, json: unknown): DeskAnswer | null;
  /** The open routes: location and key set; null when the path is not one of them. */
  open(method: string, path: string, query: URLSearchParams): DeskAnswer | null;
  /** The payment a payer's bank would make on a date; the charge becomes CONCLUIDA. */
  pay(txid: string, options: PayCobvOptions): SimPix;
  /** What the location says is owed that day, as the simulator computes it. */
  amountDue(txid: string, date: IsoDate, municipality?: string): AmountDue;
}

export function cobvDesk(deps: CobvDeskDeps): CobvDesk {
  const cobvs = new Map<string, SimCobv>();
  const byToken = new Map<string, SimCobv>();
  let keys = [newKey()];
  const host = new URL(deps.url).host;

  function newKey(): { kid: string; privateKey: KeyObject; jwk: Record<string, unknown> } {
    const { publicKey, privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const kid = `sim-${randomUUID()}`;
    return {
      kid,
      privateKey: createPrivateKey(privateKey.export({ format: 'pem', type: 'pkcs8' })),
      jwk: { ...publicKey.export({ format: 'jwk' }), kid, use: 'sig', alg: 'RS256' },
    };
  }

  function signJws(payload: unknown): string {
    const key = keys[0] as (typeof keys)[number];
    const header = { alg: 'RS256', typ: 'JWS', kid: key.kid, jku: `${deps.url}/qr/v2/jwks` };
    const input = `${b64(header)}.${b64(payload)}`;
    const signature = sign('RSA-SHA256', Buffer.from(input, 'ascii'), key.privateKey).toString('base64url');
    return `${input}.${signature}`;
  }

  function calendarFor(municipality: string | undefined) {
    return brazilCalendar(municipality === undefined ? {} : { municipality });
  }

  function due(cobv: SimCobv, date: IsoDate, municipality?: string): AmountDue {
    return amountDue(cobv.amount, cobv.terms, date, calendarFor(municipality));
  }

  function put(txid: string, body: unknown): DeskAnswer {
    const violations: Violation[] = [];
    if (!TXID.test(txid))
      violations.push({ propriedade: 'txid', razao: 'Must be 26 to 35 letters and digits.' });
    if (!isRecord(body)) return invalid('Body is not a JSON object.');
    const checked = checkCobv(body, violations);
    if (violations.length > 0 || !checked)
      return invalid('The charge does not follow the schema.', violations);
    const existing = cobvs.get(txid);
    const request = JSON.stringify(body);
    if (existing) {
      if (existing.status !== 'ATIVA') return invalid('The charge exists and is not ATIVA.');
      if (existing.request !== request) {
        Object.assign(existing, checked, { request, revisao: existing.revisao + 1 });
        existing.pixCopiaECola = code(existing.location);
      }
      return { status: 201, body: view(existing) };
    }
    const criacao = new Date().toISOString();
    const token = randomUUID().replace(/-/g, '');
    const location = `${host}/qr/v2/cobv/${token}`;
    const cobv: SimCobv = {
      ...checked,
      txid,
      revisao: 0,
      calendario: { ...checked.calendario, criacao },
      status: 'ATIVA',
      loc: { id: deps.nextLocationId(), location, tipoCob: 'cobv', criacao, txid },
      location,
      pixCopiaECola: code(location),
      pix: [],
      request,
    };
    cobvs.set(txid, cobv);
    byToken.set(token, cobv);
    return { status: 201, body: view(cobv) };
  }

  function code(location: string): string {
    // No amount: the payer's bank reads the day's amount from the location.
    return buildDynamicBrCode({ location, merchantName: deps.merchantName, merchantCity: deps.merchantCity });
  }

  function patch(txid: string, body: unknown): DeskAnswer {
    const cobv = cobvs.get(txid);
    if (!cobv) return { status: 404, problem: 'CobVNaoEncontrada', detail: 'No such due-date charge.' };
    if (!isRecord(body)) return invalid('Body is not a JSON object.');
    if (body.status !== REMOVED || Object.keys(body).length !== 1) {
      return invalid('The simulator takes only {status: REMOVIDA_PELO_USUARIO_RECEBEDOR}, alone.', [
        {
          propriedade: 'cobv.status',
          razao: 'Must be REMOVIDA_PELO_USUARIO_RECEBEDOR, with no other change.',
        },
      ]);
    }
    if (cobv.status !== 'ATIVA') return invalid(`The charge is ${cobv.status}, not ATIVA.`);
    cobv.status = REMOVED;
    cobv.revisao += 1;
    return { status: 200, body: view(cobv) };
  }

  function location(token: string, query: URLSearchParams): DeskAnswer {
    const cobv = byToken.get(token);
    if (!cobv)
      return { status: 404, problem: 'CobPayloadNaoEncontrado', detail: 'No charge at this location.' };
    if (cobv.status !== 'ATIVA') {
      return { status: 410, problem: 'CobPayloadNaoEncontrado', detail: `The charge is ${cobv.status}.` };
    }
    const today = todayInSaoPaulo();
    const date = query.get('DPP') ?? today;
    const municipality = query.get('codMun') ?? undefined;
    const refuse = (detail: string, propriedade: string) => ({
      status: 400,
      problem: 'CobPayloadOperacaoInvalida',
      detail,
      violacoes: [{ propriedade, razao: detail }],
    });
    if (!isIsoDate(date)) return refuse('DPP is not a YYYY-MM-DD date.', 'DPP');
    if (dayNumber(date) < dayNumber(today)) return refuse('DPP is before today.', 'DPP');
    if (municipality !== undefined) {
      const problem = /^\d{7}$/.test(municipality) ? calendarPlaceProblem({ municipality }) : 'not 7 digits';
      if (problem) return refuse(`codMun: ${problem}.`, 'codMun');
    }
    const owed = due(cobv, date, municipality);
    const valor = toCobvPayloadValor(owed);
    if (!valor) return refuse(`DPP is after the last payable date ${owed.last_payable_date}.`, 'DPP');
    const {
      pix: _pix,
      request: _r,
      amount: _a,
      terms: _t,
      loc: _l,
      location: _o,
      pixCopiaECola: _c,
      ...rest
    } = cobv;
    return {
      status: 200,
      jws: signJws({
        ...rest,
        calendario: { ...cobv.calendario, apresentacao: new Date().toISOString() },
        recebedor: RECEBEDOR,
        valor,
      }),
    };
  }

  return {
    cobvs,
    get kids() {
      return keys.map((key) => key.kid);
    },
    rotateKey() {
      keys = [newKey()];
    },
    api(method, path, json) {
      const match = /^\/cobv\/([^/]+)$/.exec(path);
      if (!match?.[1]) return null;
      const txid = decodeURIComponent(match[1]);
      if (method === 'PUT') return put(txid, json);
      if (method === 'PATCH') return patch(txid, json);
      if (method === 'GET') {
        const cobv = cobvs.get(txid);
        return cobv
          ? { status: 200, body: view(cobv) }
          : { status: 404, problem: 'CobVNaoEncontrada', detail: 'No such due-date charge.' };
      }
      return null;
    },
    open(method, path, query) {
      if (method !== 'GET') return null;
      if (path === '/qr/v2/jwks') return { status: 200, body: { keys: keys.map((key) => key.jwk) } };
      const match = /^\/qr\/v2\/cobv\/([A-Za-z0-9]+)$/.exec(path);
      return match?.[1] ? location(match[1], query) : null;
    },
    pay(txid, options) {
      const cobv = cobvs.get(txid);
      if (!cobv) throw new Error(`psp-simulator: no due-date charge with txid ${txid}`);
      if (cobv.status !== 'ATIVA') throw new CobvPaymentRefused(`The charge is ${cobv.status}`);
      const today = todayInSaoPaulo();
      const date = options.date ?? today;
      const owed = due(cobv, date, options.municipality);
      if (!owed.payable) {
        throw new CobvPaymentRefused(
          `Not payable on ${date}: the last payable date is ${owed.last_payable_date}`,
        );
      }
      if (options.amount !== undefined && options.amount !== owed.final) {
        throw new CobvPaymentRefused(
          `On ${date} the charge is ${toCobvDecimal(owed.final)}, not ${toCobvDecimal(options.amount)}`,
        );
      }
      // Today: now; another day: noon in São Paulo (15:00 UTC), as if paid then.
      const horario = date === today ? new Date() : new Date(`${date}T15:00:00.000Z`);
      const parts = owed.components;
      const componentesValor: Record<string, { valor: string }> = {
        original: { valor: toCobvDecimal(parts.original) },
      };
      const extra = {
        multa: parts.fine,
        juros: parts.interest,
        abatimento: parts.rebate,
        desconto: parts.discount,
      };
      for (const [name, cents] of Object.entries(extra)) {
        if (cents > 0) componentesValor[name] = { valor: toCobvDecimal(cents) };
      }
      const pix: SimPix = {
        endToEndId: options.endToEndId ?? deps.endToEndId(horario),
        txid,
        valor: toCobvDecimal(owed.final),
        horario: horario.toISOString(),
        componentesValor,
        devolucoes: [],
      };
      cobv.status = 'CONCLUIDA';
      cobv.pix.push(pix);
      deps.recordPayment(pix);
      return pix;
    },
    amountDue(txid, date, municipality) {
      const cobv = cobvs.get(txid);
      if (!cobv) throw new Error(`psp-simulator: no due-date charge with txid ${txid}`);
      return due(cobv, date, municipality);
    },
  };
}

type Checked = Pick<SimCobv, 'devedor' | 'valor' | 'chave' | 'amount' | 'terms'> & {
  calendario: Omit<SimCobv['calendario'], 'criacao'>;
  solicitacaoPagador?: string;
};

/** The spec's rules for a `cobv` request body; violations pushed, the charge's parts when none. */
function checkCobv(body: Record<string, unknown>, violations: Violation[]): Checked | null {
  const before = violations.length;
  const calendario = isRecord(body.calendario) ? body.calendario : {};
  const dueDate = calendario.dataDeVencimento;
  if (!isIsoDate(dueDate) || dayNumber(dueDate) < dayNumber(todayInSaoPaulo())) {
    violations.push({
      propriedade: 'cobv.calendario.dataDeVencimento',
      razao: 'Must be a YYYY-MM-DD date, not before today.',
    });
  }
  const after = calendario.validadeAposVencimento ?? 30;
  // The spec takes any integer >= 0; amountDue (and so the simulator) counts up to 365.
  if (!Number.isInteger(after) || (after as number) < 0 || (after as number) > 365) {
    violations.push({
      propriedade: 'cobv.calendario.validadeAposVencimento',
      razao: 'Must be an integer from 0 to 365.',
    });
  }
  const devedor = isRecord(body.devedor) ? body.devedor : {};
  const nome = devedor.nome;
  const cpf = typeof devedor.cpf === 'string' && /^\d{11}$/.test(devedor.cpf);
  const cnpj = typeof devedor.cnpj === 'string' && /^[0-9A-Z]{12}\d{2}$/.test(devedor.cnpj);
  if (typeof nome !== 'string' || [...nome].length < 1 || [...nome].length > 200 || cpf === cnpj) {
    violations.push({ propriedade: 'cobv.devedor', razao: 'Must have nome and exactly one of cpf or cnpj.' });
  }
  const chave = body.chave;
  if (typeof chave !== 'string' || chave.length === 0 || chave.length > 77) {
    violations.push({ propriedade: 'cobv.chave', razao: 'Must be a Pix key of 1 to 77 characters.' });
  }
  const solicitacao = body.solicitacaoPagador;
  if (solicitacao !== undefined && (typeof solicitacao !== 'string' || [...solicitacao].length > 140)) {
    violations.push({ propriedade: 'cobv.solicitacaoPagador', razao: 'At most 140 characters.' });
  }
  const valor = isRecord(body.valor) ? body.valor : {};
  if (typeof valor.original !== 'string' || !VALOR.test(valor.original) || /^0+\.00$/.test(valor.original)) {
    violations.push({
      propriedade: 'cobv.valor.original',
      razao: 'Must match ^\\d{1,10}\\.\\d{2}$, above 0.',
    });
    return null;
  }
  let read: ReturnType<typeof fromCobvValor>;
  try {
    read = fromCobvValor(valor as CobvValor);
  } catch (err) {
    violations.push({ propriedade: 'cobv.valor', razao: (err as Error).message });
    return null;
  }
  const amount = read.amount;
  const below = (value: { type: string; amount?: number; rate?: number } | undefined, name: string) => {
    if (
      value &&
      (value.type === 'fixed' ? (value.amount as number) >= amount : (value.rate as number) >= 10_000)
    )
      violations.push({ propriedade: `cobv.valor.${name}`, razao: 'Must be below the amount.' });
  };
  below(read.rebate, 'abatimento');
  const discount = read.discount;
  if (discount && isTierDiscount(discount)) {
    discount.tiers.forEach((tier, i) => {
      const previous = discount.tiers[i - 1];
      if (isIsoDate(dueDate) && dayNumber(tier.until) > dayNumber(dueDate))
        violations.push({ propriedade: 'cobv.valor.desconto', razao: 'A date is after the due date.' });
      if (previous && dayNumber(tier.until) <= dayNumber(previous.until))
        violations.push({ propriedade: 'cobv.valor.desconto', razao: 'Dates must be strictly increasing.' });
      if (tier.value >= (discount.type === 'fixed_until' ? amount : 10_000))
        violations.push({
          propriedade: 'cobv.valor.desconto',
          razao: 'Each discount must be below the amount.',
        });
    });
  }
  if (violations.length > before || !isIsoDate(dueDate)) return null;
  const terms: DueDateTerms = {
    ...fromCobvCalendario({ dataDeVencimento: dueDate, validadeAposVencimento: after as number }),
    ...read,
  };
  const { amount: _amount, ...rest } = read;
  return {
    calendario: { dataDeVencimento: dueDate, validadeAposVencimento: after as number },
    devedor: devedor as Record<string, string>,
    valor: valor as CobvValor,
    chave: chave as string,
    ...(typeof solicitacao === 'string' ? { solicitacaoPagador: solicitacao } : {}),
    amount,
    terms: { ...terms, ...rest },
  };
}

/** A charge as API Pix shows it (`CobVCompleta`); `pix[]` only once paid. */
function view(cobv: SimCobv): Record<string, unknown> {
  const { pix, request: _r, amount: _a, terms: _t, ...rest } = cobv;
  return {
    ...rest,
    recebedor: RECEBEDOR,
    ...(pix.length === 0 ? {} : { pix: pix.map(({ devolucoes: _d, ...item }) => item) }),
  };
}

function invalid(detail: string, violacoes?: Violation[]): DeskAnswer {
  return { status: 400, problem: 'CobVOperacaoInvalida', detail, ...(violacoes ? { violacoes } : {}) };
}

function b64(value: unknown): string {
  return Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
