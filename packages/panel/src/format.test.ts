import { money, parseReais, when } from './format';

describe('parseReais', () => {
  it.each([
    ['50', 5000],
    ['50,5', 5050],
    ['50,05', 5005],
    ['1.234,56', 123456],
    ['1234.56', 123456],
    ['R$ 10,00', 1000],
    [' 0,01 ', 1],
  ])('reads %s as %d cents', (text, cents) => {
    expect(parseReais(text)).toBe(cents);
  });

  it.each(['', 'abc', '1,234', '10,', '-5', '1.2.3', '12,345'])('refuses %s', (text) => {
    expect(parseReais(text)).toBeNull();
  });
});

describe('money and when', () => {
  it('formats cents as reais and datetimes in UTC', () => {
    expect(money(123456).replace(/\s/g, ' ')).toBe('R$ 1.234,56');
    expect(when('2026-11-23T03:10:59.123Z')).toBe('2026-11-23 03:10 UTC');
    expect(when(null)).toBe('—');
  });
});
