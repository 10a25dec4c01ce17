import {
  brazilCalendar,
  businessDaysAfter,
  businessDaysBefore,
  calendarPlaceProblem,
  fixedCalendar,
  nextBusinessDay,
} from './calendar';
import {
  addDays,
  dayNumber,
  daysBetween,
  fromDayNumber,
  isIsoDate,
  payableUntil,
  startOfDayInSaoPaulo,
  todayInSaoPaulo,
  weekday,
  zonedDayInSaoPaulo,
} from './dates';

describe('dates', () => {
  it('reads only real YYYY-MM-DD dates', () => {
    expect(['2024-02-29', '2025-12-31', '0001-01-01', '9999-12-31'].every(isIsoDate)).toBe(true);
    for (const bad of [
      '2025-02-29',
      '2025-13-01',
      '2025-00-10',
      '2025-9-10',
      '0000-01-01',
      '10/09/2025',
      20250910,
    ])
      expect({ bad, ok: isIsoDate(bad) }).toEqual({ bad, ok: false });
  });

  it('counts whole days, whatever the time zone', () => {
    expect(dayNumber('1970-01-01')).toBe(0);
    expect(fromDayNumber(dayNumber('0001-01-01'))).toBe('0001-01-01');
    expect(addDays('2025-02-28', 1)).toBe('2025-03-01');
    expect(addDays('2024-02-28', 1)).toBe('2024-02-29');
    expect(daysBetween('2025-09-10', '2025-10-10')).toBe(30);
    expect(weekday('2025-09-10')).toBe(3); // a Wednesday
    expect(weekday('1969-12-28')).toBe(0); // a Sunday, before day 0
  });

  it('tells the date in São Paulo, not in UTC', () => {
    // 02:00 UTC is 23:00 the day before in São Paulo (UTC-3).
    expect(todayInSaoPaulo(new Date('2025-09-11T02:00:00Z'))).toBe('2025-09-10');
    expect(todayInSaoPaulo(new Date('2025-09-11T03:00:00Z'))).toBe('2025-09-11');
  });

  it('agrees with the time zone database on every hour since 2019 and around its last change', () => {
    const from = Date.parse('2018-10-01T00:00:00.000Z');
    const to = Date.parse('2031-01-01T00:00:00.000Z');
    const hour = 3_600_000;
    for (let at = from; at < to; at += hour * 7) {
      const now = new Date(at);
      expect({ at: now.toISOString(), day: todayInSaoPaulo(now) }).toEqual({
        at: now.toISOString(),
        day: zonedDayInSaoPaulo(now),
      });
    }
    // In the last daylight saving time (UTC-2), 01:30 UTC was already the next day.
    expect(todayInSaoPaulo(new Date('2019-01-10T01:30:00.000Z'))).toBe('2019-01-09');
    expect(todayInSaoPaulo(new Date('2019-01-10T02:30:00.000Z'))).toBe('2019-01-10');
  });

  it('ends a payable day at the next midnight in São Paulo', () => {
    expect(startOfDayInSaoPaulo('2025-09-10').toISOString()).toBe('2025-09-10T03:00:00.000Z');
    expect(payableUntil('2025-12-31').toISOString()).toBe('2026-01-01T03:00:00.000Z');
    // The last instant of the day is still that day in São Paulo; the end is the next one's.
    const end = payableUntil('2025-09-10');
    expect(todayInSaoPaulo(new Date(end.getTime() - 1))).toBe('2025-09-10');
    expect(todayInSaoPaulo(end)).toBe('2025-09-11');
    expect(() => startOfDayInSaoPaulo('2025-02-30')).toThrow(RangeError);
  });
});

describe('brazilCalendar', () => {
  const national = brazilCalendar();

  it.each([
    // Carnival Monday and Tuesday close banks nationally; Ash Wednesday (until 14:00) does not.
    ['2024-02-12', false],
    ['2024-02-13', false],
    ['2024-02-14', true],
    ['2025-03-03', false],
    ['2025-03-04', false],
    ['2025-03-05', true],
    ['2026-02-16', false],
    ['2026-02-17', false],
    // Good Friday moves with Easter.
    ['2024-03-29', false],
    ['2025-04-18', false],
    ['2026-04-03', false],
    // Corpus Christi, 60 days after Easter.
    ['2024-05-30', false],
    ['2025-06-19', false],
    ['2026-06-04', false],
    // Fixed national holidays, Black Awareness Day among them since 2024.
    ['2025-01-01', false],
    ['2025-04-21', false],
    ['2025-05-01', false],
    ['2025-10-12', false],
    ['2025-11-20', false],
    ['2025-12-25', false],
    // Plain days, and the afternoon-only ones (banks open in the morning).
    ['2025-09-10', true],
    ['2025-12-24', true],
    ['2025-12-31', true],
    // Weekends.
    ['2025-09-13', false],
    ['2025-09-14', false],
  ])('%s is a business day nationally: %s', (date, expected) => {
    expect(national.isBusinessDay(date)).toBe(expected);
  });

  it('adds a state’s holidays, and a municipality’s where the data has them', () => {
    // 9 July: São Paulo state's Constitutionalist Revolution.
    expect(national.isBusinessDay('2025-07-09')).toBe(true);
    expect(brazilCalendar({ state: 'SP' }).isBusinessDay('2025-07-09')).toBe(false);
    // 25 January 2024, a Thursday: São Paulo city's anniversary (IBGE 3550308), not the state's.
    expect(brazilCalendar({ state: 'SP' }).isBusinessDay('2024-01-25')).toBe(true);
    expect(brazilCalendar({ municipality: '3550308' }).isBusinessDay('2024-01-25')).toBe(false);
    expect(brazilCalendar({ state: 'SP', municipality: '3550308' }).isBusinessDay('2024-01-25')).toBe(false);
    // Campinas (3509502) has no holidays of its own in the data: São Paulo state's only.
    const campinas = brazilCalendar({ municipality: '3509502' });
    expect(campinas.id).toBe('BR-SP-3509502');
    expect(campinas.isBusinessDay('2025-07-09')).toBe(false);
    expect(campinas.isBusinessDay('2024-01-25')).toBe(true);
    // 20 January: Saint Sebastian in the city of Rio de Janeiro (3304557), a Monday in 2025.
    expect(brazilCalendar({ state: 'RJ' }).isBusinessDay('2025-01-20')).toBe(true);
    expect(brazilCalendar({ municipality: '3304557' }).isBusinessDay('2025-01-20')).toBe(false);
  });

  it('lists the holidays that close banks, in order', () => {
    const dates = national.holidays(2025).map((holiday) => holiday.date);
    expect(dates).toEqual([...dates].sort());
    expect(dates).toEqual(
      expect.arrayContaining(['2025-03-03', '2025-03-04', '2025-04-18', '2025-06-19', '2025-11-20']),
    );
    // Not the optional or observed days: Ash Wednesday, Easter Sunday, Mothers' Day.
    expect(dates).not.toEqual(expect.arrayContaining(['2025-03-05']));
    expect(dates).not.toContain('2025-04-20');
    expect(dates).not.toContain('2025-05-11');
  });

  it('shares one calendar per place', () => {
    expect(brazilCalendar({ state: 'SP' })).toBe(brazilCalendar({ state: 'SP' }));
    expect(brazilCalendar({ municipality: '3550308' }).id).toBe('BR-SP-3550308');
  });

  it('refuses a place that does not exist', () => {
    expect(calendarPlaceProblem({})).toBeNull();
    expect(calendarPlaceProblem({ state: 'XX' })).toMatch(/Unknown state/);
    expect(calendarPlaceProblem({ municipality: '355030' })).toMatch(/7-digit IBGE code/);
    expect(calendarPlaceProblem({ municipality: '9900000' })).toMatch(/No state has the IBGE code 99/);
    expect(calendarPlaceProblem({ state: 'RJ', municipality: '3550308' })).toMatch(/is in SP, not RJ/);
    expect(() => brazilCalendar({ state: 'sp' })).toThrow(RangeError);
  });
});

describe('counting business days', () => {
  const national = brazilCalendar();

  it('moves to the next business day across weekends and holidays', () => {
    expect(nextBusinessDay('2025-09-10', national)).toBe('2025-09-10');
    expect(nextBusinessDay('2025-09-06', national)).toBe('2025-09-08');
    // Good Friday, the weekend, Tiradentes on Monday.
    expect(nextBusinessDay('2025-04-18', national)).toBe('2025-04-22');
    // Carnival 2025: Saturday 1 March to Tuesday 4.
    expect(nextBusinessDay('2025-03-01', national)).toBe('2025-03-05');
    // New Year's Day 2028 is a Saturday.
    expect(nextBusinessDay('2027-12-31', national)).toBe('2027-12-31');
    expect(nextBusinessDay('2028-01-01', national)).toBe('2028-01-03');
  });

  it('counts the business days after a date, up to and including another', () => {
    // 18 (Good Friday), 19, 20 (weekend), 21 (Tiradentes): only 22 counts.
    expect(businessDaysAfter('2025-04-17', '2025-04-22', national)).toBe(1);
    // Corpus Christi on Thursday 19 June 2025: 16, 17, 18, 20 of the week.
    expect(businessDaysAfter('2025-06-15', '2025-06-21', national)).toBe(4);
    expect(businessDaysAfter('2025-09-10', '2025-09-10', national)).toBe(0);
    expect(businessDaysAfter('2025-09-12', '2025-09-10', national)).toBe(0);
  });

  it('counts the business days from a date up to another, not including it', () => {
    // Carnival 2026: Friday 13, then 16 and 17 closed; Wednesday 18 is the end, not counted.
    expect(businessDaysBefore('2026-02-12', '2026-02-18', national)).toBe(2);
    expect(businessDaysBefore('2025-09-10', '2025-09-10', national)).toBe(0);
    // No further back than a limit: from Monday 1 to Wednesday 10 September, 1 to 5, 8 and 9.
    expect(businessDaysBefore('2025-09-01', '2025-09-10', national)).toBe(7);
    expect(businessDaysBefore('2025-09-01', '2025-09-10', national, 4)).toBe(4);
    expect(businessDaysBefore('2025-09-01', '2025-09-10', national, 0)).toBe(0);
    expect(businessDaysBefore('2025-09-12', '2025-09-10', national)).toBe(0);
  });

  it('uses the holidays a fixed calendar is given, and refuses a malformed one', () => {
    const calendar = fixedCalendar(['2025-09-11']);
    expect(calendar.isBusinessDay('2025-09-11')).toBe(false);
    expect(calendar.isBusinessDay('2025-09-12')).toBe(true);
    expect(calendar.holidays(2025)).toEqual([{ date: '2025-09-11', name: 'holiday' }]);
    expect(calendar.holidays(2024)).toEqual([]);
    expect(() => fixedCalendar(['2025-09-31'])).toThrow(RangeError);
    expect(() => calendar.isBusinessDay('tomorrow')).toThrow(RangeError);
  });

  it('stops on a calendar with no business day at all', () => {
    const closed = { id: 'closed', isBusinessDay: () => false, holidays: () => [] };
    expect(() => nextBusinessDay('2025-09-10', closed)).toThrow(/no business day/);
  });
});
