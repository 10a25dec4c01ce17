import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { DEFAULT_URLS } from './servers';

export const INTERNAL_SECRET = 'test-internal-secret-0123456789';

/**
 * Each jest worker gets its own database; each test file its own exchange and queue names and Redis key
 * prefix, so tests never see each other's data or messages.
 */
export function testEnv(overrides: Record<string, string> = {}): NodeJS.ProcessEnv {
  const worker = process.env.JEST_WORKER_ID ?? '0';
  const database = new URL(process.env.DATABASE_URL ?? DEFAULT_URLS.DATABASE_URL);
  database.pathname = `/seller_api_test_w${worker}`;
  const file = path
    .basename(expect.getState().testPath ?? 'unknown', '.test.ts')
    .replace(/[^a-z0-9]/gi, '')
    .toLowerCase();
  const run = randomBytes(4).toString('hex');
  return {
    NODE_ENV: 'test',
    LOG_LEVEL: 'silent',
    DATABASE_URL: database.toString(),
    REDIS_URL: process.env.REDIS_URL ?? DEFAULT_URLS.REDIS_URL,
    REDIS_KEY_PREFIX: `test:${file}:${run}:`,
    AMQP_URL: process.env.AMQP_URL ?? DEFAULT_URLS.AMQP_URL,
    AMQP_NAMESPACE: `test.${file}.`,
    INTERNAL_SECRET,
    PORT: '0',
    METRICS_PORT: '0',
    ...overrides,
  };
}
