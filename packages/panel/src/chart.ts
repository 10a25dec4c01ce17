/** Pure helpers of the Home charts (chart layout that tests can check without a browser). */

/**
 * Every `step`-th bucket gets an axis label, so labels of about `labelWidth` pixels never overlap on a
 * narrow screen: 24 hourly labels fit on a desktop, every 4th on a phone.
 */
export function labelStep(buckets: number, innerWidth: number, labelWidth = 40): number {
  if (buckets <= 0 || innerWidth <= 0) return 1;
  return Math.max(1, Math.ceil((buckets * labelWidth) / innerWidth));
}

/** A "nice" top for the value axis: 1, 2 or 5 times a power of ten, at least `max` (1 when all zero). */
export function niceMax(max: number): number {
  if (max <= 0) return 1;
  const power = 10 ** Math.floor(Math.log10(max));
  for (const m of [1, 2, 5, 10]) if (m * power >= max) return m * power;
  return 10 * power;
}

/** Shares of a whole, in percent rounded to whole numbers (0 of 0 is 0 %). */
export function percentOf(part: number, whole: number): number {
  return whole > 0 ? Math.round((part / whole) * 100) : 0;
}
