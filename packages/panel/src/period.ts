/** The Home page's periods: today by hour, or the last 7 or 30 days (today included) by day. */
export const PERIODS = [
  { value: 'today', label: 'Today' },
  { value: '7d', label: 'Last 7 days' },
  { value: '30d', label: 'Last 30 days' },
] as const;
export type Period = (typeof PERIODS)[number]['value'];

export const isPeriod = (value: string | null): value is Period => PERIODS.some((p) => p.value === value);

export interface PeriodRange {
  from: Date;
  /** Exclusive: the start of tomorrow, so today's buckets are all there. */
  to: Date;
  granularity: 'hour' | 'day';
}

/**
 * The range of a period in the browser's time zone: from local midnight (today, or 6 or 29 days
 * before) to the next local midnight. Date's local-time arithmetic keeps days whole across DST.
 */
export function periodRange(period: Period, now: Date = new Date()): PeriodRange {
  const days = period === 'today' ? 1 : period === '7d' ? 7 : 30;
  const from = new Date(now.getFullYear(), now.getMonth(), now.getDate() - (days - 1));
  const to = new Date(now.getFullYear(), now.getMonth(), now.getDate() + 1);
  return { from, to, granularity: period === 'today' ? 'hour' : 'day' };
}
