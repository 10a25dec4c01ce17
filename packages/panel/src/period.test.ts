import { isPeriod, periodRange } from './period';

describe('periodRange', () => {
  const now = new Date(2026, 10, 23, 15, 42, 10);

  it('covers today by the hour, from local midnight to the next', () => {
    const r = periodRange('today', now);
    expect(r.granularity).toBe('hour');
    expect(r.from).toEqual(new Date(2026, 10, 23));
    expect(r.to).toEqual(new Date(2026, 10, 24));
  });

  it('covers the last 7 and 30 days by the day, today included', () => {
    expect(periodRange('7d', now)).toEqual({
      from: new Date(2026, 10, 17),
      to: new Date(2026, 10, 24),
      granularity: 'day',
    });
    const month = periodRange('30d', now);
    expect(month.from).toEqual(new Date(2026, 9, 25));
    expect(month.to).toEqual(new Date(2026, 10, 24));
  });

  it('knows its periods', () => {
    expect(isPeriod('7d')).toBe(true);
    expect(isPeriod('year')).toBe(false);
    expect(isPeriod(null)).toBe(false);
  });
});
