import { apiPixEnv, apiPixEnvProblems, apiPixUrls, sameApiUrl } from '@seller-api/api-pix';
import { ConfigError, calleeSecret, commonEnv, env, loadConfig } from '@seller-api/service-kit';
import { z } from 'zod';

/**
 * Payout adapters: `sandbox` pays at once (and fails for the key fail@example.com); `bacen-api-pix`
 * sends the PIX through a PSP's API of the API Pix family (clients/bacen-api-pix-payouts.ts). One per
 * environment: `PAYOUT_PSP` for `live`, `PAYOUT_PSP_TEST` for `test`, which is the sandbox unless it
 * names a PSP's homologation endpoint, so test keys never move real money (docs/finance.md).
 */
export const PAYOUT_PSPS = ['sandbox', 'bacen-api-pix'] as const;
export type PayoutPspName = (typeof PAYOUT_PSPS)[number];

const pixKey = () =>
  z
    .string()
    .regex(/^[\x21-\x7e]{1,77}$/, { error: 'Must be a PIX key of 1 to 77 printable ASCII characters' })
    .optional();

const cents = z.coerce.number().int().min(0).max(999_999_999_999);

export const withdrawalsEnv = {
  ...commonEnv,
  PORT: env.port.default(3003),
  METRICS_PORT: env.port.default(9003),
  /** Smallest withdrawal, in cents (docs/finance-api.md). */
  WITHDRAWAL_MIN_AMOUNT: cents.min(1).default(100),
  /** Withdrawals below this amount (cents) are approved without an operator; 0 turns it off. */
  WITHDRAWAL_AUTO_APPROVE_BELOW: cents.default(0),
  /** The live environment's payout PSP. */
  PAYOUT_PSP: z.enum(PAYOUT_PSPS).default('sandbox'),
  /** The test environment's: the sandbox, or a PSP's homologation endpoint (the PAYOUT_PSP_TEST_ group). */
  PAYOUT_PSP_TEST: z.enum(PAYOUT_PSPS).default('sandbox'),
  /** How often the payout worker looks for approved withdrawals and for payouts to ask about again. */
  PAYOUT_INTERVAL_MS: z.coerce.number().int().positive().default(1_000),
  /** A payout still PROCESSING after this long (a crash, a PSP that answered "in progress") is retried. */
  PAYOUT_RETRY_AFTER_MS: z.coerce.number().int().positive().default(60_000),
  /** Payments, whose charges the ledger's reconciliation reads (`GET /internal/transactions/`). */
  PAYMENTS_URL: z.url().default('http://127.0.0.1:3002'),
  /** Payments' INTERNAL_SECRET, which those reads (and the refund-hold sweep's) are signed with; unset, withdrawals' own. */
  PAYMENTS_INTERNAL_SECRET: calleeSecret(),
  /** How often the ledger is reconciled with payments (docs/finance.md, "Reconciliation"); 0 turns it off. */
  RECONCILE_INTERVAL_MS: z.coerce.number().int().min(0).default(300_000),
  /**
   * How often a scheduled run also compares every balance row with the sum of its lines: that reads the
   * whole journal, so it has its own, longer interval; 0: never on the timer (the CLI still checks).
   */
  RECONCILE_DRIFT_INTERVAL_MS: z.coerce.number().int().min(0).default(3_600_000),
  /**
   * Changes younger than this are left to a later run: their events normally arrive within seconds. Keep
   * it above the longest charge transaction (a refund waits for the PSP) plus the clocks' skew.
   */
  RECONCILE_GRACE_MS: z.coerce.number().int().min(0).default(60_000),
  /** PAYOUT_PSP=bacen-api-pix: the live payout PSP's API Pix (`PAYOUT_PSP_API_URL`, ...: api-pix apiPixEnv). */
  ...apiPixEnv('PAYOUT_PSP_'),
  /** PAYOUT_PSP=bacen-api-pix: our paying key at the PSP (`pagador.chave`), the account payouts leave from. */
  PAYOUT_PIX_KEY: pixKey(),
  /** PAYOUT_PSP_TEST=bacen-api-pix: the homologation PSP (`PAYOUT_PSP_TEST_API_URL`, ...). */
  ...apiPixEnv('PAYOUT_PSP_TEST_'),
  /** PAYOUT_PSP_TEST=bacen-api-pix: our paying key at the homologation PSP. */
  PAYOUT_PIX_KEY_TEST: pixKey(),
};

const SELECTOR = 'PAYOUT_PSP is bacen-api-pix';
const TEST_SELECTOR = 'PAYOUT_PSP_TEST is bacen-api-pix';

export type WithdrawalsConfig = ReturnType<typeof loadWithdrawalsConfig>;

/**
 * The withdrawals configuration, every bad variable named in one ConfigError: the shape's own checks
 * plus what depends on PAYOUT_PSP and PAYOUT_PSP_TEST (bacen-api-pix needs its PSP's URL, credentials
 * and paying key), and that the test environment's PSP is not the live one.
 */
export function loadWithdrawalsConfig(source: NodeJS.ProcessEnv = process.env) {
  let config: ReturnType<typeof loadConfig<typeof withdrawalsEnv>> | null = null;
  const problems: string[] = [];
  try {
    config = loadConfig(withdrawalsEnv, source);
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    problems.push(...err.problems);
  }
  const named = (name: string) => problems.some((problem) => problem.startsWith(`${name}:`));
  const live = source.PAYOUT_PSP === 'bacen-api-pix';
  const test = source.PAYOUT_PSP_TEST === 'bacen-api-pix';
  if (live) {
    problems.push(...apiPixEnvProblems(source, 'PAYOUT_PSP_', SELECTOR, named));
    if (!source.PAYOUT_PIX_KEY && !named('PAYOUT_PIX_KEY')) {
      problems.push(`PAYOUT_PIX_KEY: Required when ${SELECTOR}`);
    }
  }
  if (test) {
    problems.push(...apiPixEnvProblems(source, 'PAYOUT_PSP_TEST_', TEST_SELECTOR, named));
    if (!source.PAYOUT_PIX_KEY_TEST && !named('PAYOUT_PIX_KEY_TEST')) {
      problems.push(`PAYOUT_PIX_KEY_TEST: Required when ${TEST_SELECTOR}`);
    }
  }
  // The test environment never moves real money: its payouts never leave through the live PSP.
  if (
    live &&
    test &&
    sameApiUrl(source.PAYOUT_PSP_TEST_API_URL, source.PAYOUT_PSP_API_URL) &&
    !named('PAYOUT_PSP_TEST_API_URL')
  ) {
    problems.push("PAYOUT_PSP_TEST_API_URL: Must not be the live PSP's PAYOUT_PSP_API_URL");
  }
  // Nor from the live paying account, whichever PSP carries them.
  if (live && test && source.PAYOUT_PIX_KEY_TEST && source.PAYOUT_PIX_KEY_TEST === source.PAYOUT_PIX_KEY) {
    problems.push('PAYOUT_PIX_KEY_TEST: Must not be the live paying key PAYOUT_PIX_KEY');
  }
  if (problems.length > 0 || config === null) throw new ConfigError(problems);
  const urls = apiPixUrls(config.PAYOUT_PSP_API_URL, config.PAYOUT_PSP_TOKEN_URL);
  const testUrls = apiPixUrls(config.PAYOUT_PSP_TEST_API_URL, config.PAYOUT_PSP_TEST_TOKEN_URL);
  return {
    ...config,
    PAYOUT_PSP_API_URL: urls.apiUrl,
    PAYOUT_PSP_TOKEN_URL: urls.tokenUrl,
    PAYOUT_PSP_TEST_API_URL: testUrls.apiUrl,
    PAYOUT_PSP_TEST_TOKEN_URL: testUrls.tokenUrl,
  };
}
