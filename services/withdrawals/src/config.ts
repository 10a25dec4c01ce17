import { commonEnv, env, loadConfig } from '@seller-api/service-kit';
import { z } from 'zod';

/** Payout adapters: `sandbox` pays at once (and fails for the key fail@example.com). */
export const PAYOUT_PSPS = ['sandbox'] as const;
export type PayoutPspName = (typeof PAYOUT_PSPS)[number];

const cents = z.coerce.number().int().min(0).max(999_999_999_999);

export const withdrawalsEnv = {
  ...commonEnv,
  PORT: env.port.default(3003),
  METRICS_PORT: env.port.default(9003),
  /** Smallest withdrawal, in cents (decisions.md 7). */
  WITHDRAWAL_MIN_AMOUNT: cents.min(1).default(100),
  /** Withdrawals below this amount (cents) are approved without an operator; 0 turns it off. */
  WITHDRAWAL_AUTO_APPROVE_BELOW: cents.default(0),
  PAYOUT_PSP: z.enum(PAYOUT_PSPS).default('sandbox'),
  /** How often the payout worker looks for approved withdrawals and for payouts to ask about again. */
  PAYOUT_INTERVAL_MS: z.coerce.number().int().positive().default(1_000),
  /** A payout still PROCESSING after this long (a crash, a PSP that answered "in progress") is retried. */
  PAYOUT_RETRY_AFTER_MS: z.coerce.number().int().positive().default(60_000),
};

export type WithdrawalsConfig = ReturnType<typeof loadWithdrawalsConfig>;

export function loadWithdrawalsConfig(source: NodeJS.ProcessEnv = process.env) {
  return loadConfig(withdrawalsEnv, source);
}
