import fc from 'fast-check';
import { amountDue } from './amount';
import { fixedCalendar } from './calendar';
import {
  fromCobvCalendario,
  fromCobvDecimal,
  fromCobvValor,
  toCobvCalendario,
  toCobvDecimal,
  toCobvPayloadValor,
  toCobvValor,
  type CobvValor,
} from './cobv';
import type { Discount, DueDateTerms, Interest } from './terms';

describe('API Pix values', () => {
  it('writes cents and basis points with two decimals, and reads them back', () => {
    expect(toCobvDecimal(0)).toBe('0.00');
    expect(toCobvDecimal(5)).toBe('0.05');
    expect(toCobvDecimal(12345)).toBe('123.45');
    expect(toCobvDecimal(999_999_999_999)).toBe('9999999999.99');
    expect(fromCobvDecimal('123.45')).toBe(12345);
    expect(fromCobvDecimal('0.05')).toBe(5);
    expect(fromCobvDecimal('9999999999.99')).toBe(999_999_999_999);
  });

  it('refuses what the pattern \\d{1,10}\\.\\d{2} does not allow', () => {
    for (const bad of ['1', '1.5', '1.005', '-1.00', '1,00', ' 1.00', '12345678901.00', '.50', ''])
      expect(() => fromCobvDecimal(bad)).toThrow(RangeError);
    for (const bad of [-1, 1.5, 1_000_000_000_000, Number.NaN])
      expect(() => toCobvDecimal(bad)).toThrow(RangeError);
  });

  it('round-trips every value', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 999_999_999_999 }), (value) => {
        expect(fromCobvDecimal(toCobvDecimal(value))).toBe(value);
      }),
    );
  });
});

describe('cobv valor', () => {
  it('maps the example of docs/pix.md', () => {
    const terms: Omit<DueDateTerms, 'due_date' | 'days_after_due'> = {
      fine: { type: 'percent', rate: 200 },
      interest: { type: 'percent_per_month', value: 100, days: 'calendar' },
      rebate: { type: 'fixed', amount: 5000 },
      discount: { type: 'fixed_until', tiers: [{ until: '2025-09-05', value: 3000 }] },
    };
    expect(toCobvValor(100_000, terms)).toEqual({
      original: '1000.00',
      multa: { modalidade: 2, valorPerc: '2.00' },
      juros: { modalidade: 3, valorPerc: '1.00' },
      abatimento: { modalidade: 1, valorPerc: '50.00' },
      desconto: { modalidade: 1, descontoDataFixa: [{ data: '2025-09-05', valorPerc: '30.00' }] },
    });
    expect(toCobvValor(100, {})).toEqual({ original: '1.00' });
  });

  it.each([
    [{ type: 'amount_per_day', value: 10, days: 'calendar' }, 1],
    [{ type: 'percent_per_day', value: 10, days: 'calendar' }, 2],
    [{ type: 'percent_per_month', value: 10, days: 'calendar' }, 3],
    [{ type: 'percent_per_year', value: 10, days: 'calendar' }, 4],
    [{ type: 'amount_per_day', value: 10, days: 'business' }, 5],
    [{ type: 'percent_per_day', value: 10, days: 'business' }, 6],
    [{ type: 'percent_per_month', value: 10, days: 'business' }, 7],
    [{ type: 'percent_per_year', value: 10, days: 'business' }, 8],
  ] as [Interest, number][])('interest %j is juros modalidade %i', (interest, modalidade) => {
    const valor = toCobvValor(1000, { interest });
    expect(valor.juros).toEqual({ modalidade, valorPerc: '0.10' });
    expect(fromCobvValor(valor).interest).toEqual(interest);
  });

  it.each([
    [{ type: 'fixed_until', tiers: [{ until: '2025-09-05', value: 300 }] }, 1],
    [{ type: 'percent_until', tiers: [{ until: '2025-09-05', value: 300 }] }, 2],
    [{ type: 'amount_per_day_early', value: 300, days: 'calendar' }, 3],
    [{ type: 'amount_per_day_early', value: 300, days: 'business' }, 4],
    [{ type: 'percent_per_day_early', value: 300, days: 'calendar' }, 5],
    [{ type: 'percent_per_day_early', value: 300, days: 'business' }, 6],
  ] as [Discount, number][])('discount %j is desconto modalidade %i', (discount, modalidade) => {
    const valor = toCobvValor(1000, { discount });
    expect(valor.desconto?.modalidade).toBe(modalidade);
    expect(
      modalidade <= 2 ? valor.desconto?.descontoDataFixa?.[0]?.valorPerc : valor.desconto?.valorPerc,
    ).toBe('3.00');
    expect(fromCobvValor(valor).discount).toEqual(discount);
  });

  it('maps fine and rebate to modalidade 1 (fixed) and 2 (percent)', () => {
    const valor = toCobvValor(1000, {
      fine: { type: 'fixed', amount: 150 },
      rebate: { type: 'percent', rate: 150 },
    });
    expect(valor.multa).toEqual({ modalidade: 1, valorPerc: '1.50' });
    expect(valor.abatimento).toEqual({ modalidade: 2, valorPerc: '1.50' });
  });

  const tiers = fc
    .uniqueArray(fc.integer({ min: 0, max: 3000 }), { minLength: 1, maxLength: 3 })
    .map((offsets) =>
      [...offsets]
        .sort((a, b) => a - b)
        .map((offset, index) => ({ until: dateAfter(offset), value: 3000 - index * 500 })),
    );
  const fixedOrPercent = fc.oneof(
    fc.record({ type: fc.constant('fixed' as const), amount: fc.integer({ min: 1, max: 999_999_999_999 }) }),
    fc.record({ type: fc.constant('percent' as const), rate: fc.integer({ min: 1, max: 9999 }) }),
  );
  const days = fc.constantFrom('calendar' as const, 'business' as const);
  const interest = fc.record({
    type: fc.constantFrom(
      'amount_per_day' as const,
      'percent_per_day' as const,
      'percent_per_month' as const,
      'percent_per_year' as const,
    ),
    value: fc.integer({ min: 1, max: 999_999_999_999 }),
    days,
  });
  const discount = fc.oneof(
    fc.record({ type: fc.constantFrom('fixed_until' as const, 'percent_until' as const), tiers }),
    fc.record({
      type: fc.constantFrom('amount_per_day_early' as const, 'percent_per_day_early' as const),
      value: fc.integer({ min: 1, max: 999_999_999_999 }),
      days,
    }),
  );
  const charge = fc.record(
    {
      amount: fc.integer({ min: 1, max: 999_999_999_999 }),
      fine: fixedOrPercent,
      interest,
      rebate: fixedOrPercent,
      discount,
    },
    { requiredKeys: ['amount'] },
  );

  it('round-trips any terms through valor, and any valor through terms', () => {
    fc.assert(
      fc.property(charge, ({ amount, ...terms }) => {
        const valor = toCobvValor(amount, terms);
        expect(fromCobvValor(valor)).toEqual({ amount, ...terms });
        expect(toCobvValor(amount, fromCobvValor(valor))).toEqual(valor);
        // What a PSP answers went through JSON.
        expect(fromCobvValor(JSON.parse(JSON.stringify(valor)) as CobvValor)).toEqual({ amount, ...terms });
      }),
    );
  });

  it('round-trips calendario, with API Pix default of 30 days', () => {
    const terms = { due_date: '2025-09-10', days_after_due: 0 };
    expect(toCobvCalendario(terms)).toEqual({ dataDeVencimento: '2025-09-10', validadeAposVencimento: 0 });
    expect(fromCobvCalendario(toCobvCalendario(terms))).toEqual(terms);
    expect(fromCobvCalendario({ dataDeVencimento: '2025-09-10' } as never)).toEqual({
      due_date: '2025-09-10',
      days_after_due: 30,
    });
    expect(() => fromCobvCalendario({ dataDeVencimento: '2025-09-31', validadeAposVencimento: 1 })).toThrow(
      RangeError,
    );
    expect(() => fromCobvCalendario({ dataDeVencimento: '2025-09-10', validadeAposVencimento: -1 })).toThrow(
      RangeError,
    );
  });

  it.each([
    [{ original: '10.00', multa: { modalidade: 3, valorPerc: '1.00' } }, /multa.modalidade/],
    [{ original: '10.00', abatimento: { modalidade: 0, valorPerc: '1.00' } }, /abatimento.modalidade/],
    [{ original: '10.00', juros: { modalidade: 9, valorPerc: '1.00' } }, /juros.modalidade/],
    [{ original: '10.00', desconto: { modalidade: 7, valorPerc: '1.00' } }, /desconto.modalidade/],
    [
      { original: '10.00', desconto: { modalidade: 1, valorPerc: '1.00' } },
      /not taken with modalidade 1 or 2/,
    ],
    [{ original: '10.00', desconto: { modalidade: 2, descontoDataFixa: [] } }, /1 to 3 dates/],
    [{ original: '10.00', desconto: { modalidade: 3 } }, /required with modalidade 3 to 6/],
    [
      {
        original: '10.00',
        desconto: {
          modalidade: 4,
          valorPerc: '1.00',
          descontoDataFixa: [{ data: '2025-09-01', valorPerc: '1.00' }],
        },
      },
      /not taken with modalidade 3 to 6/,
    ],
    [
      {
        original: '10.00',
        desconto: { modalidade: 1, descontoDataFixa: [{ data: '01/09/2025', valorPerc: '1.00' }] },
      },
      /not a date/,
    ],
    [{ original: '10' }, /Not an API Pix value/],
  ] as [CobvValor, RegExp][])('refuses %j', (valor, problem) => {
    expect(() => fromCobvValor(valor)).toThrow(problem);
  });
});

describe('the location payload valor', () => {
  it('writes the amounts of a payable day, and nothing for another', () => {
    const terms: DueDateTerms = {
      due_date: '2025-09-10',
      days_after_due: 30,
      fine: { type: 'percent', rate: 200 },
      interest: { type: 'percent_per_month', value: 100, days: 'calendar' },
      rebate: { type: 'fixed', amount: 5000 },
    };
    const calendar = fixedCalendar([]);
    expect(toCobvPayloadValor(amountDue(100_000, terms, '2025-09-15', calendar))).toEqual({
      original: '1000.00',
      multa: '19.00',
      juros: '1.58',
      abatimento: '50.00',
      desconto: '0.00',
      final: '970.58',
    });
    expect(toCobvPayloadValor(amountDue(100_000, terms, '2025-10-11', calendar))).toBeNull();
  });
});

function dateAfter(days: number): string {
  return new Date(Date.UTC(2025, 0, 1) + days * 86_400_000).toISOString().slice(0, 10);
}
