import { apiPixEnv, apiPixEnvNames, apiPixEnvProblems, apiPixUrls, sameApiUrl } from '@seller-api/api-pix';
import { ConfigError, calleeSecret, commonEnv, env, loadConfig } from '@seller-api/service-kit';
import { z } from 'zod';
import { EFI_HOMOLOGATION_URL, EFI_PRODUCTION_URL } from './clients/efi-payouts';

/**
 * Payout adapters (docs/finance.md, "Payouts"): `sandbox` pays at once (and fails for the key
 * fail@example.com); `efi` sends the PIX through Efí's Pix send API (clients/efi-payouts.ts). One per
 * environment: `PAYOUT_PSP` for `live`, `PAYOUT_PSP_TEST` for `test`, which is the sandbox unless it
 * names a PSP's homologation endpoint, so test keys never move real money.
 */
export const PAYOUT_PSPS = ['sandbox', 'efi'] as const;
export type PayoutPspName = (typeof PAYOUT_PSPS)[number];

/** Former values, refused with what to use instead. */
const REMOVED_PSPS: Record<string, string> = {
  'bacen-api-pix':
    "bacen-api-pix was removed: API Pix defines no payout route and that adapter spoke no PSP's API; use efi (Efí's Pix send API) or sandbox",
};

const payoutPsp = () =>
  z.enum(PAYOUT_PSPS, {
    error: (issue) =>
      (typeof issue.input === 'string' && REMOVED_PSPS[issue.input]) ||
      `Must be one of ${PAYOUT_PSPS.join(', ')}`,
  });

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
  /**
   * At most this many withdrawals per seller and environment are approved without an operator in any
   * rolling 24 hours; the next wait for one (docs/finance.md, "Payout controls"). 0: no cap.
   */
  WITHDRAWAL_AUTO_APPROVE_DAILY_COUNT: z.coerce.number().int().min(0).max(1_000_000).default(10),
  /** At most this many cents per seller and environment approved without an operator in 24 h; 0: no cap. */
  WITHDRAWAL_AUTO_APPROVE_DAILY_AMOUNT: cents.default(500_000),
  /** true: a withdrawal to a PIX key the seller was never paid to waits for an operator. */
  WITHDRAWAL_NEW_PIX_KEY_REVIEW: env.bool.default(false),
  /** The live environment's payout PSP. */
  PAYOUT_PSP: payoutPsp().default('sandbox'),
  /** The test environment's: the sandbox, or a PSP's homologation endpoint (the PAYOUT_PSP_TEST_ group). */
  PAYOUT_PSP_TEST: payoutPsp().default('sandbox'),
  /** How often the payout worker looks for approved withdrawals and for payouts to ask about again. */
  PAYOUT_INTERVAL_MS: z.coerce.number().int().positive().default(1_000),
  /** A payout still PROCESSING after this long (a crash, a PSP that answered "in progress") is retried. */
  PAYOUT_RETRY_AFTER_MS: z.coerce.number().int().positive().default(60_000),
  /** Payments, whose charges the ledger's reconciliation reads (`GET /internal/transactions/`). */
  PAYMENTS_URL: z.url().default('http://127.0.0.1:3002'),
  /** Payments' secret of the previous release, while a deployment is upgraded (docs/deploy.md). */
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
  /**
   * PAYOUT_PSP=efi: the live payout PSP's connection (`PAYOUT_PSP_API_URL`, ...: api-pix apiPixEnv); the
   * URL is Efí's production host when unset.
   */
  ...apiPixEnv('PAYOUT_PSP_'),
  /** PAYOUT_PSP=efi: our paying key at the PSP (`pagador.chave`), the account payouts leave from. */
  PAYOUT_PIX_KEY: pixKey(),
  /** PAYOUT_PSP_TEST=efi: the homologation PSP (`PAYOUT_PSP_TEST_API_URL`, ...: Efí's homologation host when unset). */
  ...apiPixEnv('PAYOUT_PSP_TEST_'),
  /** PAYOUT_PSP_TEST=efi: our paying key at the homologation PSP. */
  PAYOUT_PIX_KEY_TEST: pixKey(),
};

export type WithdrawalsConfig = ReturnType<typeof loadWithdrawalsConfig>;

/** Where each environment's Efí is when its URL is unset: production for live, homologation for test. */
const EFI_DEFAULT_URL = { PAYOUT_PSP_: EFI_PRODUCTION_URL, PAYOUT_PSP_TEST_: EFI_HOMOLOGATION_URL };

/**
 * The withdrawals configuration, every bad variable named in one ConfigError: the shape's own checks
 * plus what depends on PAYOUT_PSP and PAYOUT_PSP_TEST (efi needs its credentials, client certificate
 * and paying key), and that the test environment's payouts can never leave through the live PSP.
 */
export function loadWithdrawalsConfig(source: NodeJS.ProcessEnv = process.env) {
  const live = source.PAYOUT_PSP === 'efi';
  const test = source.PAYOUT_PSP_TEST === 'efi';
  // Efí's hosts are known: an unset URL is the environment's own host, filled in before any check.
  const filled: NodeJS.ProcessEnv = {
    ...source,
    ...(live && !source.PAYOUT_PSP_API_URL ? { PAYOUT_PSP_API_URL: EFI_DEFAULT_URL.PAYOUT_PSP_ } : {}),
    ...(test && !source.PAYOUT_PSP_TEST_API_URL
      ? { PAYOUT_PSP_TEST_API_URL: EFI_DEFAULT_URL.PAYOUT_PSP_TEST_ }
      : {}),
  };
  let config: ReturnType<typeof loadConfig<typeof withdrawalsEnv>> | null = null;
  const problems: string[] = [];
  try {
    config = loadConfig(withdrawalsEnv, filled, { service: 'withdrawals', signs: true });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    problems.push(...err.problems);
  }
  const named = (name: string) => problems.some((problem) => problem.startsWith(`${name}:`));
  const groups = [
    { chosen: live, prefix: 'PAYOUT_PSP_', keyName: 'PAYOUT_PIX_KEY', selector: 'PAYOUT_PSP is efi' },
    {
      chosen: test,
      prefix: 'PAYOUT_PSP_TEST_',
      keyName: 'PAYOUT_PIX_KEY_TEST',
      selector: 'PAYOUT_PSP_TEST is efi',
    },
  ] as const;
  for (const group of groups) {
    if (!group.chosen) continue;
    problems.push(...apiPixEnvProblems(filled, group.prefix, group.selector, named));
    // Efí requires its client certificate on every call, token included ("Credenciais, certificado e
    // autorização"): wherever the URL is Efí's (https), not only in production.
    const names = apiPixEnvNames(group.prefix);
    if ((filled[names.apiUrl] ?? '').toLowerCase().startsWith('https://')) {
      for (const name of [names.certFile, names.keyFile]) {
        if (!filled[name] && !named(name)) {
          problems.push(`${name}: Required when ${group.selector} (Efí requires mutual TLS)`);
        }
      }
    }
    if (!filled[group.keyName] && !named(group.keyName)) {
      problems.push(`${group.keyName}: Required when ${group.selector}`);
    }
  }
  // Production's live withdrawals leave through a real PSP: the sandbox would mark them PAID with an
  // invented end-to-end id and no money would leave.
  if (filled.NODE_ENV === 'production' && !live && !named('PAYOUT_PSP')) {
    problems.push('PAYOUT_PSP: Must be a real PSP (efi) in production, not the sandbox');
  }
  // The test environment never moves real money: its payouts never leave through the live PSP (whatever
  // adapter live is set to), nor through Efí's production host, nor from the live paying account.
  if (test && !named('PAYOUT_PSP_TEST_API_URL')) {
    if (
      (live || source.PAYOUT_PSP_API_URL) &&
      sameApiUrl(filled.PAYOUT_PSP_TEST_API_URL, filled.PAYOUT_PSP_API_URL)
    ) {
      problems.push("PAYOUT_PSP_TEST_API_URL: Must not be the live PSP's PAYOUT_PSP_API_URL");
    } else if (sameApiUrl(filled.PAYOUT_PSP_TEST_API_URL, EFI_PRODUCTION_URL)) {
      problems.push(
        `PAYOUT_PSP_TEST_API_URL: Must not be Efí's production host (use ${EFI_HOMOLOGATION_URL})`,
      );
    }
  }
  if (live && test && filled.PAYOUT_PIX_KEY_TEST && filled.PAYOUT_PIX_KEY_TEST === filled.PAYOUT_PIX_KEY) {
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
