/** Platform fee of a charge (docs/payments.md, "Fees"), in integer cents. */
export interface Fee {
  fee_amount: number;
  net_amount: number;
}

const BPS_DENOMINATOR = 10_000n;

function nonNegativeSafeInteger(label: string, value: number): bigint {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(`${label} must be a non-negative safe integer, got ${value}`);
  }
  return BigInt(value);
}

/**
 * `fee = round_half_up(gross * bps / 10000) + fixed`, never above gross; `net = gross - fee`.
 * BigInt throughout: `gross * bps` leaves the safe-integer range for large amounts (999999999999 cents
 * times a few thousand bps), and no step goes through a binary float.
 */
export function computeFee(grossCents: number, bps: number, fixedCents: number): Fee {
  const gross = nonNegativeSafeInteger('grossCents', grossCents);
  const rate = nonNegativeSafeInteger('bps', bps);
  const fixed = nonNegativeSafeInteger('fixedCents', fixedCents);
  // Half up for non-negative values: add half the denominator, then floor (BigInt division truncates).
  const proportional = (gross * rate + BPS_DENOMINATOR / 2n) / BPS_DENOMINATOR;
  const uncapped = proportional + fixed;
  const fee = uncapped > gross ? gross : uncapped;
  return { fee_amount: Number(fee), net_amount: Number(gross - fee) };
}
