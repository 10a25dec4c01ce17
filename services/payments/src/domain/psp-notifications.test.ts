import { componentsOf, endToEndIdOf, reaisToCents } from './psp-notifications';

describe('reaisToCents', () => {
  it('reads API Pix amounts as integer cents', () => {
    expect(reaisToCents('150.00')).toBe(15_000);
    expect(reaisToCents('0.01')).toBe(1);
    expect(reaisToCents('12.5')).toBe(1_250);
    expect(reaisToCents('7')).toBe(700);
    // Far past where a float would round a sum of reais and centavos.
    expect(reaisToCents('90071992547409.91')).toBe(9_007_199_254_740_991);
  });
});

describe('endToEndIdOf', () => {
  it('logs a string end-to-end id, cut at 64 characters, and nothing else', () => {
    expect(endToEndIdOf({ endToEndId: 'E123' })).toBe('E123');
    expect(endToEndIdOf({ endToEndId: 'x'.repeat(100) })).toHaveLength(64);
    expect(endToEndIdOf({ endToEndId: 42 })).toBeNull();
    expect(endToEndIdOf(null)).toBeNull();
    expect(endToEndIdOf('E123')).toBeNull();
  });
});

describe('componentsOf', () => {
  it("reads componentesValor as cents, a part left out as zero", () => {
    expect(
      componentsOf({
        valor: '970.58',
        componentesValor: {
          original: { valor: '1000.00' },
          abatimento: { valor: '50.00' },
          multa: { valor: '19.00' },
          juros: { valor: '1.58' },
        },
      }),
    ).toEqual({ original: 100_000, rebate: 5000, discount: 0, fine: 1900, interest: 158 });
    expect(componentsOf({ componentesValor: { original: { valor: '10.00' }, desconto: { valor: '1.00' } } })).toEqual(
      { original: 1000, rebate: 0, discount: 100, fine: 0, interest: 0 },
    );
  });

  it('gives null for none, or for components it cannot read, never throwing', () => {
    expect(componentsOf({ valor: '10.00' })).toBeNull();
    expect(componentsOf({ componentesValor: { juros: { valor: '1.00' } } })).toBeNull();
    expect(componentsOf({ componentesValor: { original: { valor: '-1.00' } } })).toBeNull();
    expect(componentsOf({ componentesValor: { original: { valor: 10 } } })).toBeNull();
    expect(componentsOf({ componentesValor: 'x' })).toBeNull();
    expect(componentsOf(null)).toBeNull();
  });
});
