import { ConfigError, commonEnv, env, loadConfig } from '@seller-api/service-kit';
import { z } from 'zod';
import { normaliseMerchantText } from './domain/brcode';

/** PSP adapters (decisions.md 6): `sandbox` makes the BR Code locally; `bacen-api-pix` speaks API Pix. */
export const PIX_PSPS = ['sandbox', 'bacen-api-pix'] as const;
export type PixPspName = (typeof PIX_PSPS)[number];

/** The sandbox's receiving key: a fixed random-type (UUID) PIX key, so sandbox codes stay recognisable. */
export const DEFAULT_PIX_KEY = '7d9f0335-8dcd-4b5c-9b3e-2f6a4c1e8a52';

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
  PIX_PSP: z.enum(PIX_PSPS).default('sandbox'),
  /** Receiving key written into static BR Codes (field 26/01): printable ASCII, at most 77 characters. */
  PIX_KEY: z
    .string()
    .regex(/^[\x21-\x7e]{1,77}$/, { error: 'Must be a PIX key of 1 to 77 printable ASCII characters' })
    .default(DEFAULT_PIX_KEY),
  PIX_MERCHANT_NAME: merchantText(25).default('SELLER API'),
  PIX_MERCHANT_CITY: merchantText(15).default('SAO PAULO'),
  /** Platform fee in basis points of the gross amount (decisions.md 5). */
  PLATFORM_FEE_BPS: nonNegativeInt.default(399),
  /** Fixed platform fee in cents, added to the proportional part. */
  PLATFORM_FEE_FIXED_AMOUNT: nonNegativeInt.default(0),
};

export const BACEN_API_PIX_UNAVAILABLE =
  'PIX_PSP: bacen-api-pix is not available yet; it arrives with the payment-lifecycle work. Use sandbox.';

export type PaymentsConfig = ReturnType<typeof loadPaymentsConfig>;

export function loadPaymentsConfig(source: NodeJS.ProcessEnv = process.env) {
  const config = loadConfig(paymentsEnv, source);
  if (config.PIX_PSP === 'bacen-api-pix') {
    throw new ConfigError([BACEN_API_PIX_UNAVAILABLE]);
  }
  return config;
}
