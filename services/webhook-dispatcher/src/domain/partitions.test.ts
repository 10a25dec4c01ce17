import {
  HISTORY_TABLES,
  addPeriods,
  expiredPartitions,
  periodOf,
  periodStart,
  periodsToMake,
  type HistoryTable,
} from './partitions';

const events = HISTORY_TABLES.find((t) => t.table === 'events') as HistoryTable;
const deliveries = HISTORY_TABLES.find((t) => t.table === 'deliveries') as HistoryTable;
const at = (iso: string) => new Date(iso);

describe('periods', () => {
  it('start at midnight UTC or on the first of the month, whatever the time of day', () => {
    expect(periodStart('day', at('2026-11-28T23:59:59.999Z'))).toEqual(at('2026-11-28T00:00:00Z'));
    expect(periodStart('month', at('2026-12-31T23:00:00Z'))).toEqual(at('2026-12-01T00:00:00Z'));
    expect(addPeriods('month', at('2026-12-01T00:00:00Z'), 2)).toEqual(at('2027-02-01T00:00:00Z'));
    expect(addPeriods('day', at('2026-02-28T00:00:00Z'), 1)).toEqual(at('2026-03-01T00:00:00Z'));
  });

  it('are named after their start', () => {
    expect(periodOf(events, at('2026-11-28T00:00:00Z'))).toEqual({
      name: 'events_p20261128',
      from: at('2026-11-28T00:00:00Z'),
      to: at('2026-11-29T00:00:00Z'),
    });
    expect(periodOf(deliveries, at('2026-11-01T00:00:00Z')).name).toBe('deliveries_p202611');
  });
});

describe('the periods to make', () => {
  const now = at('2026-11-28T15:00:00Z');

  it('run from the one holding the retention horizon to the ones made ahead', () => {
    const made = periodsToMake(deliveries, [], now, 90);
    expect(made.map((p) => p.name)).toEqual([
      'deliveries_p202608',
      'deliveries_p202609',
      'deliveries_p202610',
      'deliveries_p202611',
      'deliveries_p202612',
      'deliveries_p202701',
    ]);
    expect(periodsToMake(events, [], now, 30)).toHaveLength(31 + 14);
  });

  it('leave out what the existing partitions cover, the legacy one included', () => {
    const existing = [
      { name: 'deliveries_legacy', from: null, to: at('2026-10-01T00:00:00Z') },
      { name: 'deliveries_p202610', from: at('2026-10-01T00:00:00Z'), to: at('2026-11-01T00:00:00Z') },
    ];
    expect(periodsToMake(deliveries, existing, now, 90).map((p) => p.name)).toEqual([
      'deliveries_p202611',
      'deliveries_p202612',
      'deliveries_p202701',
    ]);
  });
});

describe('expired partitions', () => {
  it('are those wholly older than the retention, the legacy one once its bound is', () => {
    const now = at('2026-11-28T15:00:00Z');
    const partitions = [
      { name: 'events_legacy', from: null, to: at('2026-10-29T00:00:00Z') },
      { name: 'events_p20261029', from: at('2026-10-29T00:00:00Z'), to: at('2026-10-30T00:00:00Z') },
    ];
    // The horizon, 30 days back, falls within 2026-10-29: that day keeps its partition.
    expect(expiredPartitions(partitions, now, 30).map((p) => p.name)).toEqual(['events_legacy']);
    expect(expiredPartitions(partitions, now, 20).map((p) => p.name)).toEqual([
      'events_legacy',
      'events_p20261029',
    ]);
  });
});
