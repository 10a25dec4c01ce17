import { isTimeZone, timeZoneName, timeZoneOffsetMs } from './time-zones';

const HOUR = 3_600_000;

describe('time zones', () => {
  it('knows IANA names in any case, and nothing PostgreSQL would read differently', () => {
    for (const name of ['UTC', 'utc', 'America/Sao_Paulo', 'america/sao_paulo', 'Asia/Kolkata', 'Etc/GMT+3'])
      expect({ name, known: isTimeZone(name) }).toEqual({ name, known: true });
    for (const name of [
      '',
      'Mars/Olympus_Mons',
      '+03:00',
      '-03',
      'UTC+3',
      'America/Sao Paulo',
      'x'.repeat(65),
    ])
      expect({ name, known: isTimeZone(name) }).toEqual({ name, known: false });
    expect(timeZoneName.safeParse('America/Sao_Paulo').success).toBe(true);
    expect(timeZoneName.safeParse('Nowhere/Else').success).toBe(false);
  });

  it("gives the offset of the zone's clock at an instant, daylight saving included", () => {
    expect(timeZoneOffsetMs(Date.parse('2026-03-01T12:00:00Z'), 'America/Sao_Paulo')).toBe(-3 * HOUR);
    expect(timeZoneOffsetMs(Date.parse('2026-03-01T12:00:00Z'), 'Asia/Kolkata')).toBe(5.5 * HOUR);
    expect(timeZoneOffsetMs(Date.parse('2026-07-01T12:00:00Z'), 'America/New_York')).toBe(-4 * HOUR);
    expect(timeZoneOffsetMs(Date.parse('2026-12-01T12:00:00Z'), 'America/New_York')).toBe(-5 * HOUR);
    expect(timeZoneOffsetMs(Date.parse('2026-12-01T12:00:00Z'), 'UTC')).toBe(0);
    // Before standard time, a local mean time with seconds.
    expect(timeZoneOffsetMs(Date.parse('1900-01-01T12:00:00Z'), 'America/Sao_Paulo')).toBe(
      -(3 * HOUR + 6 * 60_000 + 28_000),
    );
    expect(() => timeZoneOffsetMs(0, 'Mars/Olympus_Mons')).toThrow(RangeError);
  });
});
