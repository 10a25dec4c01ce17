import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { DEFAULT_URLS } from './servers';

/** The key the dispatcher seals webhook secrets with in tests (32 bytes, hex). */
export const WEBHOOK_SECRETS_KEY = '7465737420776562686f6f6b20736563726574732020206b65792030312e2e2e';

/**
 * Each test file gets its own database (so a worker never shares one between files, nor two jest runs
 * at once), its own exchange and queue names and its own Redis key prefix: tests never see each other's
 * data or messages, and no outbox relay of one file can publish another file's rows.
 */
const slug = (text: string) => text.replace(/[^a-z0-9]/gi, '').toLowerCase();

/** The folder and file slugs of a test file, which name its database, queues and keys. */
export function testNames(testPath: string): { folder: string; file: string; namespace: string } {
  // TEST_RUN_TAG keeps two checkouts' runs on one machine apart (names and the start-up queue sweep).
  const tag = slug(process.env.TEST_RUN_TAG ?? '');
  const file = slug(path.basename(testPath, '.test.ts'));
  const folder = `${tag ? `${tag}_` : ''}${slug(path.basename(path.dirname(testPath)))}`;
  return { folder, file, namespace: `test.${folder}.${file}.` };
}

export function testEnv(overrides: Record<string, string> = {}): NodeJS.ProcessEnv {
  const testPath = expect.getState().testPath ?? 'unknown';
  const { folder, file, namespace } = testNames(testPath);
  const database = new URL(process.env.DATABASE_URL ?? DEFAULT_URLS.DATABASE_URL);
  database.pathname = `/sa_test_${folder}_${file}`.slice(0, 63);
  const run = randomBytes(4).toString('hex');
  return {
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    DATABASE_URL: database.toString(),
    REDIS_URL: process.env.REDIS_URL ?? DEFAULT_URLS.REDIS_URL,
    REDIS_KEY_PREFIX: `test:${file}:${run}:`,
    AMQP_URL: process.env.AMQP_URL ?? DEFAULT_URLS.AMQP_URL,
    AMQP_NAMESPACE: namespace,
    PORT: '0',
    METRICS_PORT: '0',
    // Receivers in tests listen on loopback, and retries run in milliseconds.
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    WEBHOOK_RETRY_SCHEDULE: '50ms',
    WEBHOOK_POLL_INTERVAL_MS: '100',
    WEBHOOK_SECRETS_KEY,
    EXPIRY_INTERVAL_MS: '100',
    PSP_WEBHOOK_SECRET: 'test-psp-webhook-secret',
    // The ledger's reconciliation runs when a test asks (test/withdrawals/reconciliation.test.ts), not
    // on a timer in the middle of other tests.
    RECONCILE_INTERVAL_MS: '0',
    ...overrides,
  };
}
