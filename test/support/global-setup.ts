import { readdirSync } from 'node:fs';
import path from 'node:path';
import { topology as ordersTopology } from '../../services/orders/src/events/topology';
import { topology as withdrawalsTopology } from '../../services/withdrawals/src/events/topology';
import { topology as dispatcherTopology } from '../../services/webhook-dispatcher/src/events/topology';
import { testNames } from './env';
import { deleteQueues } from './queues';
import { DEFAULT_URLS, reachable } from './servers';

/**
 * Integration tests need PostgreSQL, Redis and RabbitMQ. Use DATABASE_URL, REDIS_URL and AMQP_URL when
 * set (as on the CI machines), else the local defaults; when one does not answer, stop with a message
 * that says which server to start and where it was looked for.
 */
export default async function globalSetup(): Promise<void> {
  const urls = {
    DATABASE_URL: process.env.DATABASE_URL ?? DEFAULT_URLS.DATABASE_URL,
    REDIS_URL: process.env.REDIS_URL ?? DEFAULT_URLS.REDIS_URL,
    AMQP_URL: process.env.AMQP_URL ?? DEFAULT_URLS.AMQP_URL,
  };
  const servers = [
    { name: 'PostgreSQL', variable: 'DATABASE_URL', url: urls.DATABASE_URL, port: 5432 },
    { name: 'Redis', variable: 'REDIS_URL', url: urls.REDIS_URL, port: 6379 },
    { name: 'RabbitMQ', variable: 'AMQP_URL', url: urls.AMQP_URL, port: 5672 },
  ];
  const checks = await Promise.all(servers.map((s) => reachable(s.url, s.port)));
  const missing = servers.filter((_, i) => !checks[i]);
  if (missing.length > 0) {
    const list = missing
      .map(
        (s) => `${s.name} at ${redact(s.url)} (${s.variable}${process.env[s.variable] ? '' : ', default'})`,
      )
      .join('; ');
    throw new Error(
      `Integration tests need ${list}, which did not answer. Start ${missing.map((s) => s.name).join(', ')} ` +
        `(see README, "Running the tests": .ci/run starts all three) or set ${missing.map((s) => s.variable).join(', ')} ` +
        `to servers that answer.`,
    );
  }
  Object.assign(process.env, urls);
  await sweepQueues(urls.AMQP_URL);
}

/** The URL without its password, for the message. */
function redact(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = '***';
  return parsed.toString();
}

/**
 * Removes the services' queues that a run stopped midway left behind (a file removes its own when it
 * ends: support/system.ts). Quorum queues hold RabbitMQ's file handles, so leftovers of many aborted
 * runs would leave none for connections (support/events.ts, deleteQueues).
 */
async function sweepQueues(amqpUrl: string): Promise<void> {
  const root = path.resolve(__dirname, '..');
  const files = readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((f) =>
    f.endsWith('.test.ts'),
  );
  const names = [ordersTopology, withdrawalsTopology, dispatcherTopology].flatMap((t) =>
    t.queues.map((q) => q.name),
  );
  await Promise.all(
    files.map((file) => deleteQueues(amqpUrl, testNames(path.join(root, file)).namespace, names)),
  );
}
