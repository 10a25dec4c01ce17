import { bucketLabel, count, localText, money, parseReais, percent, utcText } from './format';

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

describe('money and counts', () => {
  it('formats cents as reais and counts with Brazilian grouping', () => {
    expect(money(123456).replace(/\s/g, ' ')).toBe('R$ 1.234,56');
    expect(money(0).replace(/\s/g, ' ')).toBe('R$ 0,00');
    expect(count(1234567)).toBe('1.234.567');
  });
});

describe('percent', () => {
  it.each([
    [200, '2%'],
    [250, '2,5%'],
    [3, '0,03%'],
    [1, '0,01%'],
    [7, '0,07%'],
    [10_000, '100%'],
    [12_345, '123,45%'],
  ])('shows %d basis points as %s', (bps, text) => {
    expect(percent(bps)).toBe(text);
  });
});

describe('dates', () => {
  const iso = '2026-11-23T03:10:59.123Z';

  it('shows UTC on hover and the given time zone in the text', () => {
    expect(utcText(iso)).toBe('2026-11-23 03:10 UTC');
    expect(localText(iso, 'America/Sao_Paulo')).toBe('2026-11-23 00:10');
    expect(localText(iso, 'Asia/Tokyo')).toBe('2026-11-23 12:10');
    // The day changes with the zone: 03:10 UTC is still the 22nd in Manaus (UTC-4) at 23:10.
    expect(localText(iso, 'America/Manaus')).toBe('2026-11-22 23:10');
    expect(utcText(null)).toBe('—');
    expect(localText(undefined, 'UTC')).toBe('—');
  });

  it('labels chart buckets by hour or day in the time zone', () => {
    expect(bucketLabel('2026-11-23T03:00:00Z', 'hour', 'America/Sao_Paulo')).toBe('00h');
    expect(bucketLabel('2026-11-23T03:00:00Z', 'day', 'America/Sao_Paulo')).toBe('23/11');
    expect(bucketLabel('2026-11-23T03:00:00Z', 'day', 'America/Manaus')).toBe('22/11');
  });
});
