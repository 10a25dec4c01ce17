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
/* global fetch, AbortSignal */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ROOT,
  childList,
  createKey,
  dropDatabase,
  freePort,
  intFromEnv,
  nthCpf,
  orderBody,
  percentile,
  printCpuTable,
  printLogSummary,
  printTable,
  runBench,
  serviceEnv,
  servicePorts,
  serviceUrl,
  startProcess,
  startService,
  waitReady,
  withCpu,
  withSessions,
} from '../lib.mjs';
import { dispatcherDefaults, writeDeliveries } from './backlog.mjs';

const require = createRequire(import.meta.url);
const pg = require('pg');
const { Agent, request } = require('undici');

const TARGET_MIN_RATIO = 0.5; // the dispatcher delivers at least half as fast as a bare loop...
const TARGET_MAX_P99_MS = 250; // ...the first attempt arrives within 250 ms of the commit (p99)...
// ...and a slow destination leaves a healthy one's p99 unchanged: within 20 % or 20 ms, the larger.
const TOLERANCE_RATIO = 0.2;
const TOLERANCE_MS = 20;
// The offered rate counts as sustained when the orders created reach 95 % of it.
const SUSTAINED_SHARE = 0.95;
// More than this much of one core used by other work while the bench is idle, and the report says so.
const BUSY_OTHER = 25;

const DATABASE = 'seller_api_bench_webhooks';
const DATABASE_URL = `postgres://postgres@127.0.0.1:5432/${DATABASE}`;

const DURATION = intFromEnv('BENCH_DURATION', 10, 600);
const WARMUP = intFromEnv('BENCH_WARMUP', 3, 600);
const RATE = intFromEnv('BENCH_RATE', 200, 10_000);
// Long enough for both sides to reach their steady rate: a backlog of 5,000 lasts a third of a second
// for the drain and a seventh for the loop, whose rate then moves from 20,000 to 44,000/s between
// rounds of one run (bench/README.md).
const BACKLOG = intFromEnv('BENCH_BACKLOG', 20_000, 1_000_000);
// Under the dispatcher's 10 s attempt timeout: the slow destination answers, late, rather than fails.
const SLOW_MS = intFromEnv('BENCH_SLOW_MS', 2000, 9000);
// The dispatcher's own defaults, read from its build (services/webhook-dispatcher/src/config.ts).
const defaults = await dispatcherDefaults();
const CONCURRENCY = intFromEnv('WEBHOOK_CONCURRENCY', defaults.concurrency, 10_000);
const DESTINATION_CONCURRENCY = intFromEnv(
  'WEBHOOK_DESTINATION_CONCURRENCY',
  defaults.destinationConcurrency,
  10_000,
);
const POLL_INTERVAL_MS = intFromEnv('WEBHOOK_POLL_INTERVAL_MS', defaults.pollIntervalMs, 60_000);
// Enough destinations for the dispatcher's whole budget to be in use (WEBHOOK_DESTINATION_CONCURRENCY
// attempts in flight per destination URL), one receiver port each, as distinct hosts would be.
const DESTINATIONS = intFromEnv('BENCH_DESTINATIONS', Math.ceil(CONCURRENCY / DESTINATION_CONCURRENCY), 256);
const PER_DESTINATION = Math.max(1, Math.round(BACKLOG / DESTINATIONS));
// Throughput rounds, each a bare loop and a drain of BACKLOG: one round is a fraction of a second per
// side, and a machine's speed moves more than that from one second to the next.
const ROUNDS = intFromEnv('BENCH_ROUNDS', 3, 99);
const BACKLOG_TOTAL = PER_DESTINATION * DESTINATIONS;
const PROFILE_DIR = process.env.BENCH_PROFILE ? path.resolve(process.env.BENCH_PROFILE) : null;
// Requests in flight at most (create-order's bench holds 50 connections): when the path that makes the
// events cannot keep up, a request due is not sent rather than queued without bound, and the run says so.
const MAX_IN_FLIGHT = intFromEnv('BENCH_MAX_IN_FLIGHT', 64, 10_000);
// Where the events of the latency runs come from (both are order.created, to the same two webhooks):
// - `outbox` (the default): bench/webhooks/producer.mjs, a minimal service on service-kit's runtime, which
//   commits each event alone in a transaction through `enqueue`, with the orders service's headers and
//   a real order.created payload, and publishes it with service-kit's OutboxRelay. The events can come at
//   the target's rate whatever the order path costs; that run is followed by one with real orders, for
//   information;
// - `created`: orders created through the gateway (a PIX charge from payments, its QR image, two
//   transactions each), which may not reach 200 a second on 2 cores: the report then says so.
const SOURCES = {
  outbox: { name: 'bench producer', request: 'POST /events (producer.mjs)', status: 201 },
  created: { name: 'orders', request: 'POST /sellers/orders/ (gateway)', status: 201 },
};
const EVENTS = process.env.BENCH_EVENTS || 'outbox';
if (!Object.hasOwn(SOURCES, EVENTS)) {
  console.error(`BENCH_EVENTS must be "outbox" or "created", got "${EVENTS}"`);
  process.exit(1);
}

const verdict = (ok) => (ok ? 'PASS' : 'FAIL');
/** The round of median rate (the lower middle one of an even count), with every round's rate. */
function medianRound(rounds) {
  const sorted = [...rounds].sort((a, b) => a.rate - b.rate);
  return { ...sorted[Math.floor((sorted.length - 1) / 2)], rounds: rounds.map((r) => r.rate) };
}
const nowUs = () => Number(process.hrtime.bigint() / 1000n);
const fmt = (ms, digits = 1) => (Number.isFinite(ms) ? ms.toFixed(digits) : 'n/a');

// ---------------------------------------------------------------------------------------------------
// Orders (as bench/create-order does, with a distinct valid CPF per order: one customer ordering 200
// times a second would queue the orders on its row's lock, which is create-order's business, not ours).

// ---------------------------------------------------------------------------------------------------
// CPU: lib.mjs counts PostgreSQL and Redis by name; RabbitMQ carries every event here, so it is counted
// too (its Erlang VM, `beam.smp`), and taken out of `other`.

function rabbitSnapshot() {
  try {
    let beam = 0;
    for (const pid of readdirSync('/proc').filter((entry) => /^\d+$/.test(entry))) {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const close = stat.lastIndexOf(')');
        if (stat.slice(stat.indexOf('(') + 1, close) !== 'beam.smp') continue;
        const fields = stat.slice(close + 2).split(' ');
        beam += Number(fields[11]) + Number(fields[12]);
      } catch {
        // The process ended in the meantime.
      }
    }
    const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1, 9).map(Number);
    return { beam, total: cpu.reduce((a, b) => a + b, 0) };
  } catch {
    return null;
  }
}

/** lib.mjs's withCpu, plus RabbitMQ's share and the wall time. */
async function measured(fn) {
  const before = rabbitSnapshot();
  const started = performance.now();
  const { value, cpu } = await withCpu(fn);
  const wallMs = performance.now() - started;
  const after = rabbitSnapshot();
  if (!cpu || !before || !after) return { value, cpu, wallMs };
  const rabbit =
    (100 * (after.beam - before.beam)) / ((after.total - before.total) / os.availableParallelism());
  const withRabbit = {};
  for (const [name, share] of Object.entries(cpu)) {
    if (name === 'load generator') withRabbit.rabbitmq = rabbit;
    withRabbit[name] = name === 'other' ? Math.max(0, share - rabbit) : share;
  }
  return { value, cpu: withRabbit, wallMs };
}

// ---------------------------------------------------------------------------------------------------

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

// The measured windows, on the monotonic clock the CPU profiles use.
const windows = { drain: null, latency: null, real: null };

async function bench({
  db,
  apiUrl,
  receiverUrl,
  producerUrl,
  common,
  throughputPorts,
  healthyPort,
  secondPort,
}) {
  const key = await createKey(common);

  // --- Helpers bound to this run's services. -------------------------------------------------------

  async function api(method, route, body) {
    const res = await fetch(`${apiUrl}${route}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(10_000),
    });
    const text = await res.text();
    let json = null;
    try {
      json = JSON.parse(text);
    } catch {
      // Reported with the text.
    }
    return { status: res.status, json, text };
  }

  async function expect(status, method, route, body) {
    const res = await api(method, route, body);
    if (res.status !== status) {
      throw new Error(`${method} ${route} answered ${res.status}: ${res.text.slice(0, 500)}`);
    }
    return res.json;
  }

  async function receiver(method, route) {
    const res = await fetch(`${receiverUrl}${route}`, { method, signal: AbortSignal.timeout(10_000) });
    if (res.status !== 200) throw new Error(`receivers: ${method} ${route} answered ${res.status}`);
    return res.json();
  }

  const summary = (list) => receiver('GET', `/summary?ports=${list.join(',')}`);

  /** Polls the receivers until `expected` arrivals on `list` or the timeout; the last summary. */
  async function arrivals(list, expected, timeoutMs, everyMs = 50) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const s = await summary(list);
      if (s.count >= expected || Date.now() > deadline) return s;
      await sleep(everyMs);
    }
  }

  /**
   * Waits until the last run's events are all delivered, so the next one starts on a quiet dispatcher:
   * nothing left in the outboxes of orders and the producer, no delivery pending (but those of `except` webhooks), and no new
   * delivery for half a second (an event between the relay and the intake, in RabbitMQ).
   */
  async function settle(except = [], timeoutMs = 60_000) {
    const deadline = Date.now() + timeoutMs;
    let last = null;
    for (;;) {
      const { rows } = await db.query(
        `select (select count(*)::int from orders.outbox) + (select count(*)::int from bench_producer.outbox) as outbox,
                (select count(*)::int from webhooks.deliveries) as deliveries,
                (select count(*)::int from webhooks.deliveries
                  where status = 'pending' and (webhook_id is null or webhook_id <> all($1::uuid[]))) as pending`,
        [except],
      );
      const now = rows[0];
      if (now.outbox === 0 && now.pending === 0 && now.deliveries === last?.deliveries) return;
      if (Date.now() > deadline) {
        throw new Error(
          `not settled after ${timeoutMs} ms: ${now.outbox} events in the outbox, ${now.pending} deliveries pending`,
        );
      }
      last = now;
      await sleep(500);
    }
  }

  async function lastAttemptError() {
    const { rows } = await db.query(
      `select d.url, a.response_status, a.error from webhooks.delivery_attempts a
         join webhooks.deliveries d on d.id = a.delivery_id order by a.started_at desc limit 1`,
    );
    const { rows: counts } = await db.query(
      `select status, count(*)::int as n from webhooks.deliveries group by status`,
    );
    const attempt = rows[0]
      ? `last attempt to ${rows[0].url}: status ${rows[0].response_status}, error ${rows[0].error}`
      : 'no attempt recorded';
    return `${attempt}; deliveries by status: ${JSON.stringify(counts)}`;
  }

  const register = async (port, name, event) =>
    (await expect(201, 'POST', '/config/webhooks/', { url: `http://127.0.0.1:${port}/hooks/${name}`, event }))
      .data.id;

  // --- Set-up: a product, and the throughput webhooks. --------------------------------------------

  const product = await expect(201, 'POST', '/sellers/products/', {
    name: 'Camiseta',
    price: 5000,
    type: 'PHYSICAL',
    images: ['https://cdn.example.com/camiseta.png'],
    commission_unit_amount: 500,
    producer_name: 'Produtora X',
  });
  const productId = product.data.uuid;
  let cpfSequence = 0;

  const throughputHooks = [];
  for (const [i, p] of throughputPorts.entries()) {
    throughputHooks.push(await register(p, `t${i}`, 'order.created'));
  }

  // One order end to end: it checks the whole path (registration of a loopback target, the outbox,
  // RabbitMQ, the intake, the sender) and gives the backlog a real order.created payload.
  await expect(201, 'POST', '/sellers/orders/', orderBody(productId, nthCpf(cpfSequence++)));
  const first = await arrivals(throughputPorts, DESTINATIONS, 30_000);
  if (first.count < DESTINATIONS) {
    throw new Error(
      `one order reached ${first.count} of ${DESTINATIONS} receivers within 30 s (${await lastAttemptError()})`,
    );
  }
  const sampleBody = JSON.stringify(await receiver('GET', `/sample?port=${throughputPorts[0]}`));
  const payload = JSON.parse(sampleBody).data;
  await settle();

  // --- Throughput. ----------------------------------------------------------------------------------

  /**
   * The dispatcher drains a backlog: the rate is taken between the first and the last arrival, so the
   * poll that finds the backlog (up to WEBHOOK_POLL_INTERVAL_MS) is not counted; the CPU too.
   */
  async function drain(perDestination) {
    const total = perDestination * DESTINATIONS;
    await receiver('POST', '/reset');
    await writeDeliveries(db, {
      perWebhook: perDestination,
      payload: JSON.stringify(payload),
      webhookIds: throughputHooks,
    });
    const committed = Date.now();
    const started = await arrivals(throughputPorts, 1, 10_000 + POLL_INTERVAL_MS, 5);
    if (started.count === 0) throw new Error(`the backlog was not picked up (${await lastAttemptError()})`);
    const from = nowUs();
    const timeoutMs = 60_000 + total * 20;
    const { value, cpu, wallMs } = await measured(() =>
      withSessions(DATABASE_URL, () => arrivals(throughputPorts, total, timeoutMs, 20), {
        ignore: ['bench'],
      }),
    );
    const to = nowUs();
    const s = value.value;
    await settle([], timeoutMs);
    return {
      total,
      delivered: s.count,
      distinct: s.distinct,
      seconds: (s.last - s.first) / 1000,
      rate: (s.count - 1) / ((s.last - s.first) / 1000),
      fromCommit: (s.last - committed) / 1000,
      cpu,
      wallMs,
      sessions: value.sessions,
      window: [from, to],
    };
  }

  /** A bare loop of undici POSTs, the dispatcher's concurrency, the same body and headers. */
  async function ceiling(total) {
    await receiver('POST', '/reset');
    const agent = new Agent({ connections: DESTINATION_CONCURRENCY, keepAliveTimeout: 10_000 });
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'Webhooks/1.0',
      'x-webhook-event': 'order.created',
      'x-webhook-event-id': `evt_${'0'.repeat(24)}`,
      'x-webhook-timestamp': String(Math.floor(Date.now() / 1000)),
      'x-webhook-signature': `sha256=${'0'.repeat(64)}`,
    };
    let sent = 0;
    const failures = new Map();
    const worker = async (target) => {
      while (sent < total) {
        sent += 1;
        try {
          const res = await request(target, { method: 'POST', headers, body: sampleBody, dispatcher: agent });
          await res.body.text();
          if (res.statusCode !== 200) failures.set(res.statusCode, (failures.get(res.statusCode) ?? 0) + 1);
        } catch (err) {
          const code = err.code ?? err.message;
          failures.set(code, (failures.get(code) ?? 0) + 1);
        }
      }
    };
    const workers = Math.min(CONCURRENCY, DESTINATIONS * DESTINATION_CONCURRENCY);
    const targets = throughputPorts.map((p, i) => `http://127.0.0.1:${p}/hooks/t${i}`);
    const {
      value: s,
      cpu,
      wallMs,
    } = await measured(async () => {
      await Promise.all(Array.from({ length: workers }, (_, i) => worker(targets[i % targets.length])));
      return arrivals(throughputPorts, total, 10_000);
    });
    await agent.close();
    if (failures.size) {
      throw new Error(`ceiling: ${JSON.stringify(Object.fromEntries(failures))} out of ${total} requests`);
    }
    return {
      total,
      delivered: s.count,
      seconds: (s.last - s.first) / 1000,
      rate: (s.count - 1) / ((s.last - s.first) / 1000),
      cpu,
      wallMs,
      workers,
    };
  }

  const { cpu: idleCpu } = await measured(() => sleep(2_000));
  const warmupBacklog = Math.max(1, Math.round(PER_DESTINATION / 5));
  console.error(
    `warming up the dispatcher and the bare loop (${warmupBacklog * DESTINATIONS} deliveries each)...`,
  );
  await drain(warmupBacklog);
  await ceiling(warmupBacklog * DESTINATIONS);
  // Rounds in alternating order (ceiling first, then the dispatcher first, ...), so that the machine's
  // drift over the run weighs on both sides; each side's median round is the one reported.
  const ceilings = [];
  const drains = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    const sides = [
      async () => {
        console.error(
          `round ${round + 1}/${ROUNDS}: the bare loop (${BACKLOG_TOTAL} POSTs over ${DESTINATIONS} receivers)...`,
        );
        ceilings.push(await ceiling(BACKLOG_TOTAL));
      },
      async () => {
        console.error(
          `round ${round + 1}/${ROUNDS}: the dispatcher on a backlog of ${BACKLOG_TOTAL} due deliveries...`,
        );
        drains.push(await drain(PER_DESTINATION));
      },
    ];
    if (round % 2 === 1) sides.reverse();
    for (const side of sides) await side();
  }
  const ceilingResult = medianRound(ceilings);
  const drainResult = medianRound(drains);
  windows.drain = drainResult.window;

  // The throughput webhooks would get every order from now on.
  for (const id of throughputHooks) await expect(204, 'DELETE', `/config/webhooks/${id}/`);

  // --- Latency and isolation. -----------------------------------------------------------------------

  // One webhook, as a seller with one integration has; the slow one joins it for the isolation run.
  const healthyHook = await register(healthyPort, 'healthy', 'order.created');
  const { rows: sellers } = await db.query(`select seller_id from webhooks.webhooks where id = $1`, [
    healthyHook,
  ]);
  const producerTemplate = await fetch(`${producerUrl}/template`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ seller_id: sellers[0].seller_id, payload }),
    signal: AbortSignal.timeout(10_000),
  });
  if (producerTemplate.status !== 200)
    throw new Error(`producer: POST /template answered ${producerTemplate.status}`);
  const agent = new Agent({ connections: 128, keepAliveTimeout: 10_000 });
  const apiHeaders = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  /** The next request that commits one order.created. */
  const nextRequest = (source) =>
    source === 'outbox'
      ? { url: `${producerUrl}/events`, headers: {}, body: '' }
      : {
          url: `${apiUrl}/sellers/orders/`,
          headers: apiHeaders,
          body: JSON.stringify(orderBody(productId, nthCpf(cpfSequence++))),
        };

  /**
   * Requests that make one event each, at a fixed rate for `seconds`: an open loop, where a request is
   * sent when it is due whatever the answers before it, unless MAX_IN_FLIGHT are in flight. One that does
   * not get its expected status is counted and reported, not retried: the events measured are those
   * committed.
   */
  async function eventLoad(source, seconds) {
    const spec = SOURCES[source];
    const latencies = [];
    const statuses = new Map();
    const errors = new Map();
    const inFlight = new Set();
    let sent = 0;
    let skipped = 0;
    let lastDone = 0;
    const total = Math.round(seconds * RATE);
    const start = performance.now();
    const fire = () => {
      const t0 = performance.now();
      const { url, headers, body } = nextRequest(source);
      const p = request(url, {
        method: 'POST',
        headers,
        body,
        dispatcher: agent,
        headersTimeout: 30_000,
        bodyTimeout: 30_000,
      })
        .then(async (res) => {
          await res.body.text();
          statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
          if (res.statusCode === spec.status) latencies.push(performance.now() - t0);
        })
        .catch((err) => {
          const code = err.code ?? err.message;
          errors.set(code, (errors.get(code) ?? 0) + 1);
        })
        .finally(() => {
          lastDone = performance.now();
          inFlight.delete(p);
        });
      inFlight.add(p);
    };
    while (sent < total) {
      const due = Math.min(total, Math.floor(((performance.now() - start) * RATE) / 1000) + 1);
      for (; sent < due; sent += 1) {
        if (inFlight.size >= MAX_IN_FLIGHT) skipped += 1;
        else fire();
      }
      await sleep(Math.max(1, start + (sent * 1000) / RATE - performance.now()));
    }
    await Promise.all([...inFlight]);
    const committed = statuses.get(spec.status) ?? 0;
    if (committed === 0) {
      throw new Error(
        `${spec.request}: no ${spec.status} (status codes ${JSON.stringify(Object.fromEntries(statuses))}, ` +
          `errors ${JSON.stringify(Object.fromEntries(errors))})`,
      );
    }
    statuses.delete(spec.status);
    const failed = [...statuses, ...errors].map(([code, n]) => `${n} x ${code}`).join(', ');
    const sorted = Float64Array.from(latencies).sort();
    return {
      offered: total,
      committed,
      skipped,
      failed,
      rate: committed / ((lastDone - start) / 1000),
      p50: percentile(sorted, 0.5),
      p99: percentile(sorted, 0.99),
    };
  }

  /** The first attempts at `port` of events that occurred since `since`, once `expected` are in. */
  async function firstAttempts(port, since, expected, timeoutMs = 30_000) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const records = (await receiver('GET', `/records?port=${port}`)).filter(
        ([, occurred, attempt]) => attempt === 1 && occurred >= since,
      );
      if (new Set(records.map(([, , , id]) => id)).size >= expected || Date.now() > deadline) return records;
      await sleep(200);
    }
  }

  /**
   * Commit to arrival of first attempts: `occurred_at` is stamped when the outbox row is written in the
   * transaction of its change, just before it commits. Split at the fan-out (the delivery row's
   * `created_at`): commit -> fan-out is the outbox relay, RabbitMQ and the intake; fan-out -> arrival is
   * the sender. An event whose first attempt has not arrived counts as infinitely late.
   */
  async function latencies(records, expected) {
    const ids = records.map(([, , , id]) => id);
    const { rows } = await db.query(
      `select event_id, extract(epoch from created_at) * 1000 as fanout from webhooks.deliveries
        where event_id = any($1::text[])`,
      [ids],
    );
    const fanout = new Map(rows.map((r) => [r.event_id, Number(r.fanout)]));
    const total = [];
    const relay = [];
    const send = [];
    for (const [arrival, occurred, , id] of records) {
      total.push(arrival - occurred);
      const f = fanout.get(id);
      if (f !== undefined) {
        relay.push(f - occurred);
        send.push(arrival - f);
      }
    }
    const distinct = new Set(ids).size;
    const arrivalTimes = records.map(([arrival]) => arrival);
    const span = (Math.max(...arrivalTimes) - Math.min(...arrivalTimes)) / 1000;
    const missing = Math.max(0, expected - distinct);
    for (let i = 0; i < missing; i += 1) total.push(Infinity);
    const stats = (values) => {
      const sorted = Float64Array.from(values).sort();
      return {
        p50: percentile(sorted, 0.5),
        p99: percentile(sorted, 0.99),
        max: sorted.length ? sorted[sorted.length - 1] : NaN,
      };
    };
    return {
      arrived: distinct,
      // The rate the destination was served at: below the events' rate, the dispatcher fell behind.
      rate: records.length > 1 ? (records.length - 1) / span : NaN,
      duplicates: records.length - distinct,
      missing,
      ...stats(total),
      relay: stats(relay),
      send: stats(send),
    };
  }

  async function latencyRun(source, label, { slow = false } = {}) {
    console.error(
      `measuring ${label} (${RATE} events/s from the ${SOURCES[source].name} for ${DURATION} s)...`,
    );
    await receiver('POST', '/reset');
    // This run's events occurred after it started: a straggler of the run before is left out.
    const since = Math.floor(Date.now());
    const from = nowUs();
    const { value, cpu } = await measured(() =>
      withSessions(DATABASE_URL, () => eventLoad(source, DURATION), { ignore: ['bench'] }),
    );
    const { value: load, sessions } = value;
    const to = nowUs();
    // Every first attempt to the healthy destination, or 30 s more.
    const healthy = await latencies(await firstAttempts(healthyPort, since, load.committed), load.committed);
    // The slow destination's first attempts so far: as many as it could answer.
    const second = slow ? await latencies(await firstAttempts(secondPort, since, 0), 0) : null;
    return { source, label, load, cpu, sessions, healthy, second, window: [from, to] };
  }

  console.error(
    `warming up the event path (${RATE} events/s from the ${SOURCES[EVENTS].name} for ${WARMUP} s)...`,
  );
  await eventLoad(EVENTS, WARMUP);
  await settle();
  const fast = await latencyRun(EVENTS, 'one destination');
  windows.latency = fast.window;
  await receiver('POST', `/delay?port=${secondPort}&ms=${SLOW_MS}`);
  const secondHook = await register(secondPort, 'slow', 'order.created');
  await settle();
  const slow = await latencyRun(EVENTS, `the same plus one answering after ${SLOW_MS} ms`, { slow: true });
  // Its backlog waits in the database from here on, instead of loading the machine until the end.
  await expect(200, 'PATCH', `/config/webhooks/${secondHook}/`, { status: 'DISABLED' });
  const { rows: slowBacklog } = await db.query(
    `select count(*)::int as n from webhooks.deliveries where webhook_id = $1 and status = 'pending'`,
    [secondHook],
  );

  // For information: the first run again with real orders, when the verdicts were taken on the bench
  // producer.
  let real = null;
  if (EVENTS === 'outbox') {
    await settle([secondHook]);
    console.error(`warming up the order path (${RATE} orders/s for ${WARMUP} s)...`);
    await eventLoad('created', WARMUP);
    await settle([secondHook]);
    real = await latencyRun('created', 'real orders, one destination');
    windows.real = real.window;
  }
  await agent.close();

  report({
    ceiling: ceilingResult,
    drain: drainResult,
    fast,
    slow,
    real,
    slowBacklog: slowBacklog[0].n,
    idleCpu,
    envelopeBytes: Buffer.byteLength(sampleBody),
  });
  printLogSummary();
}

// ---------------------------------------------------------------------------------------------------
// Report.

function report({ ceiling, drain, fast, slow, real, slowBacklog, idleCpu, envelopeBytes }) {
  const ratio = drain.rate / ceiling.rate;
  const ratioOk = ratio >= TARGET_MIN_RATIO;
  const sustained = (run) =>
    run.load.skipped === 0 &&
    !run.load.failed &&
    run.load.committed >= SUSTAINED_SHARE * run.load.offered &&
    run.load.rate >= SUSTAINED_SHARE * RATE;
  const rateOk = sustained(fast) && sustained(slow);
  const p99Ok = fast.healthy.p99 < TARGET_MAX_P99_MS;
  const allowed = Math.max(fast.healthy.p99 * (1 + TOLERANCE_RATIO), fast.healthy.p99 + TOLERANCE_MS);
  const isolationOk = slow.healthy.p99 <= allowed;

  console.log(
    `\nwebhooks - WEBHOOK_CONCURRENCY ${CONCURRENCY}, WEBHOOK_DESTINATION_CONCURRENCY ${DESTINATION_CONCURRENCY}, ` +
      `WEBHOOK_POLL_INTERVAL_MS ${POLL_INTERVAL_MS}; receivers on loopback answering 200 at once; ` +
      `${os.availableParallelism()} CPU cores shared with the load generator`,
  );

  console.log(
    `\nthroughput: ${drain.total} deliveries over ${DESTINATIONS} destinations, an order.created envelope of ` +
      `${envelopeBytes} bytes (rate between the first and the last arrival)\n`,
  );
  printTable([
    ['sender', 'deliveries/s', 'arrived', 'first -> last s'],
    [
      'dispatcher, draining a backlog (signed, recorded)',
      drain.rate.toFixed(0),
      `${drain.delivered}/${drain.total}`,
      drain.seconds.toFixed(2),
    ],
    [
      `ceiling: bare undici loop, ${ceiling.workers} in flight`,
      ceiling.rate.toFixed(0),
      `${ceiling.delivered}/${ceiling.total}`,
      ceiling.seconds.toFixed(2),
    ],
  ]);
  if (drain.rounds.length > 1) {
    const list = (r) => r.rounds.map((rate) => rate.toFixed(0)).join(', ');
    console.log(
      `each side's median of ${drain.rounds.length} rounds, in alternating order; the rounds, deliveries/s: ` +
        `dispatcher ${list(drain)}; ceiling ${list(ceiling)}`,
    );
  }
  console.log(
    `from the backlog's commit to its last arrival: ${drain.fromCommit.toFixed(2)} s ` +
      `(${(drain.delivered / drain.fromCommit).toFixed(0)} deliveries/s, the first poll included)`,
  );
  if (drain.delivered < drain.total || drain.distinct < drain.delivered) {
    console.log(
      `note: ${drain.total - drain.delivered} deliveries not arrived in time, ` +
        `${drain.delivered - drain.distinct} duplicates`,
    );
  }

  const source = SOURCES[EVENTS];
  console.log(
    `\nlatency: ${RATE} order.created events/s offered for ${DURATION} s per run, from the event's commit ` +
      `to its first attempt's arrival at the healthy webhook. Events from the ${source.name} ` +
      `(${source.request})${real ? `, then from real orders (${SOURCES.created.request}) for information` : ''}\n`,
  );
  const runs = [
    [`${source.name}, one destination`, fast],
    [`${source.name}, plus one taking ${SLOW_MS} ms`, slow],
    ...(real ? [['real orders, one destination', real]] : []),
  ];
  printTable([
    ['run', 'events/s', 'committed', 'request p50 ms', 'request p99 ms'],
    ...runs.map(([label, run]) => [
      label,
      run.load.rate.toFixed(0),
      `${run.load.committed}/${run.load.offered}`,
      fmt(run.load.p50),
      fmt(run.load.p99),
    ]),
  ]);
  console.log('');
  const latencyRow = (label, l) => [
    label,
    fmt(l.rate, 0),
    fmt(l.p50),
    fmt(l.p99),
    fmt(l.max),
    fmt(l.relay.p50),
    fmt(l.relay.p99),
    fmt(l.send.p50),
    fmt(l.send.p99),
    String(l.arrived),
    String(l.missing),
  ];
  printTable([
    [
      'destination',
      'served/s',
      'p50 ms',
      'p99 ms',
      'max ms',
      'relay p50',
      'relay p99',
      'send p50',
      'send p99',
      'arrived',
      'missing',
    ],
    latencyRow('healthy, alone', fast.healthy),
    latencyRow(`healthy, beside one taking ${SLOW_MS} ms`, slow.healthy),
    ...(real ? [latencyRow('healthy, alone, real orders', real.healthy)] : []),
  ]);
  console.log(
    'served/s: first attempts per second between the first and the last arrival. relay: commit -> ' +
      'fan-out (outbox relay, RabbitMQ, intake); send: fan-out -> arrival (claim, sign, POST).' +
      `\nthe slow destination got ${slow.second.arrived} first attempts in its run; ${slowBacklog} of its ` +
      'deliveries were still pending when it was paused',
  );
  if (fast.healthy.rate < SUSTAINED_SHARE * fast.load.rate) {
    console.log(
      `note: without the slow destination already, the dispatcher served the healthy one at ` +
        `${fmt(fast.healthy.rate, 0)}/s, below the ${fast.load.rate.toFixed(0)} events/s committed: the latencies ` +
        'measure its growing backlog, and the comparison with the slow destination says little',
    );
  }
  const duplicates = runs.reduce((sum, [, run]) => sum + run.healthy.duplicates, 0);
  if (duplicates) console.log(`note: ${duplicates} first attempts arrived twice at the healthy destination`);
  for (const [label, run] of runs) {
    if (!sustained(run)) {
      console.log(
        `note: ${SOURCES[run.source].request} did not sustain ${RATE}/s (${label}): ` +
          `${run.load.rate.toFixed(0)}/s; ${run.load.skipped} requests not sent because ${MAX_IN_FLIGHT} ` +
          `were in flight${run.load.failed ? `; failed: ${run.load.failed}` : ''}`,
      );
    }
  }

  console.log('');
  const line = (label, value, target, ok) =>
    console.log(`${label.padEnd(40)} ${value.padStart(10)}   ${target.padEnd(34)} ${ok}`);
  line(
    'dispatcher / ceiling',
    `${(100 * ratio).toFixed(1)} %`,
    `target >= ${100 * TARGET_MIN_RATIO} %`,
    verdict(ratioOk),
  );
  line(
    'p99 commit -> arrival (healthy)',
    `${fmt(fast.healthy.p99)} ms`,
    `target < ${TARGET_MAX_P99_MS} ms at ${RATE}/s`,
    rateOk ? verdict(p99Ok) : `${verdict(p99Ok)} (not at ${RATE}/s)`,
  );
  line(
    `healthy p99 beside a ${SLOW_MS} ms one`,
    `${fmt(slow.healthy.p99)} ms`,
    `target <= ${fmt(allowed)} ms (+20 % or 20 ms)`,
    verdict(isolationOk),
  );
  if (real) {
    line(
      'p99 commit -> arrival, real orders',
      `${fmt(real.healthy.p99)} ms`,
      `at ${real.load.rate.toFixed(0)} orders/s`,
      sustained(real) ? `information (${verdict(real.healthy.p99 < TARGET_MAX_P99_MS)})` : 'information',
    );
  }
  console.log(`${'overall'.padEnd(40)} ${verdict(ratioOk && p99Ok && isolationOk && rateOk)}`);

  // Not a target: where the CPU went, to tell slow code from a saturated machine.
  printCpuTable([
    ['idle (no load)', idleCpu],
    ['ceiling (bare loop)', ceiling.cpu],
    ['dispatcher drain', drain.cpu],
    ['latency, fast', fast.cpu],
    ['latency, one slow', slow.cpu],
    ...(real ? [['latency, real orders', real.cpu]] : []),
  ]);
  if (idleCpu && idleCpu.other > BUSY_OTHER) {
    console.log(
      `\nwarning: with no load at all, other work used ${idleCpu.other.toFixed(0)} % of one core ` +
        '(`other` on the idle row): the services got what was left, so every figure above understates them. ' +
        'Run again on a quiet machine.',
    );
  }
  if (ceiling.cpu && drain.cpu) {
    const perDelivery = (run, names) =>
      names
        .map((name) => `${name} ${((((run.cpu[name] ?? 0) / 100) * run.wallMs) / run.delivered).toFixed(3)}`)
        .join(', ');
    console.log('\nCPU ms per delivery:');
    console.log(`  dispatcher drain  ${perDelivery(drain, ['dispatcher', 'postgres', 'receivers'])}`);
    console.log(`  ceiling           ${perDelivery(ceiling, ['load generator', 'receivers'])}`);
  }
  // Not a target: what the dispatcher's connections did (its pool is 10; its application name is its
  // schema, `webhooks`). Connections idle in a transaction wait on the dispatcher's event loop; a lock
  // or I/O wait, on PostgreSQL.
  const sessionRuns = [
    ['dispatcher drain', drain.sessions],
    ['latency, one destination', fast.sessions],
    ['latency, plus a slow one', slow.sessions],
    ...(real ? [['latency, real orders', real.sessions]] : []),
  ];
  console.log("\nthe dispatcher's database connections, mean of pg_stat_activity samples every 100 ms:");
  printTable([
    ['run', 'open', 'running', 'waiting on a lock', 'idle in transaction', 'top wait'],
    ...sessionRuns.map(([label, sessions]) => {
      const r = sessions.rows.find((x) => x.application === 'webhooks');
      const row = r
        ? [
            r.application,
            ...[r.open, r.running, r.lock, r.idleInTransaction].map((n) => n.toFixed(1)),
            r.topWait,
          ]
        : ['', '0', '0', '0', '0', '-'];
      return [label, ...row.slice(1)];
    }),
  ]);
}

async function printProfiles() {
  if (!PROFILE_DIR) return;
  const { printProfile, writeProfileWindows } = await import('../create-order/profile.mjs');
  console.log(
    `\nCPU profiles in ${PROFILE_DIR}: self time during the drain for the dispatcher and the receivers, ` +
      'during the first latency run for the producer, during the run with real orders (or the first ' +
      'latency run) for the services. A whole process: node bench/create-order/profile.mjs <file>',
  );
  const windowOf = (name) =>
    name === 'dispatcher' || name === 'receivers'
      ? windows.drain
      : name === 'producer'
        ? windows.latency
        : (windows.real ?? windows.latency);
  writeProfileWindows(
    PROFILE_DIR,
    childList().map(({ name }) => name),
    windowOf,
  );
  for (const { name } of childList()) {
    const file = path.join(PROFILE_DIR, `${name}.cpuprofile`);
    if (existsSync(file)) printProfile(name, file, 12, windowOf(name));
    else console.log(`\n${name}: no profile written (stopped before it could write one?)`);
  }
}

await runBench(main, { afterStop: printProfiles });
