import {
  AUTO_APPROVAL_WINDOW_MS,
  reviewReasons,
  windowStart,
  type AutoApprovalRules,
} from './payout-controls';

const RULES: AutoApprovalRules = {
  autoApproveBelow: 1000,
  dailyCount: 3,
  dailyAmount: 2000,
  reviewNewPixKey: false,
};
const NONE = { count: 0, amount: 0 };

describe('reviewReasons', () => {
  it('clears a withdrawal below the limit, within the caps, to any key when new keys are not reviewed', () => {
    expect(reviewReasons(999, NONE, false, RULES)).toEqual([]);
  });

  it('sends everything to an operator when automatic approval is off', () => {
    expect(reviewReasons(1, NONE, true, { ...RULES, autoApproveBelow: 0 })).toEqual(['auto_approval_off']);
  });

  it('sends an amount at or above the limit to an operator', () => {
    expect(reviewReasons(1000, NONE, true, RULES)).toEqual(['amount_over_auto_limit']);
  });

  it('counts this withdrawal against the count cap: the one after the cap waits', () => {
    expect(reviewReasons(10, { count: 2, amount: 20 }, true, RULES)).toEqual([]);
    expect(reviewReasons(10, { count: 3, amount: 30 }, true, RULES)).toEqual(['daily_count_cap']);
  });

  it('counts this amount against the amount cap: reaching it exactly is allowed, one cent over is not', () => {
    expect(reviewReasons(500, { count: 1, amount: 1500 }, true, RULES)).toEqual([]);
    expect(reviewReasons(501, { count: 1, amount: 1500 }, true, RULES)).toEqual(['daily_amount_cap']);
  });

  it('treats a cap of 0 as no cap', () => {
    const uncapped = { ...RULES, dailyCount: 0, dailyAmount: 0 };
    expect(reviewReasons(999, { count: 10_000, amount: 9_999_999 }, true, uncapped)).toEqual([]);
  });

  it('reviews a key never paid to only when the setting says so', () => {
    expect(reviewReasons(10, NONE, false, RULES)).toEqual([]);
    expect(reviewReasons(10, NONE, false, { ...RULES, reviewNewPixKey: true })).toEqual(['new_pix_key']);
    expect(reviewReasons(10, NONE, true, { ...RULES, reviewNewPixKey: true })).toEqual([]);
  });

  it('gives every reason that applies, in a fixed order', () => {
    expect(
      reviewReasons(1500, { count: 3, amount: 1000 }, false, { ...RULES, reviewNewPixKey: true }),
    ).toEqual(['amount_over_auto_limit', 'daily_count_cap', 'daily_amount_cap', 'new_pix_key']);
  });
});

describe('windowStart', () => {
  it('is 24 hours before the request', () => {
    const now = new Date('2026-11-28T12:00:00.000Z');
    expect(windowStart(now).toISOString()).toBe('2026-11-27T12:00:00.000Z');
    expect(AUTO_APPROVAL_WINDOW_MS).toBe(86_400_000);
  });
});
