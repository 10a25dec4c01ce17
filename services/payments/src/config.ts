import { apiPixEnv, apiPixEnvProblems, apiPixUrls, sameApiUrl } from '@seller-api/api-pix';
import { ConfigError, commonEnv, env, loadConfig, pspNotificationMaxBytes } from '@seller-api/service-kit';
import { z } from 'zod';
import { normaliseMerchantText } from './domain/brcode';
import { SANDBOX_REFUNDS } from './domain/psp';
import { normaliseDn } from './http/psp-senders';

/**
 * PSP adapters (docs/payments.md): `sandbox` makes the BR Code locally; `bacen-api-pix` speaks API Pix.
 * One per environment: `PIX_PSP` for `live`, `PIX_PSP_TEST` for `test`, which is the sandbox unless it
 * names a PSP's homologation endpoint, so test keys never move real money (docs/payments.md).
 */
export const PIX_PSPS = ['sandbox', 'bacen-api-pix'] as const;
export type PixPspName = (typeof PIX_PSPS)[number];

/** The sandbox's receiving key: a fixed random-type (UUID) PIX key, so sandbox codes stay recognisable. */
export const DEFAULT_PIX_KEY = '7d9f0335-8dcd-4b5c-9b3e-2f6a4c1e8a52';

const pixKey = () =>
  z
    .string()
    .regex(/^[\x21-\x7e]{1,77}$/, { error: 'Must be a PIX key of 1 to 77 printable ASCII characters' });

const webhookSecret = () =>
  z
    .string()
    .regex(/^[\x21-\x7e]{16,256}$/, { error: 'Must be 16 to 256 printable ASCII characters, no spaces' })
    .optional();

// A distinguished name as `openssl x509 -noout -subject -nameopt RFC2253` prints it (docs/deploy.md).
const distinguishedName = () =>
  z
    .string()
    .max(1024)
    .refine((value) => /^[^=]+=/.test(value) && !/\p{Cc}/u.test(value), {
      error: 'Must be a distinguished name such as CN=pix.psp.example,O=PSP,C=BR (RFC 2253)',
    })
    .optional();

const nonNegativeInt = z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

// What the BR Code writer would print must not be empty once accents and control characters are gone.
const merchantText = (max: number) =>
  z.string().refine((value) => normaliseMerchantText(value, max) !== '', {
    error: 'Must contain printable characters once accents are removed',
  });

export const paymentsEnv = {
  ...commonEnv,
  PORT: env.port.default(3002),
  METRICS_PORT: env.port.default(9002),
  /** The live environment's PSP. */
  PIX_PSP: z.enum(PIX_PSPS).default('sandbox'),
  /** The test environment's PSP: the sandbox, or a PSP's homologation endpoint (the PSP_TEST_ group). */
  PIX_PSP_TEST: z.enum(PIX_PSPS).default('sandbox'),
  /**
   * Due-date charges (API Pix `cobv`, docs/pix.md "Due-date charges") at the live environment's PSP:
   * with bacen-api-pix its token then asks the `cobv.*` scopes too, which a PSP client registered
   * without them may refuse, so they are off until the PSP offers them. The sandbox always makes them.
   */
  PIX_DUE_DATE_CHARGES: env.bool.default(false),
  /** The same for the test environment's PSP (PIX_PSP_TEST). */
  PIX_DUE_DATE_CHARGES_TEST: env.bool.default(false),
  /**
   * Live receiving key: written into static BR Codes (field 26/01) by the sandbox, or the key
   * registered with the PSP (`chave` of a cob). Printable ASCII, at most 77 characters.
   */
  PIX_KEY: pixKey().default(DEFAULT_PIX_KEY),
  /** The test environment's receiving key, the same way; never the live merchant's key. */
  PIX_KEY_TEST: pixKey().default(DEFAULT_PIX_KEY),
  PIX_MERCHANT_NAME: merchantText(25).default('SELLER API'),
  PIX_MERCHANT_CITY: merchantText(15).default('SAO PAULO'),
  /** Platform fee in basis points of the gross amount (docs/payments.md, "Fees"). */
  PLATFORM_FEE_BPS: nonNegativeInt.default(399),
  /** Fixed platform fee in cents, added to the proportional part. */
  PLATFORM_FEE_FIXED_AMOUNT: nonNegativeInt.default(0),
  /** How often the scheduler looks for PENDING charges past their expiry (docs/payments.md, "Expiry"). */
  EXPIRY_INTERVAL_MS: z.coerce.number().int().positive().default(1_000),
  /**
   * Refunds whose end has not arrived are looked up at the PSP (docs/payments.md, "Refunds"): the job
   * runs every REFUND_CHECK_INTERVAL_MS; a refund is first looked up REFUND_CHECK_BASE_MS after it was
   * asked, then with a doubling delay up to REFUND_CHECK_MAX_MS. One still open REFUND_ALERT_AFTER_MS
   * after it was asked counts in payments_refunds_unresolved (the alert).
   */
  REFUND_CHECK_INTERVAL_MS: z.coerce.number().int().positive().default(5_000),
  REFUND_CHECK_BASE_MS: z.coerce.number().int().positive().default(30_000),
  REFUND_CHECK_MAX_MS: z.coerce.number().int().positive().default(3_600_000),
  REFUND_ALERT_AFTER_MS: z.coerce.number().int().positive().default(3_600_000),
  /**
   * How the sandbox PSP refunds (domain/psp.ts): `instant`, or `processing` to try refunds that end
   * later, as a real PSP's do (the refund checks end them; amounts ending in 13 cents fail).
   */
  SANDBOX_REFUNDS: z.enum(SANDBOX_REFUNDS).default('instant'),
  /** PIX_PSP=bacen-api-pix: the live PSP's API Pix (`PSP_API_URL`, `PSP_CLIENT_ID`, ...: api-pix apiPixEnv). */
  ...apiPixEnv('PSP_'),
  /**
   * The per-PSP secret the live PSP's notifications to POST /api/v1/psp/webhook/pix must carry (see
   * clients/bacen-api-pix.ts, PSP_NOTIFICATION_SECRET_HEADER); they apply to live charges only.
   * Required for bacen-api-pix.
   */
  PSP_WEBHOOK_SECRET: webhookSecret(),
  /**
   * The live PSP's TLS client certificate, as the ingress of its notification host verified it
   * (http/psp-senders.ts): its subject, and optionally its issuer, as RFC 2253 distinguished names.
   * Notifications sent with it pay live charges only. With PIX_PSP=bacen-api-pix, this or
   * PSP_WEBHOOK_SECRET is required.
   */
  PSP_CLIENT_CERT_SUBJECT: distinguishedName(),
  PSP_CLIENT_CERT_ISSUER: distinguishedName(),
  /** PIX_PSP_TEST=bacen-api-pix: the homologation PSP (`PSP_TEST_API_URL`, `PSP_TEST_CLIENT_ID`, ...). */
  ...apiPixEnv('PSP_TEST_'),
  /** The homologation PSP's notification secret, on the same route; they apply to test charges only. */
  PSP_TEST_WEBHOOK_SECRET: webhookSecret(),
  /** The homologation PSP's client certificate, the same way; its notifications pay test charges only. */
  PSP_TEST_CLIENT_CERT_SUBJECT: distinguishedName(),
  PSP_TEST_CLIENT_CERT_ISSUER: distinguishedName(),
  /** The largest notification body read, in bytes; the gateway's own cap, set the same (docs/limits.md). */
  PSP_NOTIFICATION_MAX_BYTES: pspNotificationMaxBytes,
};

export type PaymentsConfig = ReturnType<typeof loadPaymentsConfig>;

/**
 * The payments configuration, every bad variable named in one ConfigError: the shape's own checks
 * plus what depends on PIX_PSP and PIX_PSP_TEST (bacen-api-pix needs its PSP's URL, credentials and
 * webhook secret), and what keeps the test environment off the live PSP and the live key.
 */
export function loadPaymentsConfig(source: NodeJS.ProcessEnv = process.env) {
  let config: ReturnType<typeof loadConfig<typeof paymentsEnv>> | null = null;
  const problems: string[] = [];
  try {
    config = loadConfig(paymentsEnv, source, { service: 'payments' });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    problems.push(...err.problems);
  }
  const named = (name: string) => problems.some((problem) => problem.startsWith(`${name}:`));
  const given = (name: string) => (source[name] ?? '') !== '';

  const live = source.PIX_PSP === 'bacen-api-pix';
  const test = source.PIX_PSP_TEST === 'bacen-api-pix';
  if (live) {
    problems.push(...apiPixEnvProblems(source, 'PSP_', 'PIX_PSP is bacen-api-pix', named));
    // Its notifications must be recognised one way or the other (docs/payments.md, "bacen-api-pix").
    if (!given('PSP_WEBHOOK_SECRET') && !given('PSP_CLIENT_CERT_SUBJECT') && !named('PSP_WEBHOOK_SECRET')) {
      problems.push(
        'PSP_WEBHOOK_SECRET: Required when PIX_PSP is bacen-api-pix, unless PSP_CLIENT_CERT_SUBJECT is set',
      );
    }
    if (source.NODE_ENV === 'production' && (!given('PIX_KEY') || source.PIX_KEY === DEFAULT_PIX_KEY)) {
      problems.push("PIX_KEY: Must be set to the merchant's key at the PSP in production");
    }
  }
  if (test) {
    problems.push(...apiPixEnvProblems(source, 'PSP_TEST_', 'PIX_PSP_TEST is bacen-api-pix', named));
    if (
      !given('PSP_TEST_WEBHOOK_SECRET') &&
      !given('PSP_TEST_CLIENT_CERT_SUBJECT') &&
      !named('PSP_TEST_WEBHOOK_SECRET')
    ) {
      problems.push(
        'PSP_TEST_WEBHOOK_SECRET: Required when PIX_PSP_TEST is bacen-api-pix, unless PSP_TEST_CLIENT_CERT_SUBJECT is set',
      );
    }
    if (
      source.NODE_ENV === 'production' &&
      (!given('PIX_KEY_TEST') || source.PIX_KEY_TEST === DEFAULT_PIX_KEY)
    ) {
      problems.push("PIX_KEY_TEST: Must be set to the merchant's key at the homologation PSP in production");
    }
  }
  // Production's live charges are paid by a real PSP: the sandbox would invent their payments.
  if (source.NODE_ENV === 'production' && !live && !named('PIX_PSP')) {
    problems.push('PIX_PSP: Must be a real PSP (bacen-api-pix) in production, not the sandbox');
  }
  // The test environment never moves real money: not through the live PSP (whatever adapter live is
  // set to, the URL may still be the live one), not to the live key.
  if (
    test &&
    given('PSP_API_URL') &&
    sameApiUrl(source.PSP_TEST_API_URL, source.PSP_API_URL) &&
    !named('PSP_TEST_API_URL')
  ) {
    problems.push("PSP_TEST_API_URL: Must not be the live PSP's PSP_API_URL");
  }
  if (live && given('PIX_KEY_TEST') && source.PIX_KEY_TEST === source.PIX_KEY) {
    problems.push("PIX_KEY_TEST: Must not be the live merchant's PIX_KEY");
  }
  // The secret a notification carries tells which environment's charges it may pay.
  if (given('PSP_TEST_WEBHOOK_SECRET') && source.PSP_TEST_WEBHOOK_SECRET === source.PSP_WEBHOOK_SECRET) {
    problems.push('PSP_TEST_WEBHOOK_SECRET: Must differ from PSP_WEBHOOK_SECRET');
  }
  problems.push(...certificateProblems(source, given, named));
  if (problems.length > 0 || config === null) throw new ConfigError(problems);

  const urls = apiPixUrls(config.PSP_API_URL, config.PSP_TOKEN_URL);
  const testUrls = apiPixUrls(config.PSP_TEST_API_URL, config.PSP_TEST_TOKEN_URL);
  return {
    ...config,
    PSP_API_URL: urls.apiUrl,
    PSP_TOKEN_URL: urls.tokenUrl,
    PSP_TEST_API_URL: testUrls.apiUrl,
    PSP_TEST_TOKEN_URL: testUrls.tokenUrl,
  };
}

/**
 * The PSPs' client certificates: an issuer only beside a subject, and never one certificate for both
 * environments (the certificate decides whose charges a notification may pay). Two PSPs may share a
 * subject only when both issuers are given and differ.
 */
function certificateProblems(
  source: NodeJS.ProcessEnv,
  given: (name: string) => boolean,
  named: (name: string) => boolean,
): string[] {
  const problems: string[] = [];
  for (const prefix of ['PSP_', 'PSP_TEST_']) {
    if (given(`${prefix}CLIENT_CERT_ISSUER`) && !given(`${prefix}CLIENT_CERT_SUBJECT`))
      problems.push(`${prefix}CLIENT_CERT_ISSUER: Only with ${prefix}CLIENT_CERT_SUBJECT`);
  }
  const usable = (name: string) => given(name) && !named(name);
  if (!usable('PSP_CLIENT_CERT_SUBJECT') || !usable('PSP_TEST_CLIENT_CERT_SUBJECT')) return problems;
  const same = (a: string, b: string) => normaliseDn(source[a] ?? '') === normaliseDn(source[b] ?? '');
  const issuersDiffer =
    usable('PSP_CLIENT_CERT_ISSUER') &&
    usable('PSP_TEST_CLIENT_CERT_ISSUER') &&
    !same('PSP_CLIENT_CERT_ISSUER', 'PSP_TEST_CLIENT_CERT_ISSUER');
  if (same('PSP_CLIENT_CERT_SUBJECT', 'PSP_TEST_CLIENT_CERT_SUBJECT') && !issuersDiffer)
    problems.push(
      'PSP_TEST_CLIENT_CERT_SUBJECT: Must differ from PSP_CLIENT_CERT_SUBJECT, unless both issuers are set and differ',
    );
  return problems;
}
