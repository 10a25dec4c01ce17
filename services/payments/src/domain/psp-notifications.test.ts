import { endToEndIdOf, reaisToCents } from './psp-notifications';

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
