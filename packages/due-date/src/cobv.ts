import type { AmountComponents, AmountDue } from './amount';
import type { IsoDate } from './dates';
import { isIsoDate } from './dates';
import {
  MAX_COBV_VALUE,
  type DayCount,
  isTierDiscount,
  type Discount,
  type DueDateTerms,
  type Fine,
  type Interest,
  type InterestType,
  type Rebate,
} from './terms';

// The API Pix (`cobv`) form of due-date terms, for the PSP adapter and the PSP simulator. API Pix
// writes money in reais and percentages with two decimals, both as strings `\d{1,10}\.\d{2}`, so
// cents and basis points map onto them exactly: 12345 cents <-> "123.45", 250 bp <-> "2.50" (%).

/** `valor.multa`, `valor.juros`, `valor.abatimento`: a modality and a value. */
export type CobvModalityValue = { modalidade: number; valorPerc: string };

export type CobvDesconto = {
  modalidade: number;
  descontoDataFixa?: { data: IsoDate; valorPerc: string }[];
  valorPerc?: string;
};

/** `valor` of a `PUT /cobv/{txid}` request and of its answers. */
export type CobvValor = {
  original: string;
  multa?: CobvModalityValue;
  juros?: CobvModalityValue;
  abatimento?: CobvModalityValue;
  desconto?: CobvDesconto;
};

/** `calendario` of a `PUT /cobv/{txid}` request (the PSP adds `criacao`). */
export type CobvCalendario = { dataDeVencimento: IsoDate; validadeAposVencimento: number };

/** `valor` of the location payload (`CobVPayloadValor`): the amounts of one day, computed. */
export type CobvPayloadValor = {
  original: string;
  multa: string;
  juros: string;
  abatimento: string;
  desconto: string;
  final: string;
};

/** A received Pix's `componentesValor`: each part `{valor: "12.34"}`, any left out. */
export type CobvComponentesValor = Partial<
  Record<'original' | 'multa' | 'juros' | 'abatimento' | 'desconto', { valor: string }>
>;

const DECIMAL = /^(\d{1,10})\.(\d{2})$/;

/** Cents (or basis points) as API Pix writes them: 12345 -> "123.45". */
export function toCobvDecimal(value: number): string {
  if (!Number.isSafeInteger(value) || value < 0 || value > MAX_COBV_VALUE)
    throw new RangeError(`Not an integer from 0 to ${MAX_COBV_VALUE}: ${value}`);
  return `${Math.floor(value / 100)}.${String(value % 100).padStart(2, '0')}`;
}

/** "123.45" -> 12345; throws a RangeError on anything but `\d{1,10}\.\d{2}`. */
export function fromCobvDecimal(text: string): number {
  const match = typeof text === 'string' ? DECIMAL.exec(text) : null;
  if (!match) throw new RangeError(`Not an API Pix value (\\d{1,10}\\.\\d{2}): ${JSON.stringify(text)}`);
  return Number(match[1]) * 100 + Number(match[2]);
}

const INTEREST_TYPES: readonly InterestType[] = [
  'amount_per_day',
  'percent_per_day',
  'percent_per_month',
  'percent_per_year',
];

/** API Pix `juros.modalidade`: 1-4 in calendar days, 5-8 the same in business days. */
export function interestModality(interest: Pick<Interest, 'type' | 'days'>): number {
  return INTEREST_TYPES.indexOf(interest.type) + 1 + ((interest.days ?? 'calendar') === 'business' ? 4 : 0);
}

/** API Pix `desconto.modalidade`, 1 to 6. */
export function discountModality(discount: Discount): number {
  switch (discount.type) {
    case 'fixed_until':
      return 1;
    case 'percent_until':
      return 2;
    case 'amount_per_day_early':
      return discount.days === 'business' ? 4 : 3;
    case 'percent_per_day_early':
      return discount.days === 'business' ? 6 : 5;
  }
}

function fixedOrPercent(value: Fine | Rebate): CobvModalityValue {
  return value.type === 'fixed'
    ? { modalidade: 1, valorPerc: toCobvDecimal(value.amount) }
    : { modalidade: 2, valorPerc: toCobvDecimal(value.rate) };
}

/** The `valor` of a charge of `amount` cents under `terms`. */
export function toCobvValor(
  amount: number,
  terms: Omit<DueDateTerms, 'due_date' | 'days_after_due'>,
): CobvValor {
  const valor: CobvValor = { original: toCobvDecimal(amount) };
  if (terms.fine) valor.multa = fixedOrPercent(terms.fine);
  if (terms.interest)
    valor.juros = {
      modalidade: interestModality(terms.interest),
      valorPerc: toCobvDecimal(terms.interest.value),
    };
  if (terms.rebate) valor.abatimento = fixedOrPercent(terms.rebate);
  const discount = terms.discount;
  if (discount) {
    valor.desconto = isTierDiscount(discount)
      ? {
          modalidade: discountModality(discount),
          descontoDataFixa: discount.tiers.map((tier) => ({
            data: tier.until,
            valorPerc: toCobvDecimal(tier.value),
          })),
        }
      : { modalidade: discountModality(discount), valorPerc: toCobvDecimal(discount.value) };
  }
  return valor;
}

export function toCobvCalendario(terms: Pick<DueDateTerms, 'due_date' | 'days_after_due'>): CobvCalendario {
  return { dataDeVencimento: terms.due_date, validadeAposVencimento: terms.days_after_due };
}

/** The amount and terms of a `cobv` `valor` (and `calendario`, when given). Throws a RangeError on a value API Pix does not allow. */
export function fromCobvValor(valor: CobvValor): {
  amount: number;
  fine?: Fine;
  interest?: Interest;
  rebate?: Rebate;
  discount?: Discount;
} {
  const result: ReturnType<typeof fromCobvValor> = { amount: fromCobvDecimal(valor.original) };
  if (valor.multa) result.fine = fixedOrPercentFrom(valor.multa, 'multa');
  if (valor.abatimento) result.rebate = fixedOrPercentFrom(valor.abatimento, 'abatimento');
  if (valor.juros) {
    const modality = valor.juros.modalidade;
    if (!Number.isInteger(modality) || modality < 1 || modality > 8)
      throw new RangeError(`juros.modalidade must be 1 to 8, not ${modality}`);
    const days: DayCount = modality > 4 ? 'business' : 'calendar';
    result.interest = {
      type: INTEREST_TYPES[(modality - 1) % 4] as InterestType,
      value: fromCobvDecimal(valor.juros.valorPerc),
      days,
    };
  }
  if (valor.desconto) result.discount = discountFrom(valor.desconto);
  return result;
}

export function fromCobvCalendario(
  calendario: CobvCalendario,
): Pick<DueDateTerms, 'due_date' | 'days_after_due'> {
  if (!isIsoDate(calendario.dataDeVencimento))
    throw new RangeError(`dataDeVencimento is not a date: ${JSON.stringify(calendario.dataDeVencimento)}`);
  const days = calendario.validadeAposVencimento ?? 30;
  if (!Number.isSafeInteger(days) || days < 0)
    throw new RangeError('validadeAposVencimento must be an integer >= 0');
  return { due_date: calendario.dataDeVencimento, days_after_due: days };
}

function fixedOrPercentFrom(value: CobvModalityValue, name: string): Fine & Rebate {
  const amount = fromCobvDecimal(value.valorPerc);
  if (value.modalidade === 1) return { type: 'fixed', amount };
  if (value.modalidade === 2) return { type: 'percent', rate: amount };
  throw new RangeError(`${name}.modalidade must be 1 or 2, not ${value.modalidade}`);
}

function discountFrom(desconto: CobvDesconto): Discount {
  const modality = desconto.modalidade;
  if (modality === 1 || modality === 2) {
    if (desconto.valorPerc !== undefined)
      throw new RangeError('desconto.valorPerc is not taken with modalidade 1 or 2');
    const tiers = desconto.descontoDataFixa ?? [];
    if (tiers.length < 1 || tiers.length > 3)
      throw new RangeError('desconto.descontoDataFixa takes 1 to 3 dates');
    return {
      type: modality === 1 ? 'fixed_until' : 'percent_until',
      tiers: tiers.map((tier) => {
        if (!isIsoDate(tier.data))
          throw new RangeError(`descontoDataFixa.data is not a date: ${JSON.stringify(tier.data)}`);
        return { until: tier.data, value: fromCobvDecimal(tier.valorPerc) };
      }),
    };
  }
  if (Number.isInteger(modality) && modality >= 3 && modality <= 6) {
    if (desconto.descontoDataFixa !== undefined && desconto.descontoDataFixa.length > 0)
      throw new RangeError('desconto.descontoDataFixa is not taken with modalidade 3 to 6');
    if (desconto.valorPerc === undefined)
      throw new RangeError('desconto.valorPerc is required with modalidade 3 to 6');
    return {
      type: modality <= 4 ? 'amount_per_day_early' : 'percent_per_day_early',
      value: fromCobvDecimal(desconto.valorPerc),
      days: modality % 2 === 0 ? 'business' : 'calendar',
    };
  }
  throw new RangeError(`desconto.modalidade must be 1 to 6, not ${modality}`);
}

/** What a received Pix says its amount is made of, in cents: a part left out is 0. */
export function fromCobvComponentesValor(parts: CobvComponentesValor): AmountComponents {
  const cents = (part: { valor: string } | undefined) => (part ? fromCobvDecimal(part.valor) : 0);
  return {
    original: cents(parts.original),
    rebate: cents(parts.abatimento),
    discount: cents(parts.desconto),
    fine: cents(parts.multa),
    interest: cents(parts.juros),
  };
}

/**
 * The `valor` a payer's bank reads from the location on a payable day: our amounts, as API Pix
 * writes them. Null when the day is not payable (API Pix answers that day with a 400).
 */
export function toCobvPayloadValor(due: AmountDue): CobvPayloadValor | null {
  if (!due.payable) return null;
  const parts = due.components;
  return {
    original: toCobvDecimal(parts.original),
    multa: toCobvDecimal(parts.fine),
    juros: toCobvDecimal(parts.interest),
    abatimento: toCobvDecimal(parts.rebate),
    desconto: toCobvDecimal(parts.discount),
    final: toCobvDecimal(due.final),
  };
}
