// `npm run bench:system`: the system as deployed, under a mixed load. The five services start from
// their builds as `npm start` runs them (one process each, through chaos/cluster.mjs), with their
// consumers bound in the bench's own AMQP namespace, logs at the shipped level (info), a `test` key per
// seller made with the operator CLI, the rate limit lifted, and webhooks for `order.created` and
// `order.paid` to a local receiver (bench/webhooks/receiver.mjs, a process of its own). Then, for one
// seller and for 100: `POST /api/v1/sellers/orders/` at 50 keep-alive connections for a fixed time,
// half of the orders paid through the sandbox as soon as they are created; the queues' backlog at the end
// of the load and the time to drain it; pay -> balance credited and pay -> `order.paid` delivered;
// CPU per order of every process (PostgreSQL and RabbitMQ included); WAL flushes per order; each
// service's RSS. Last, the floor of bench/create-order (floor.mjs: Express and one INSERT) loaded the
// same way. A report: exit code 0 whatever the targets say, non-zero only when the bench breaks.
//
// Flags: --duration <s> (15), --sellers 1|100|both (both), --connections <n> (50), --warmup <s> (3),
// --paid <percent of the orders> (50), --log-level <level> (info, the services' default), --keep-logs
// (keep the services' logs in .cache/bench-system/). bench/README.md says more.
/* global fetch, AbortSignal */
import { randomBytes } from 'node:crypto';
import { readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { QUEUES, createSeller, deleteQueues, resetState, startCluster } from '../../chaos/cluster.mjs';
import {
  ROOT,
  api,
  childList,
  dropDatabase,
  freePort,
  load,
  orderBody,
  PRODUCT_BODY,
  percentile,
  preflight,
  printTable,
  runBench,
  startProcess,
  waitReady,
} from '../lib.mjs';

const require = createRequire(import.meta.url);
const amqp = require('amqplib');
const autocannon = require('autocannon');
const pg = require('pg');
const { Pool: HttpPool } = require('undici');

const TARGET_MIN_RATIO = 1 / 3; // create-order at least a third of the floor...
const TARGET_MAX_P99_MS = 100; // ...with p99 under 100 ms, everything running;
const TARGET_BACKLOG_S = 1; // the backlog at the end of the load at most 1 s of its work,
const TARGET_DRAIN_MS = 2_000; // drained within 2 s;
const TARGET_PAY_P99_MS = 1_000; // pay -> balance and pay -> order.paid delivered p99 under 1 s;
const TARGET_RSS_IDLE_MB = 150; // each service's RSS idle...
const TARGET_RSS_LOADED_MB = 256; // ...and after the load.
const DRAIN_TIMEOUT_MS = 120_000;
const TIME_LIMIT_MS = 20 * 60_000; // the whole bench, set-up included
const POOL_MAX = 10; // the floor's pool: the services' size
const MANY_SELLERS = 100;

const DATABASE = 'seller_api_bench_system';
const ADMIN_DB_URL = `postgres://postgres@127.0.0.1:5432/${DATABASE}`;
const AMQP_URL = 'amqp://guest:guest@127.0.0.1:5672';
const NAMESPACE = 'bench.system.';
const LOG_DIR = path.join(ROOT, '.cache', 'bench-system');
const SERVICES = ['payments', 'orders', 'withdrawals', 'dispatcher-1', 'gateway-1'];
const SERVICE_LABEL = {
  'dispatcher-1': 'dispatcher',
  'gateway-1': 'gateway',
};
const label = (name) => SERVICE_LABEL[name] ?? name;

function options() {
  const { values } = parseArgs({
    options: {
      duration: { type: 'string', default: '15' },
      sellers: { type: 'string', default: 'both' },
      connections: { type: 'string', default: '50' },
      warmup: { type: 'string', default: '3' },
      paid: { type: 'string', default: '50' },
      'log-level': { type: 'string', default: 'info' },
      'keep-logs': { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  const usage =
    'usage: npm run bench:system -- [--duration <s>] [--sellers 1|100|both] [--connections <n>] ' +
    '[--warmup <s>] [--paid <percent>] [--log-level <level>] [--keep-logs]';
  if (values.help) {
    console.log(usage);
    process.exit(0);
  }
  const int = (name, min, max) => {
    const n = Number(values[name]);
    if (!Number.isInteger(n) || n < min || n > max) {
      console.error(`--${name} must be an integer from ${min} to ${max}\n${usage}`);
      process.exit(1);
    }
    return n;
  };
  const sellers = { 1: [1], 100: [MANY_SELLERS], both: [1, MANY_SELLERS] }[values.sellers];
  if (!sellers) {
    console.error(`--sellers must be 1, 100 or both\n${usage}`);
    process.exit(1);
  }
  return {
    duration: int('duration', 1, 120),
    connections: int('connections', 1, 1000),
    warmup: int('warmup', 0, 60),
    paid: int('paid', 0, 100),
    sellers,
    logLevel: values['log-level'],
    keepLogs: values['keep-logs'],
  };
}

const opts = options();
const wallMs = () => performance.timeOrigin + performance.now();
const verdict = (ok) => (ok ? 'PASS' : 'FAIL');

// ---------------------------------------------------------------------------------------------------
// What is read from /proc and from the servers.

/** CPU time (ms) of a process so far: utime + stime of /proc/<pid>/stat, at 100 ticks a second. */
function cpuMsOf(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = stat.lastIndexOf(')');
    const fields = stat.slice(close + 2).split(' ');
    return {
      comm: stat.slice(stat.indexOf('(') + 1, close),
      ms: 10 * (Number(fields[11]) + Number(fields[12])),
    };
  } catch {
    return null; // ended meanwhile
  }
}

function rssMbOf(pid) {
  try {
    const kb = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb ? Number(kb) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

const SERVERS = { postgres: 'postgres', 'beam.smp': 'rabbitmq', 'redis-server': 'redis' };

/** CPU ms so far per group: each service and bench child by pid, the servers summed over their pids. */
function cpuSnapshot(cluster) {
  const byPid = new Map(); // pid -> [group, ms]
  for (const { name, pid } of [...cluster.pids(), ...childList()]) {
    const stat = cpuMsOf(pid);
    if (stat) byPid.set(String(pid), [label(name), stat.ms]);
  }
  for (const pid of readdirSync('/proc').filter((entry) => /^\d+$/.test(entry))) {
    if (byPid.has(pid)) continue;
    const stat = cpuMsOf(pid);
    const group = stat && SERVERS[stat.comm];
    if (group) byPid.set(pid, [group, stat.ms]);
  }
  const self = process.cpuUsage();
  byPid.set('self', ['load generator', (self.user + self.system) / 1000]);
  return byPid;
}

/** CPU ms per group between two snapshots (a process started meanwhile counts from zero). */
function cpuDelta(before, after) {
  const delta = {};
  for (const [pid, [group, ms]] of after)
    delta[group] = (delta[group] ?? 0) + ms - (before.get(pid)?.[1] ?? 0);
  return delta;
}

async function walStats(db) {
  const { rows } = await db.query(
    'select wal_sync::float8 as sync, wal_records::float8 as records from pg_stat_wal',
  );
  return rows[0];
}

/** Handled messages so far: every consumer records each message it handles in `processed_messages`. */
async function processedMessages(db) {
  const { rows } = await db.query(
    `select table_schema from information_schema.tables where table_name = 'processed_messages'`,
  );
  if (rows.length === 0) return 0;
  const sql = rows.map((r) => `select count(*)::int as n from "${r.table_schema}".processed_messages`);
  const counts = await db.query(sql.join(' union all '));
  return counts.rows.reduce((sum, r) => sum + r.n, 0);
}

/** Rows still waiting in the services' outboxes and webhook deliveries still pending. */
async function pendingWork(db, outboxes) {
  const parts = [
    ...outboxes.map((schema) => `select count(*)::int as n from "${schema}".outbox`),
    `select count(*)::int as n from webhooks.deliveries where status = 'pending'`,
  ];
  const { rows } = await db.query(parts.join(' union all '));
  return rows.reduce((sum, r) => sum + r.n, 0);
}

/** The namespace's queues that exist, checked once (checking a missing queue closes the channel). */
async function existingQueues(connection) {
  const found = [];
  for (const queue of QUEUES.map((q) => `${NAMESPACE}${q}`)) {
    const channel = await connection.createChannel();
    channel.on('error', () => undefined);
    try {
      await channel.checkQueue(queue);
      found.push(queue);
      await channel.close();
    } catch {
      // Not declared by this build.
    }
  }
  return found;
}

/** Ready messages per queue (amqplib checkQueue; messages a consumer holds unacked are not counted). */
async function backlog(channel, queues) {
  const counts = {};
  for (const queue of queues)
    counts[queue.slice(NAMESPACE.length)] = (await channel.checkQueue(queue)).messageCount;
  return counts;
}

const sum = (object) => Object.values(object).reduce((a, b) => a + b, 0);

// ---------------------------------------------------------------------------------------------------
// Set-up through the API.

/** A seller: a key from the operator CLI, a product, and its two webhooks to the receiver. */
async function makeSeller(cluster, apiUrl, receiverPorts, index) {
  const key = await createSeller(cluster.envOf('gateway-1'), `bench-system-${index}@example.com`);
  const timeoutMs = 15_000;
  const product = await api(`${apiUrl}/sellers/products/`, {
    key,
    method: 'POST',
    timeoutMs,
    body: PRODUCT_BODY,
  });
  if (product.status !== 201) throw new Error(`creating a product: ${product.status} ${product.text}`);
  for (const [event, port] of [
    ['order.created', receiverPorts.created],
    ['order.paid', receiverPorts.paid],
  ]) {
    const res = await api(`${apiUrl}/config/webhooks/`, {
      key,
      method: 'POST',
      timeoutMs,
      body: { url: `http://127.0.0.1:${port}/hooks/${index}`, event },
    });
    if (res.status !== 201) throw new Error(`registering a webhook: ${res.status} ${res.text}`);
  }
  return { index, key, body: JSON.stringify(orderBody(product.json.data.uuid)) };
}

/** `count` sellers, a few CLI processes at a time (each is a node start-up). */
async function makeSellers(cluster, apiUrl, receiverPorts, count) {
  const sellers = new Array(count);
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const index = next++;
      sellers[index] = await makeSeller(cluster, apiUrl, receiverPorts, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(4, count) }, worker));
  return sellers;
}

// ---------------------------------------------------------------------------------------------------
// The mixed load.

/**
 * Create-order at `connections` for `seconds`, sellers in turn, `paidShare` of the orders paid at once
 * through its own pool of connections. Resolves when the load is over (pays may still be in flight:
 * `settled()`).
 */
async function mixedLoad({ gatewayUrl, sellers, seconds, connections, paidShare }) {
  // Pays go out on connections of their own, at most `connections` at once; an order whose pay finds
  // them all busy waits here (`queued` to `sent`), so pay -> credit is timed from the request's sending.
  const payPool = new HttpPool(gatewayUrl, { connections });
  const pays = new Map(); // order uuid -> { queued, sent, answered, status }
  const waiting = [];
  const inFlight = new Set();
  const latencies = [];
  const problems = [];
  let turn = 0;
  let paying = 0;
  let toPay = 0;
  const send = () => {
    while (paying < connections && waiting.length > 0) {
      const { orderId, seller, record } = waiting.shift();
      paying += 1;
      record.sent = wallMs();
      const request = payPool
        .request({
          path: `/api/v1/sandbox/orders/${orderId}/pay/`,
          method: 'POST',
          headers: { authorization: `Bearer ${seller.key}` },
        })
        .then(async ({ statusCode, body }) => {
          const text = await body.text();
          record.answered = wallMs();
          record.status = statusCode;
          if (statusCode < 200 || statusCode > 299) problems.push(`pay ${statusCode}: ${text.slice(0, 200)}`);
        })
        .catch((err) => problems.push(`pay: ${err.message}`))
        .finally(() => {
          inFlight.delete(request);
          paying -= 1;
          send();
        });
      inFlight.add(request);
    }
  };
  const pay = (orderId, seller) => {
    const record = { queued: wallMs(), sent: NaN, answered: NaN, status: 0 };
    pays.set(orderId, record);
    waiting.push({ orderId, seller, record });
    send();
  };
  const instance = autocannon({
    url: `${gatewayUrl}/api/v1/sellers/orders/`,
    method: 'POST',
    connections,
    duration: seconds,
    requests: [
      {
        setupRequest: (request, context) => {
          const seller = sellers[turn++ % sellers.length];
          context.seller = seller;
          return {
            ...request,
            headers: { authorization: `Bearer ${seller.key}`, 'content-type': 'application/json' },
            body: seller.body,
          };
        },
        onResponse: (status, body, context) => {
          if (status !== 201) {
            if (problems.length < 20) problems.push(`create ${status}: ${String(body).slice(0, 200)}`);
            return;
          }
          // Bresenham: exactly `paidShare` of the orders paid, spread evenly.
          toPay += paidShare;
          if (toPay < 1) return;
          toPay -= 1;
          const uuid = /"uuid":"([0-9a-f-]{36})"/.exec(body)?.[1];
          if (uuid) pay(uuid, context.seller);
          else problems.push(`create answered no uuid: ${String(body).slice(0, 200)}`);
        },
      },
    ],
  });
  instance.on('response', (_client, statusCode, _bytes, responseTime) => {
    if (statusCode === 201) latencies.push(responseTime);
  });
  const result = await instance;
  const errors = ['errors', 'timeouts', 'non2xx']
    .filter((f) => result[f] > 0)
    .map((f) => `${result[f]} ${f}`);
  const sorted = Float64Array.from(latencies).sort();
  return {
    created: latencies.length,
    rps: latencies.length / seconds,
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    pays,
    problems: [...errors, ...problems],
    settled: async () => {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
      await payPool.close();
    },
  };
}

// ---------------------------------------------------------------------------------------------------

async function main() {
  setTimeout(() => {
    console.error(`\nbench:system took longer than ${TIME_LIMIT_MS / 60_000} min: stopping`);
    process.kill(process.pid, 'SIGTERM');
  }, TIME_LIMIT_MS).unref();
  rmSync(LOG_DIR, { recursive: true, force: true });
  const taken = new Set();
  const ports = {
    control: await freePort(13190, taken),
    created: await freePort(13191, taken),
    paid: await freePort(13192, taken),
    floor: await freePort(13193, taken),
  };
  const env = {
    ...process.env,
    // The database is created on the fly, which the services only do outside production.
    NODE_ENV: 'development',
    LOG_LEVEL: opts.logLevel,
    DATABASE_URL: ADMIN_DB_URL,
    REDIS_URL: 'redis://127.0.0.1:6379',
    REDIS_KEY_PREFIX: `bench:system:${randomBytes(6).toString('hex')}:`,
    AMQP_URL,
    AMQP_NAMESPACE: NAMESPACE,
    RATE_LIMIT_PER_MINUTE: '100000000',
    // The receiver listens on loopback, which `test` webhooks may reach with this.
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    SHUTDOWN_TIMEOUT_MS: '5000',
  };
  delete env.OTEL_EXPORTER_OTLP_ENDPOINT; // no span exporter measured

  console.error(`database ${DATABASE}, AMQP namespace ${NAMESPACE}, logs in ${LOG_DIR}`);
  await resetState({ database: DATABASE, amqpUrl: AMQP_URL, namespace: NAMESPACE });
  // BENCH_PROFILE=<dir>: a V8 CPU profile of each service, written when it stops (whole run).
  const nodeArgs = process.env.BENCH_PROFILE
    ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`]
    : [];
  const cluster = await startCluster({ env, logDir: LOG_DIR, replicas: 1, nodeArgs });
  const db = new pg.Client({ connectionString: ADMIN_DB_URL, application_name: 'bench_system' });
  let amqpConnection = null;
  try {
    await db.connect();
    startProcess('receiver', path.join(ROOT, 'bench/webhooks/receiver.mjs'), {
      ...process.env,
      PORT: String(ports.control),
      RECEIVER_PORTS: `${ports.created},${ports.paid}`,
    });
    const receiverUrl = `http://127.0.0.1:${ports.control}`;
    await waitReady('receiver', receiverUrl);
    const receiver = async (method, route) => {
      const res = await fetch(`${receiverUrl}${route}`, { method, signal: AbortSignal.timeout(10_000) });
      return res.json();
    };
    const gatewayUrl = cluster.url('gateway-1');
    const apiUrl = `${gatewayUrl}/api/v1`;
    const needed = Math.max(...opts.sellers);
    console.error(`creating ${needed} seller(s) with the operator CLI, a product and two webhooks each...`);
    const sellers = await makeSellers(cluster, apiUrl, ports, needed);
    amqpConnection = await amqp.connect(AMQP_URL);
    const queues = await existingQueues(amqpConnection);
    const channel = await amqpConnection.createChannel();
    const { rows: outboxRows } = await db.query(
      `select table_schema from information_schema.tables where table_name = 'outbox'`,
    );
    const outboxes = outboxRows.map((r) => r.table_schema);

    /** Polls until the queues, the outboxes and pending deliveries are empty and `done()` holds. */
    const drain = async (done, from = Date.now()) => {
      let quietSince = null;
      while (Date.now() - from < DRAIN_TIMEOUT_MS) {
        const polled = Date.now();
        const ready = sum(await backlog(channel, queues));
        const pending = await pendingWork(db, outboxes);
        if (ready === 0 && pending === 0 && (await done())) {
          // Two polls in a row, nothing more arriving: drained at the first.
          if (quietSince !== null) return quietSince - from;
          quietSince = polled;
        } else quietSince = null;
        await sleep(50);
      }
      return NaN;
    };
    /** Every order paid so far credited, and this load's (since the receiver's reset) delivered. */
    const paidDone = (credited, delivered) => async () => {
      const { rows } = await db.query(
        `select count(*)::int as n from withdrawals.ledger_entries where kind = 'payment_credited'`,
      );
      const summary = await receiver('GET', `/summary?ports=${ports.paid}`);
      return rows[0].n >= credited && summary.distinct >= delivered;
    };

    // One order, paid, through the whole path before anything is measured.
    await receiver('POST', '/reset');
    const check = await mixedLoad({
      gatewayUrl,
      sellers: [sellers[0]],
      seconds: 1,
      connections: 1,
      paidShare: opts.paid / 100,
    });
    await check.settled();
    if (check.problems.length > 0) throw new Error(`the first orders failed: ${check.problems.join('; ')}`);
    const checkDrain = await drain(paidDone(check.pays.size, check.pays.size));
    if (Number.isNaN(checkDrain)) throw new Error('the first orders did not drain within the timeout');

    const rssIdle = Object.fromEntries(cluster.pids().map(({ name, pid }) => [label(name), rssMbOf(pid)]));
    const phases = [];
    let paidSoFar = check.pays.size;
    for (const count of opts.sellers) {
      const group = sellers.slice(0, count);
      if (opts.warmup > 0) {
        console.error(`${count} seller(s): warming up for ${opts.warmup} s...`);
        await receiver('POST', '/reset');
        const warm = await mixedLoad({
          paidShare: opts.paid / 100,
          gatewayUrl,
          sellers: group,
          seconds: opts.warmup,
          connections: opts.connections,
        });
        await warm.settled();
        if (warm.problems.length > 0) throw new Error(`warm-up: ${warm.problems.slice(0, 5).join('; ')}`);
        paidSoFar += warm.pays.size;
        if (Number.isNaN(await drain(paidDone(paidSoFar, warm.pays.size))))
          throw new Error('the warm-up did not drain');
      }
      await receiver('POST', '/reset');
      console.error(`${count} seller(s): ${opts.duration} s at ${opts.connections} connections...`);
      const handledBefore = await processedMessages(db);
      const walBefore = await walStats(db);
      const cpuBefore = cpuSnapshot(cluster);
      const loadStart = Date.now();
      const run = await mixedLoad({
        paidShare: opts.paid / 100,
        gatewayUrl,
        sellers: group,
        seconds: opts.duration,
        connections: opts.connections,
      });
      const loadEnd = Date.now();
      const loadMs = loadEnd - loadStart;
      const backlogEnd = await backlog(channel, queues);
      const pendingEnd = await pendingWork(db, outboxes);
      const rssLoaded = Object.fromEntries(
        cluster.pids().map(({ name, pid }) => [label(name), rssMbOf(pid)]),
      );
      await run.settled();
      if (run.problems.length > 0) throw new Error(`under load: ${run.problems.slice(0, 5).join('; ')}`);
      paidSoFar += run.pays.size;
      const drainMs = await drain(paidDone(paidSoFar, run.pays.size), loadEnd);
      const cpu = cpuDelta(cpuBefore, cpuSnapshot(cluster));
      const walAfter = await walStats(db);
      const handled = (await processedMessages(db)) - handledBefore;

      // From the pay request's sending. Pay -> balance: the credit's ledger entry is stamped with its
      // transaction's start (now()), a little before its commit. Pay -> order.paid: the first
      // attempt's arrival at the receiver.
      const ids = [...run.pays.keys()];
      const { rows: credits } = await db.query(
        `select order_id::text as id, extract(epoch from created_at)::float8 * 1000 as at
           from withdrawals.ledger_entries where kind = 'payment_credited' and order_id = any($1::uuid[])`,
        [ids],
      );
      const { rows: deliveries } = await db.query(
        `select event_id, coalesce(order_id::text, payload #>> '{order,uuid}') as id
           from webhooks.deliveries where event = 'order.paid'`,
      );
      const orderOfEvent = new Map(deliveries.map((r) => [r.event_id, r.id]));
      const arrived = new Map();
      for (const [at, , attempt, eventId] of await receiver('GET', `/records?port=${ports.paid}`)) {
        const id = orderOfEvent.get(eventId);
        if (id && attempt === 1 && !(arrived.get(id) <= at)) arrived.set(id, at);
      }
      const since = (times) => {
        const list = [];
        for (const [id, at] of times) {
          const payRecord = run.pays.get(id);
          if (payRecord && Number.isFinite(payRecord.sent)) list.push(at - payRecord.sent);
        }
        return Float64Array.from(list).sort();
      };
      const toBalance = since(credits.map((r) => [r.id, r.at]));
      const toWebhook = since(arrived);
      const payTimes = Float64Array.from([...run.pays.values()].map((p) => p.answered - p.sent)).sort();
      const payWaits = Float64Array.from([...run.pays.values()].map((p) => p.sent - p.queued)).sort();
      phases.push({
        sellers: count,
        ...run,
        loadMs,
        backlogEnd,
        pendingEnd,
        drainMs,
        handled,
        cpu,
        wal: walAfter.sync - walBefore.sync,
        walRecords: walAfter.records - walBefore.records,
        rssLoaded,
        payP50: percentile(payTimes, 0.5),
        payP99: percentile(payTimes, 0.99),
        payWaitP99: percentile(payWaits, 0.99),
        toBalance,
        toWebhook,
      });
    }

    // The floor, loaded the same way, with the system idle beside it.
    console.error('the floor (Express + one INSERT)...');
    startProcess('floor', path.join(ROOT, 'bench/create-order/floor.mjs'), {
      ...process.env,
      DATABASE_URL: ADMIN_DB_URL,
      PORT: String(ports.floor),
      POOL_MAX: String(POOL_MAX),
    });
    const floorUrl = `http://127.0.0.1:${ports.floor}`;
    await waitReady('floor', floorUrl);
    const floorTarget = {
      name: 'floor',
      url: `${floorUrl}/orders`,
      method: 'POST',
      body: sellers[0].body,
      headers: () => ({ 'content-type': 'application/json' }),
      status: 201,
    };
    await preflight(floorTarget);
    if (opts.warmup > 0) await load(floorTarget, opts.warmup, opts.connections);
    const floorWalBefore = await walStats(db);
    const floor = await load(floorTarget, opts.duration, opts.connections);
    floor.wal = (await walStats(db)).sync - floorWalBefore.sync;

    report({ phases, floor, rssIdle, exits: cluster.unexpectedExits(), logBytes: logSizes() });
  } finally {
    await amqpConnection?.close().catch(() => undefined);
    await db.end().catch(() => undefined);
    await cluster.stop();
    await deleteQueues(AMQP_URL, NAMESPACE).catch((err) =>
      console.error(`deleting the queues: ${err.message}`),
    );
  }
}

/** After the bench's own children (receiver, floor) have stopped: nothing holds the database then. */
async function cleanUp() {
  await dropDatabase(DATABASE).catch((err) => console.error(`dropping ${DATABASE}: ${err.message}`));
  if (!opts.keepLogs) rmSync(LOG_DIR, { recursive: true, force: true });
}

function logSizes() {
  const sizes = {};
  for (const name of SERVICES) {
    try {
      sizes[label(name)] = statSync(path.join(LOG_DIR, `${name}.log`)).size;
    } catch {
      sizes[label(name)] = 0;
    }
  }
  return sizes;
}

// ---------------------------------------------------------------------------------------------------
// Report.

function report({ phases, floor, rssIdle, exits, logBytes }) {
  const ms = (v) => (Number.isFinite(v) ? v.toFixed(1) : '-');
  console.log(
    `\nbench:system - ${opts.connections} connections, ${opts.duration} s per load, ${opts.paid} % of the orders ` +
      `paid through the sandbox as they are created (on up to ${opts.connections} connections more); logs at ${opts.logLevel}; ${os.availableParallelism()} CPU cores shared by all\n`,
  );
  printTable([
    ['load', 'orders/s', 'p50 ms', 'p99 ms', 'orders', 'paid', 'pay p50 ms', 'pay p99 ms', 'pay wait p99 ms'],
    ...phases.map((p) => [
      `create-order, ${p.sellers} seller${p.sellers > 1 ? 's' : ''}`,
      p.rps.toFixed(0),
      ms(p.p50),
      ms(p.p99),
      String(p.created),
      String(p.pays.size),
      ms(p.payP50),
      ms(p.payP99),
      ms(p.payWaitP99),
    ]),
    [
      'floor (Express + 1 INSERT)',
      floor.rps.toFixed(0),
      ms(floor.p50),
      ms(floor.p99),
      String(floor.total),
      '',
      '',
      '',
      '',
    ],
  ]);

  console.log('\nafter the load:');
  printTable([
    [
      'load',
      'queued msgs',
      'outbox+pending',
      'msgs handled',
      '1 s of work',
      'drain ms',
      'pay->balance p50/p99 ms',
      'pay->order.paid p50/p99 ms',
    ],
    ...phases.map((p) => {
      const perSecond = p.handled / (p.loadMs / 1000);
      return [
        `${p.sellers} seller(s)`,
        String(sum(p.backlogEnd)),
        String(p.pendingEnd),
        String(p.handled),
        perSecond.toFixed(0),
        Number.isFinite(p.drainMs) ? String(p.drainMs) : `> ${DRAIN_TIMEOUT_MS}`,
        `${ms(percentile(p.toBalance, 0.5))} / ${ms(percentile(p.toBalance, 0.99))} (${p.toBalance.length})`,
        `${ms(percentile(p.toWebhook, 0.5))} / ${ms(percentile(p.toWebhook, 0.99))} (${p.toWebhook.length})`,
      ];
    }),
  ]);
  for (const p of phases) {
    const queues = Object.entries(p.backlogEnd)
      .filter(([, n]) => n > 0)
      .map(([q, n]) => `${q} ${n}`);
    console.log(`  ${p.sellers} seller(s), queued at the end: ${queues.join(', ') || 'none'}`);
  }

  const groups = [...new Set(phases.flatMap((p) => Object.keys(p.cpu)))];
  console.log('\nCPU ms per order (from the start of the load to the end of the drain):');
  printTable([
    ['load', ...groups, 'all'],
    ...phases.map((p) => [
      `${p.sellers} seller(s)`,
      ...groups.map((g) => ((p.cpu[g] ?? 0) / p.created).toFixed(2)),
      (sum(p.cpu) / p.created).toFixed(2),
    ]),
  ]);
  console.log('\nWAL flushes per order (pg_stat_wal.wal_sync, the whole server):');
  for (const p of phases) {
    console.log(
      `  ${p.sellers} seller(s)  ${(p.wal / p.created).toFixed(2)} (WAL records ${(p.walRecords / p.created).toFixed(1)})`,
    );
  }
  console.log(`  floor         ${(floor.wal / floor.total).toFixed(2)}`);

  console.log(
    '\nservice RSS, MB (idle: after set-up; loaded: at the end of each load), and log bytes per order:',
  );
  const names = Object.keys(rssIdle);
  const created = phases.reduce((n, p) => n + p.created, 0);
  printTable([
    ['', ...names],
    ['idle', ...names.map((n) => rssIdle[n].toFixed(0))],
    ...phases.map((p) => [`loaded, ${p.sellers} seller(s)`, ...names.map((n) => p.rssLoaded[n].toFixed(0))]),
    ['log bytes per order', ...names.map((n) => (logBytes[n] / Math.max(1, created)).toFixed(0))],
  ]);

  console.log('\ntargets:');
  const lines = [];
  const line = (text, ok) => {
    lines.push(ok);
    console.log(`  ${text.padEnd(66)} ${verdict(ok)}`);
  };
  for (const p of phases) {
    const who = `${p.sellers} seller${p.sellers > 1 ? 's' : ''}`;
    const ratio = p.rps / floor.rps;
    const perSecond = p.handled / (p.loadMs / 1000);
    const backlogSeconds = sum(p.backlogEnd) / Math.max(1, perSecond);
    line(`${who}: create-order/floor ${(100 * ratio).toFixed(1)} % (>= 33.3 %)`, ratio >= TARGET_MIN_RATIO);
    line(`${who}: p99 ${ms(p.p99)} ms (< ${TARGET_MAX_P99_MS} ms)`, p.p99 < TARGET_MAX_P99_MS);
    line(
      `${who}: backlog ${backlogSeconds.toFixed(2)} s of work (<= ${TARGET_BACKLOG_S} s)`,
      backlogSeconds <= TARGET_BACKLOG_S,
    );
    line(
      `${who}: drained in ${Number.isFinite(p.drainMs) ? p.drainMs : '>' + DRAIN_TIMEOUT_MS} ms (<= ${TARGET_DRAIN_MS} ms)`,
      p.drainMs <= TARGET_DRAIN_MS,
    );
    const balanceP99 = percentile(p.toBalance, 0.99);
    const webhookP99 = percentile(p.toWebhook, 0.99);
    const all = (list) => list.length === p.pays.size;
    if (p.pays.size === 0) continue; // --paid 0: nothing to time
    line(
      `${who}: pay -> balance p99 ${ms(balanceP99)} ms (< 1000 ms, all credited)`,
      all(p.toBalance) && balanceP99 < TARGET_PAY_P99_MS,
    );
    line(
      `${who}: pay -> order.paid p99 ${ms(webhookP99)} ms (< 1000 ms, all delivered)`,
      all(p.toWebhook) && webhookP99 < TARGET_PAY_P99_MS,
    );
  }
  const idleMax = Math.max(...Object.values(rssIdle));
  const loadedMax = Math.max(...phases.flatMap((p) => Object.values(p.rssLoaded)));
  line(
    `RSS idle, largest service ${idleMax.toFixed(0)} MB (<= ${TARGET_RSS_IDLE_MB} MB)`,
    idleMax <= TARGET_RSS_IDLE_MB,
  );
  line(
    `RSS after load, largest service ${loadedMax.toFixed(0)} MB (<= ${TARGET_RSS_LOADED_MB} MB)`,
    loadedMax <= TARGET_RSS_LOADED_MB,
  );
  line(`no service exited on its own${exits.length ? `: ${exits.join('; ')}` : ''}`, exits.length === 0);
  console.log(`overall ${verdict(lines.every(Boolean))}`);
}

await runBench(main, { afterStop: cleanUp });
