// `npm run bench:webhooks`: how fast the webhook dispatcher delivers, and how soon after the event. It
// starts payments, orders, the webhook dispatcher and the gateway from their builds, and receiver.mjs
// (bare `node:http` servers on loopback answering 200 at once) as a child process of its own. Then:
//
// 1. throughput: a backlog of due deliveries, written straight into webhooks.deliveries with the
//    columns fanOut writes and a real order.created payload, spread over BENCH_DESTINATIONS webhooks
//    (one receiver port each); the dispatcher's delivery rate while it drains the backlog, beside a
//    bare loop of undici POSTs of the same body to the same receivers with the same concurrency (the
//    ceiling); BENCH_ROUNDS rounds of both, in alternating order, each side's median reported;
// 2. latency: events made through the gateway at BENCH_RATE per second (order_item.shipped from tracking
//    updates by default, order.created from new orders with BENCH_EVENTS=created), each fanning out to
//    two webhooks; the time from the event's commit (`occurred_at`) to the first attempt's arrival at
//    the healthy receiver, p50 and p99;
// 3. isolation: the same run with the second destination answering after BENCH_SLOW_MS; the healthy
//    destination's p99 against the run before.
// The result is a report: exit code 0 whether the targets pass or not, non-zero only if the bench broke.
//
// Environment: BENCH_DURATION (s per latency run, default 10), BENCH_WARMUP (s, default 3), BENCH_RATE
// (events/s, default 200), BENCH_EVENTS (shipped or created), BENCH_MAX_IN_FLIGHT (default 64),
// BENCH_BACKLOG (deliveries per round, default 20000), BENCH_ROUNDS (default 3), BENCH_DESTINATIONS (default WEBHOOK_CONCURRENCY /
// WEBHOOK_DESTINATION_CONCURRENCY), BENCH_SLOW_MS (default 2000), the dispatcher's WEBHOOK_CONCURRENCY,
// WEBHOOK_DESTINATION_CONCURRENCY and WEBHOOK_POLL_INTERVAL_MS (its defaults), BENCH_VERBOSE=1 and
// BENCH_PROFILE=<dir> as in the other benches. The plumbing is in ../lib.mjs.
import { randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import {
  ROOT,
  createKey,
  dropDatabase,
  freePort,
  nthCpf,
  printLogSummary,
  runBench,
  serviceEnv,
  servicePorts,
  serviceUrl,
  startProcess,
  startService,
  waitReady,
} from '../lib.mjs';
import { runHelpers } from './helpers.mjs';
import { latencyAndIsolation } from './latency.mjs';
import { printProfiles, report, windows } from './report.mjs';
import {
  CONCURRENCY,
  DATABASE,
  DATABASE_URL,
  DESTINATION_CONCURRENCY,
  DESTINATIONS,
  POLL_INTERVAL_MS,
  PROFILE_DIR,
} from './settings.mjs';
import { setUp } from './setup.mjs';
import { throughput } from './throughput.mjs';

const require = createRequire(import.meta.url);
const pg = require('pg');

// Stages: settings.mjs (knobs and targets), setup.mjs, throughput.mjs, latency.mjs, report.mjs; the
// CPU accounting in cpu.mjs and the helpers bound to the run's services in helpers.mjs.

async function main() {
  // A clean database every run: no deliveries left pending by the last one (its slow destination's
  // backlog, say) to be sent to receivers that are gone.
  await dropDatabase(DATABASE);

  const taken = new Set();
  const port = (preferred) => freePort(preferred, taken);
  const ports = await servicePorts(['payments', 'orders', 'webhook-dispatcher', 'gateway'], taken);
  ports.control = await port(13095);
  ports.producer = await port(13096);
  const throughputPorts = [];
  for (let i = 0; i < DESTINATIONS; i += 1) throughputPorts.push(await port(0));
  const healthyPort = await port(0);
  const secondPort = await port(0);

  const url = (p) => `http://127.0.0.1:${p}`;
  const paymentsUrl = serviceUrl(ports, 'payments');
  const ordersUrl = serviceUrl(ports, 'orders');
  const dispatcherUrl = serviceUrl(ports, 'webhook-dispatcher');
  const gatewayUrl = serviceUrl(ports, 'gateway');
  const receiverUrl = url(ports.control);
  const producerUrl = url(ports.producer);
  const apiUrl = `${gatewayUrl}/api/v1`;
  if (PROFILE_DIR) mkdirSync(PROFILE_DIR, { recursive: true });
  const profileName = (name) => ({ profileName: `${name}.cpuprofile` });

  const common = {
    ...process.env,
    // The database must be created on the fly, which the services only do outside production.
    NODE_ENV: 'development',
    LOG_LEVEL: 'warn',
    DATABASE_URL,
    AMQP_URL: 'amqp://guest:guest@127.0.0.1:5672',
    AMQP_NAMESPACE: 'bench.webhooks.',
    SHUTDOWN_TIMEOUT_MS: '5000',
  };
  // Tracing would export a span per request and measure the exporter; keep it off whatever the shell says.
  delete common.OTEL_EXPORTER_OTLP_ENDPOINT;

  console.error(
    `starting payments on ${ports.payments.port}, orders on ${ports.orders.port}, the dispatcher on ` +
      `${ports['webhook-dispatcher'].port}, the gateway on ${ports.gateway.port}, the receivers ` +
      `(control ${ports.control})...`,
  );
  startService('payments', { ...common, ...serviceEnv('payments', ports) }, profileName('payments'));
  startService('orders', { ...common, ...serviceEnv('orders', ports) }, profileName('orders'));
  startService(
    'webhook-dispatcher',
    {
      ...common,
      ...serviceEnv('webhook-dispatcher', ports),
      // The receivers are on loopback; `test` webhooks may reach it with this, `live` ones never.
      WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
      WEBHOOK_CONCURRENCY: String(CONCURRENCY),
      WEBHOOK_DESTINATION_CONCURRENCY: String(DESTINATION_CONCURRENCY),
      WEBHOOK_POLL_INTERVAL_MS: String(POLL_INTERVAL_MS),
    },
    { as: 'dispatcher', ...profileName('dispatcher') },
  );
  startService(
    'gateway',
    {
      ...common,
      REDIS_URL: 'redis://127.0.0.1:6379',
      // A fresh prefix: no rate-limit counters left over from another run or deployment.
      REDIS_KEY_PREFIX: `bench:${randomBytes(6).toString('hex')}:`,
      RATE_LIMIT_PER_MINUTE: '100000000',
      // Withdrawals is not called by this bench; pointed at orders so nothing reaches a stray local
      // process.
      ...serviceEnv('gateway', ports, ordersUrl),
    },
    profileName('gateway'),
  );
  startProcess(
    'receivers',
    path.join(ROOT, 'bench/webhooks/receiver.mjs'),
    {
      ...common,
      PORT: String(ports.control),
      RECEIVER_PORTS: [...throughputPorts, healthyPort, secondPort].join(','),
    },
    profileName('receivers'),
  );
  startProcess(
    'producer',
    path.join(ROOT, 'bench/webhooks/producer.mjs'),
    { ...common, PORT: String(ports.producer) },
    profileName('producer'),
  );
  await Promise.all([
    waitReady('payments', paymentsUrl),
    waitReady('orders', ordersUrl),
    waitReady('dispatcher', dispatcherUrl),
    waitReady('gateway', gatewayUrl),
    waitReady('receivers', receiverUrl),
    waitReady('producer', producerUrl),
  ]);

  const db = new pg.Pool({ connectionString: DATABASE_URL, max: 2, application_name: 'bench' });
  try {
    await bench({ db, apiUrl, receiverUrl, producerUrl, common, throughputPorts, healthyPort, secondPort });
  } finally {
    await db.end().catch(() => undefined);
  }
}

async function bench(ctx) {
  const key = await createKey(ctx.common);
  let cpfSequence = 0;
  const run = {
    ...ctx,
    key,
    ...runHelpers({ db: ctx.db, apiUrl: ctx.apiUrl, receiverUrl: ctx.receiverUrl, key }),
    // Orders as bench/create-order makes them, with a distinct valid CPF each: one customer ordering 200
    // times a second would queue the orders on its row's lock, which is create-order's business, not ours.
    nextCpf: () => nthCpf(cpfSequence++),
    // Set as each run ends, so the profiles have them even if a later stage fails.
    windows,
  };
  const { productId, throughputHooks, sampleBody, payload } = await setUp(run);
  const { idleCpu, ceilingResult, drainResult } = await throughput(run, {
    throughputHooks,
    payload,
    sampleBody,
  });
  const { fast, slow, real, slowBacklog } = await latencyAndIsolation(run, { productId, payload });

  report({
    ceiling: ceilingResult,
    drain: drainResult,
    fast,
    slow,
    real,
    slowBacklog,
    idleCpu,
    envelopeBytes: Buffer.byteLength(sampleBody),
  });
  printLogSummary();
}

await runBench(main, { afterStop: printProfiles });
