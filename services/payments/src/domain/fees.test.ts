import { computeFee } from './fees';

describe('computeFee', () => {
  it('applies the default 399 bps to a gross of 15000 (598.5 rounds half up to 599)', () => {
    expect(computeFee(15000, 399, 0)).toEqual({ fee_amount: 599, net_amount: 14401 });
  });

  it('rounds half up exactly at .5 and down just below it', () => {
    // 1 bps of 5000 is 0.5 -> 1; of 4999 is 0.4999 -> 0; of 15000 is 1.5 -> 2; of 14999 is 1.4999 -> 1.
    expect(computeFee(5000, 1, 0).fee_amount).toBe(1);
    expect(computeFee(4999, 1, 0).fee_amount).toBe(0);
    expect(computeFee(15000, 1, 0).fee_amount).toBe(2);
    expect(computeFee(14999, 1, 0).fee_amount).toBe(1);
    // 399 bps: 12531 * 0.0399 = 499.9869 -> 500; 1253 * 0.0399 = 49.9947 -> 50; 100 * 0.0399 = 3.99 -> 4.
    expect(computeFee(12531, 399, 0).fee_amount).toBe(500);
    expect(computeFee(1253, 399, 0).fee_amount).toBe(50);
    expect(computeFee(100, 399, 0).fee_amount).toBe(4);
    // 2.5 -> 3 and 2.4999 -> 2.
    expect(computeFee(25000, 1, 0).fee_amount).toBe(3);
    expect(computeFee(24999, 1, 0).fee_amount).toBe(2);
    // 3 bps: 50000 * 0.0003 = 15 exactly, no rounding.
    expect(computeFee(50000, 3, 0).fee_amount).toBe(15);
  });

  it('adds the fixed part after rounding', () => {
    expect(computeFee(15000, 399, 50)).toEqual({ fee_amount: 649, net_amount: 14351 });
    expect(computeFee(15000, 0, 50)).toEqual({ fee_amount: 50, net_amount: 14950 });
  });

  it('never takes more than the gross amount', () => {
    expect(computeFee(30, 399, 100)).toEqual({ fee_amount: 30, net_amount: 0 });
    expect(computeFee(1, 20000, 0)).toEqual({ fee_amount: 1, net_amount: 0 });
    expect(computeFee(100, 10000, 1)).toEqual({ fee_amount: 100, net_amount: 0 });
    // Exactly the gross is allowed and not capped further.
    expect(computeFee(100, 0, 100)).toEqual({ fee_amount: 100, net_amount: 0 });
  });

  it('charges nothing with a zero rate and no fixed part', () => {
    expect(computeFee(999_999_999_999, 0, 0)).toEqual({ fee_amount: 0, net_amount: 999_999_999_999 });
  });

  it('stays exact at the largest gross, where gross * bps leaves the safe-integer range', () => {
    // 999999999999 * 399 / 10000 = 39899999999.96... -> 39900000000.
    expect(computeFee(999_999_999_999, 399, 0)).toEqual({
      fee_amount: 39_900_000_000,
      net_amount: 960_099_999_999,
    });
    // 999999999999 * 9999 = 9998999999990001 > 2^53; / 10000 = 999899999999.0001 -> 999899999999.
    expect(computeFee(999_999_999_999, 9999, 0)).toEqual({
      fee_amount: 999_899_999_999,
      net_amount: 100_000_000,
    });
    // 999999995001 * 9999 = 9998999950014999; / 10000 = 999899995001.4999 -> 999899995001, where
    // Math.round(gross * bps / 10000) in floating point gives 999899995002.
    expect(computeFee(999_999_995_001, 9999, 0).fee_amount).toBe(999_899_995_001);
    // Exact, exactly half and just under half near the top of the range.
    // 999999999999 * 5 / 10000 = 499999999.9995 -> 500000000.
    expect(computeFee(999_999_999_999, 5, 0).fee_amount).toBe(500_000_000);
    expect(computeFee(999_995_000_000, 1, 0).fee_amount).toBe(99_999_500);
    expect(computeFee(999_999_995_000, 1, 0).fee_amount).toBe(100_000_000);
    expect(computeFee(999_999_994_999, 1, 0).fee_amount).toBe(99_999_999);
  });

  it('keeps fee + net equal to gross', () => {
    for (const gross of [1, 2, 99, 100, 101, 12345, 999_999, 123_456_789_012]) {
      for (const bps of [0, 1, 399, 5000, 10000, 12000]) {
        const { fee_amount, net_amount } = computeFee(gross, bps, 7);
        expect(fee_amount + net_amount).toBe(gross);
        expect(net_amount).toBeGreaterThanOrEqual(0);
        expect(Number.isInteger(fee_amount)).toBe(true);
      }
    }
  });

  it('refuses non-integer or negative inputs', () => {
    expect(() => computeFee(10.5, 399, 0)).toThrow(RangeError);
    expect(() => computeFee(-1, 399, 0)).toThrow(RangeError);
    expect(() => computeFee(100, -1, 0)).toThrow(RangeError);
    expect(() => computeFee(100, 399, 0.1)).toThrow(RangeError);
    expect(() => computeFee(2 ** 53, 399, 0)).toThrow(RangeError);
  });
});
