import { deriveCallKey } from './identity';

/**
 * Values that were ever written in docker-compose.yml, the docs or the code as defaults: anyone can
 * read them, so production refuses them as keys or secrets (config.ts). Add a value here whenever one
 * is published; never remove one.
 */
const SERVICES = ['gateway', 'orders', 'payments', 'withdrawals', 'webhook-dispatcher'];
const PUBLISHED = [
  'dev-internal-secret-change-me',
  'change-me-in-dev-only',
  'orders-internal-dev-only',
  'payments-internal-dev-only',
  'withdrawals-internal-dev-only',
  'webhooks-internal-dev-only',
  'test-internal-secret-0123456789',
  'test-gateway-secret-0123456789',
  'test-orders-secret-0123456789',
  'test-payments-secret-0123456789',
  'test-withdrawals-secret-0123456789',
  'test-webhooks-secret-0123456789',
];

let known: Set<string> | null = null;

/** Whether `value` is a published value: a default of any release, or derived from one. */
export function isKnownSecret(value: string): boolean {
  if (!known) {
    const devKeys = SERVICES.map((s) => `dev-internal-key-${s}-change-me-0000000000`);
    known = new Set([
      ...PUBLISHED,
      ...devKeys,
      // What a callee is given for a development key: as public as the key.
      ...devKeys.flatMap((key) => SERVICES.map((callee) => deriveCallKey(key, callee))),
    ]);
  }
  return known.has(value);
}
