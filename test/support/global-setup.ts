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
 * set (as on the CI machines), else the local defaults, else containers where a container runtime
 * answers, else stop with a message that says what to start.
 */
export default async function globalSetup(): Promise<void> {
  const urls = {
    DATABASE_URL: process.env.DATABASE_URL ?? DEFAULT_URLS.DATABASE_URL,
    REDIS_URL: process.env.REDIS_URL ?? DEFAULT_URLS.REDIS_URL,
    AMQP_URL: process.env.AMQP_URL ?? DEFAULT_URLS.AMQP_URL,
  };
  const checks = await Promise.all([
    reachable(urls.DATABASE_URL, 5432),
    reachable(urls.REDIS_URL, 6379),
    reachable(urls.AMQP_URL, 5672),
  ]);
  if (checks.every(Boolean)) {
    Object.assign(process.env, urls);
    await sweepQueues(urls.AMQP_URL);
    return;
  }
  const started = await startContainers().catch((err: Error) => err);
  if (started instanceof Error) {
    const missing = ['PostgreSQL (DATABASE_URL)', 'Redis (REDIS_URL)', 'RabbitMQ (AMQP_URL)'].filter(
      (_, i) => !checks[i],
    );
    throw new Error(
      `Integration tests need ${missing.join(', ')}, which did not answer, and no container runtime could start them ` +
        `(${started.message}). Start the servers (see README, "Running the tests") or set the URLs.`,
    );
  }
  Object.assign(process.env, started);
}

async function startContainers(): Promise<Record<string, string>> {
  const { GenericContainer, Wait } = await import('testcontainers');
  const [pg, redis, rabbit] = await Promise.all([
    new GenericContainer('postgres:15')
      .withEnvironment({ POSTGRES_HOST_AUTH_METHOD: 'trust' })
      .withExposedPorts(5432)
      .withWaitStrategy(Wait.forLogMessage(/ready to accept connections/, 2))
      .start(),
    new GenericContainer('redis:7').withExposedPorts(6379).start(),
    new GenericContainer('rabbitmq:3.10')
      .withExposedPorts(5672)
      .withWaitStrategy(Wait.forLogMessage(/Server startup complete/))
      .start(),
  ]);
  return {
    DATABASE_URL: `postgres://postgres@${pg.getHost()}:${pg.getMappedPort(5432)}/postgres`,
    REDIS_URL: `redis://${redis.getHost()}:${redis.getMappedPort(6379)}`,
    AMQP_URL: `amqp://guest:guest@${rabbit.getHost()}:${rabbit.getMappedPort(5672)}`,
  };
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
