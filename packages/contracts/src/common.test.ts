import { dateOrDatetimeInput, datetimeInput, withinDateRange } from './common';

describe('date inputs', () => {
  it('accept the years PostgreSQL holds, and refuse year 0000 on the field', () => {
    expect(withinDateRange('2026-11-26T04:00:00Z')).toBe(true);
    expect(withinDateRange('0001-01-02T00:00:00Z')).toBe(true);
    expect(withinDateRange('0000-01-01T00:00:00Z')).toBe(false);
    expect(withinDateRange('0001-01-01T00:30:00+01:00')).toBe(false);
    expect(datetimeInput.safeParse('0000-01-01T00:00:00.000Z').success).toBe(false);
    expect(datetimeInput.safeParse('2026-11-26T04:00:00-03:00').success).toBe(true);
    expect(dateOrDatetimeInput.safeParse('0000-01-01').success).toBe(false);
    expect(dateOrDatetimeInput.safeParse('2026-11-26').success).toBe(true);
  });

  it('report a string that is no date by its format only', () => {
    const result = dateOrDatetimeInput.safeParse('nope');
    expect(result.success).toBe(false);
    expect(result.error?.issues).toHaveLength(1);
  });
});
