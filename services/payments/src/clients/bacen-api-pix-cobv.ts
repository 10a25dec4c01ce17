import { clip, cutCodePoints, refusal, type ApiPixClient } from '@seller-api/api-pix';
import {
  fromCobvCalendario,
  fromCobvComponentesValor,
  fromCobvDecimal,
  fromCobvValor,
  toCobvCalendario,
  toCobvValor,
  type AmountComponents,
  type DueDateTerms,
} from '@seller-api/due-date';
import { z } from 'zod';
import { checkDueDateBrCode, dueDateBrCodeOf } from '../domain/cobv-brcode';
import { immediateComponents, totalOf } from '../domain/due-date-payments';
import { ComponentesValor } from '../domain/psp-notifications';
import { PspError } from '../domain/psp';

/*
 * Due-date charges (API Pix `cobv`, docs/payments.md "Due-date charges at the PSP") over the same
 * authorised client as the immediate charges of bacen-api-pix.ts:
 *
 *   PUT   {apiUrl}/cobv/{txid}   create, our txid; the answer's pixCopiaECola is the BR Code
 *   PATCH {apiUrl}/cobv/{txid}   {status: REMOVIDA_PELO_USUARIO_RECEBEDOR}: cancel
 *   GET   {apiUrl}/cobv/{txid}   status, revisao and the Pix received with their components
 *
 * The BR Code of a due-date charge is always the PSP's dynamic one: its location, never an amount,
 * since what is owed depends on the day the payer's bank fetches the location (location-payload.ts).
 */

/** The OAuth2 scopes of due-date charges. */
export const API_PIX_DUE_DATE_SCOPES = ['cobv.write', 'cobv.read'] as const;

export interface DueDateChargeInput {
  /** Ours, 26 to 35 letters and digits. */
  txid: string;
  amountCents: number;
  terms: DueDateTerms;
  debtorName: string;
  /** CPF (11 digits) or CNPJ (14, alphanumeric ones too), punctuation allowed. */
  debtorDocument: string;
  /** Free text for the payer (`solicitacaoPagador`), cut to 140 characters. */
  description?: string | null;
}

export interface DueDateCharge {
  /** The PSP's dynamic BR Code (`pixCopiaECola`). */
  copyAndPaste: string;
  /** The location in it, without a scheme. */
  location: string;
  revision: number;
}

export type DueDateChargeStatus = 'ACTIVE' | 'PAID' | 'REMOVED_BY_RECEIVER' | 'REMOVED_BY_PSP';

export interface DueDateChargePayment {
  endToEndId: string;
  amountCents: number;
  paidAt: string;
  /** What the amount is made of, from `componentesValor` (zero for a part the PSP left out). */
  components: AmountComponents;
}

export interface DueDateChargeState {
  txid: string;
  status: DueDateChargeStatus;
  revision: number;
  location: string | null;
  amountCents: number;
  terms: DueDateTerms;
  payments: DueDateChargePayment[];
}

export interface DueDateCharges {
  create(input: DueDateChargeInput): Promise<DueDateCharge>;
  /**
   * Removes an active charge. Already removed is fine (a retry). A paid charge cannot be removed: a
   * PspError with `code: 'PAID'`, not retryable, so the caller records the payment instead.
   */
  cancel(txid: string): Promise<DueDateChargeState>;
  /** The charge as the PSP has it; null when it has none with that txid. */
  read(txid: string): Promise<DueDateChargeState | null>;
}

/** A due-date charge the PSP will not remove because it was paid. */
export class DueDateChargePaidError extends PspError {
  readonly code = 'PAID';
  constructor(txid: string) {
    super(`Due-date charge ${txid} is paid (CONCLUIDA) at the PSP and cannot be removed`, {
      retryable: false,
      status: null,
    });
    this.name = 'DueDateChargePaidError';
  }
}

const TXID = /^[A-Za-z0-9]{26,35}$/;
const MAX_DEBTOR_NAME = 200;
const MAX_PAYER_REQUEST = 140;
const REMOVED = 'REMOVIDA_PELO_USUARIO_RECEBEDOR';
const STATUS: Record<string, DueDateChargeStatus> = {
  ATIVA: 'ACTIVE',
  CONCLUIDA: 'PAID',
  REMOVIDA_PELO_USUARIO_RECEBEDOR: 'REMOVED_BY_RECEIVER',
  REMOVIDA_PELO_PSP: 'REMOVED_BY_PSP',
};

const Money = z.string().regex(/^\d{1,10}\.\d{2}$/);
const ModalityValue = z.looseObject({ modalidade: z.number().int(), valorPerc: Money });
// Only what we read of `CobVGerada` / `CobVCompleta`; PSPs add fields.
const CobvAnswer = z.looseObject({
  txid: z.string().optional(),
  revisao: z.number().int().nonnegative().optional(),
  status: z.string(),
  calendario: z.looseObject({
    dataDeVencimento: z.string(),
    validadeAposVencimento: z.number().int().nonnegative().optional(),
  }),
  valor: z.looseObject({
    original: Money,
    multa: ModalityValue.optional(),
    juros: ModalityValue.optional(),
    abatimento: ModalityValue.optional(),
    desconto: z
      .looseObject({
        modalidade: z.number().int(),
        valorPerc: Money.optional(),
        descontoDataFixa: z.array(z.looseObject({ data: z.string(), valorPerc: Money })).optional(),
      })
      .optional(),
  }),
  pixCopiaECola: z.string().nullish(),
  location: z.string().nullish(),
  loc: z.looseObject({ location: z.string().nullish() }).nullish(),
  pix: z
    .array(
      z.looseObject({
        endToEndId: z.string(),
        valor: Money,
        horario: z.string(),
        componentesValor: ComponentesValor.optional(),
      }),
    )
    .optional(),
});
type CobvAnswer = z.infer<typeof CobvAnswer>;

/** The due-date charges of a PSP, on `client` (its token shared with the immediate charges). */
export function dueDateCharges(
  client: ApiPixClient,
  options: {
    pixKey: string;
    /** Written in the BR Code we build when the PSP answers only a location (see create). */
    merchantName: string;
    merchantCity: string;
  },
): DueDateCharges {
  async function answerOf(method: string, path: string, body?: unknown): Promise<CobvAnswer> {
    const answer = CobvAnswer.safeParse(await client.call(method, path, body));
    if (!answer.success) {
      throw new PspError(`PSP answered ${method} ${path} with a body that is not a due-date charge`, {
        retryable: false,
      });
    }
    return answer.data;
  }

  async function read(txid: string): Promise<DueDateChargeState | null> {
    const path = cobvPath(txid);
    const res = await client.send('GET', path);
    if (res.status === 404) return null;
    if (res.status < 200 || res.status > 299) throw refusal(`GET ${path}`, res.status, res.text);
    const answer = CobvAnswer.safeParse(res.json);
    if (!answer.success) {
      throw new PspError(`PSP answered GET ${path} with a body that is not a due-date charge`, {
        retryable: false,
      });
    }
    return stateOf(`GET ${path}`, txid, answer.data);
  }

  return {
    async create(input) {
      const path = cobvPath(input.txid);
      if (!Number.isSafeInteger(input.amountCents) || input.amountCents < 1)
        throw new PspError('amount must be a positive integer number of cents', { retryable: false });
      const devedor = debtor(input.debtorName, input.debtorDocument);
      let valor: ReturnType<typeof toCobvValor>;
      let calendario: ReturnType<typeof toCobvCalendario>;
      try {
        valor = toCobvValor(input.amountCents, input.terms);
        calendario = toCobvCalendario(input.terms);
      } catch (err) {
        throw new PspError((err as Error).message, { retryable: false, cause: err });
      }
      const body: Record<string, unknown> = { calendario, devedor, valor, chave: options.pixKey };
      const payerRequest = cutCodePoints(input.description?.trim() ?? '', MAX_PAYER_REQUEST).trim();
      if (payerRequest) body.solicitacaoPagador = payerRequest;

      const cobv = await answerOf('PUT', path, body);
      if (cobv.txid !== undefined && cobv.txid !== input.txid) {
        throw new PspError(`PSP answered PUT ${path} for another txid`, { retryable: false });
      }
      const expected = cobv.location ?? cobv.loc?.location ?? null;
      // `pixCopiaECola` is optional in API Pix: without it the code is the location's, as for `cob`.
      const copyAndPaste = cobv.pixCopiaECola || dueDateBrCodeOf(expected, options);
      if (!copyAndPaste) {
        throw new PspError(`PSP answered PUT ${path} with neither pixCopiaECola nor a usable location`, {
          retryable: false,
        });
      }
      const check = checkDueDateBrCode(copyAndPaste, expected);
      if (!check.ok) {
        throw new PspError(`PSP answered PUT ${path} with an unusable BR Code (${check.problem})`, {
          retryable: false,
        });
      }
      return {
        copyAndPaste,
        location: check.location,
        revision: cobv.revisao ?? 0,
      };
    },

    async cancel(txid) {
      const path = cobvPath(txid);
      const res = await client.send('PATCH', path, { status: REMOVED });
      if (res.status >= 200 && res.status <= 299) {
        const answer = CobvAnswer.safeParse(res.json);
        if (!answer.success) {
          throw new PspError(`PSP answered PATCH ${path} with a body that is not a due-date charge`, {
            retryable: true,
            status: res.status,
          });
        }
        return stateOf(`PATCH ${path}`, txid, answer.data);
      }
      const failure = refusal(`PATCH ${path}`, res.status, res.text);
      if (res.status !== 400 && res.status !== 409) throw failure;
      // A charge no longer active refuses the PATCH: what it is now decides whether that is done.
      const state = await read(txid);
      if (state?.status === 'REMOVED_BY_RECEIVER' || state?.status === 'REMOVED_BY_PSP') return state;
      if (state?.status === 'PAID') throw new DueDateChargePaidError(txid);
      throw failure;
    },

    read,
  };
}

function cobvPath(txid: string): string {
  if (!TXID.test(txid)) {
    throw new PspError(`API Pix needs a txid of 26 to 35 letters and digits, got ${txid.length} characters`, {
      retryable: false,
    });
  }
  return `/cobv/${txid}`;
}

function stateOf(what: string, txid: string, cobv: CobvAnswer): DueDateChargeState {
  if (cobv.txid !== undefined && cobv.txid !== txid) {
    throw new PspError(`PSP answered ${what} for another txid`, { retryable: false });
  }
  const status = STATUS[cobv.status];
  if (!status) {
    throw new PspError(`PSP answered ${what} with status ${clip(cobv.status, 40)}`, { retryable: true });
  }
  try {
    const { amount, ...rest } = fromCobvValor(cobv.valor);
    const terms: DueDateTerms = {
      ...fromCobvCalendario({
        dataDeVencimento: cobv.calendario.dataDeVencimento,
        validadeAposVencimento: cobv.calendario.validadeAposVencimento ?? 30,
      }),
      ...rest,
    };
    return {
      txid,
      status,
      revision: cobv.revisao ?? 0,
      location: (cobv.location ?? cobv.loc?.location ?? null)?.replace(/^https?:\/\//i, '') ?? null,
      amountCents: amount,
      terms,
      payments: (cobv.pix ?? []).map((pix) => paymentOf(pix)),
    };
  } catch (err) {
    if (err instanceof PspError) throw err;
    throw new PspError(`PSP answered ${what} with a charge we cannot read: ${(err as Error).message}`, {
      retryable: false,
      cause: err,
    });
  }
}

/** A received Pix with its components; without `componentesValor` it is all `original`. */
function paymentOf(pix: NonNullable<CobvAnswer['pix']>[number]): DueDateChargePayment {
  const amountCents = fromCobvDecimal(pix.valor);
  const components: AmountComponents = pix.componentesValor
    ? fromCobvComponentesValor(pix.componentesValor)
    : immediateComponents(amountCents);
  if (totalOf(components) !== amountCents) {
    throw new PspError(`Pix ${clip(pix.endToEndId, 40)}: componentesValor do not add up to ${pix.valor}`, {
      retryable: false,
    });
  }
  return { endToEndId: pix.endToEndId, amountCents, paidAt: pix.horario, components };
}

/** `devedor` is required for a due-date charge: a name and a CPF or a CNPJ. */
function debtor(name: string, document: string): Record<string, string> {
  const nome = cutCodePoints(name.trim(), MAX_DEBTOR_NAME).trim();
  const clean = document.replace(/[.\-/\s]/g, '').toUpperCase();
  if (!nome) throw new PspError('A due-date charge needs the debtor name', { retryable: false });
  if (/^\d{11}$/.test(clean)) return { cpf: clean, nome };
  if (/^[0-9A-Z]{12}\d{2}$/.test(clean)) return { cnpj: clean, nome };
  throw new PspError('A due-date charge needs the debtor CPF or CNPJ', { retryable: false });
}
