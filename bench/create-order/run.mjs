// `npm run bench:create-order`: what a create-order costs end to end. It starts payments, orders and
// the gateway from their builds, creates a test key and one PHYSICAL product, then loads
// `POST /api/v1/sellers/orders/` (one item, an address) through the gateway with autocannon: key
// lookup, rate limit, proxy, validation, pricing, the PIX charge from payments (BR Code, QR image,
// its own transaction and outbox row), then the order's transaction and outbox row. The same body
// then goes to the floor (floor.mjs): bare Express and one INSERT, the least a create-order can cost
// here. Last, the QR render time per image against qrcode.toBuffer (qr.mjs, fewer iterations).
// The result is a report: exit code 0 whether the targets pass or not, non-zero only if the bench broke.
//
// Environment: BENCH_DURATION (s, default 10), BENCH_CONNECTIONS (default 50), BENCH_WARMUP (s, default 3),
// BENCH_CUSTOMERS=one|many (default one: every order is the same customer's; many: a new CPF each),
// BENCH_VERBOSE=1 to stream the children's log lines as they come instead of a summary at the end,
// BENCH_PROFILE=<dir> to write a V8 CPU profile of each child there (<name>.cpuprofile, overwritten
// by the next run) and print where each one spent its CPU. The plumbing is in ../lib.mjs.
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ROOT,
  api,
  childList,
  CPF,
  createKey,
  dropDatabase,
  freePort,
  intFromEnv,
  load,
  nthCpf,
  orderBody,
  PRODUCT_BODY,
  preflight,
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

const require = createRequire(import.meta.url);
const pg = require('pg');

const TARGET_MIN_RATIO = 1 / 3; // create-order keeps at least a third of the floor's throughput...
const TARGET_MAX_P99_MS = 100; // ...and its p99 stays under 100 ms.
const MAX_RUN_SECONDS = 600;
const POOL_MAX = 10; // the services' pool size (service-kit openDatabase), given to the floor too
const DATABASE = 'seller_api_bench_orders';
const DATABASE_URL = `postgres://postgres@127.0.0.1:5432/${DATABASE}`;

const DURATION = intFromEnv('BENCH_DURATION', 10, MAX_RUN_SECONDS);
const CONNECTIONS = intFromEnv('BENCH_CONNECTIONS', 50, 10_000);
const WARMUP = intFromEnv('BENCH_WARMUP', 3, MAX_RUN_SECONDS);
const PROFILE_DIR = process.env.BENCH_PROFILE ? path.resolve(process.env.BENCH_PROFILE) : null;
// `one` (the default): every order is Maria's, CPF 529.982.247-25, so every order upserts the same
// customer row and the orders' transactions queue on its lock. `many`: a distinct valid CPF per order,
// to tell that lock from the rest of the cost.
const CUSTOMERS = process.env.BENCH_CUSTOMERS || 'one';
if (CUSTOMERS !== 'one' && CUSTOMERS !== 'many') {
  console.error(`BENCH_CUSTOMERS must be "one" or "many", got "${CUSTOMERS}"`);
  process.exit(1);
}

async function createProduct(apiUrl, key) {
  const res = await api(`${apiUrl}/sellers/products/`, {
    key,
    method: 'POST',
    body: PRODUCT_BODY,
  });
  const id = res.json?.data?.uuid;
  if (res.status !== 201 || !id) {
    throw new Error(`creating the product answered ${res.status}: ${res.text.slice(0, 500)}`);
  }
  return id;
}

/** One order before the load: a 201 with the PIX charge, or the bench stops with the answer. */
async function checkOrder(target) {
  const res = await api(target.url, {
    method: 'POST',
    headers: target.headers(),
    body: JSON.parse(target.body),
  });
  const pix = res.json?.data?.pix;
  if (res.status !== 201 || !pix?.copy_and_paste || !pix?.qr_code_image_base64) {
    throw new Error(`${target.name}: POST ${target.url} answered ${res.status}: ${res.text.slice(0, 500)}`);
  }
  return res.text.length;
}

// ---------------------------------------------------------------------------------------------------
// Report.

function report({ createOrder, floor, idleCpu, responseBytes, qr }) {
  const ratio = createOrder.rps / floor.rps;
  const ratioOk = ratio >= TARGET_MIN_RATIO;
  const p99Ok = createOrder.p99 < TARGET_MAX_P99_MS;
  const verdict = (ok) => (ok ? 'PASS' : 'FAIL');

  const customers = CUSTOMERS === 'one' ? `one customer (CPF ${CPF})` : 'a new customer per order';
  console.log(
    `\nPOST /sellers/orders/, 1 physical item with an address, ${customers} - ${CONNECTIONS} connections, ` +
      `${DURATION} s per target (after ${WARMUP} s warm-up each), ${os.availableParallelism()} CPU cores ` +
      `shared with the load generator\n`,
  );
  printTable([
    ['target', 'orders/s (mean)', 'p50 ms', 'p99 ms', 'orders'],
    ...[
      ['create-order (gateway -> orders -> payments)', createOrder],
      ['floor (Express + 1 INSERT)', floor],
    ].map(([label, r]) => [label, r.rps.toFixed(0), r.p50.toFixed(2), r.p99.toFixed(2), String(r.total)]),
  ]);
  console.log(
    `\nevery answer was a 201; a create-order answer is ${responseBytes} bytes (QR image included)`,
  );
  console.log('');
  console.log(
    `create-order/floor throughput  ${(100 * ratio).toFixed(1).padStart(6)} %   ` +
      `target >= ${(100 * TARGET_MIN_RATIO).toFixed(1)} %   ${verdict(ratioOk)}`,
  );
  console.log(
    `create-order p99              ${createOrder.p99.toFixed(1).padStart(6)} ms  ` +
      `target < ${TARGET_MAX_P99_MS} ms      ${verdict(p99Ok)}`,
  );
  console.log(`overall                        ${verdict(ratioOk && p99Ok)}`);

  // Not a target: the QR image is drawn on every create-order, so its cost is one line of the budget.
  const [ours, ...theirs] = qr;
  console.log(
    `\nQR image per create-order (mean per image, ${qr.map((r) => r.iterations).join('/')} iterations):`,
  );
  printTable([
    ['renderer', 'wall µs', 'cpu µs', 'image', 'vs ours (cpu)'],
    ...qr.map((r) => [
      r.name,
      r.wallUs.toFixed(1),
      r.cpuUs.toFixed(1),
      `${r.width} px, ${r.bytes} B`,
      r === ours ? '1.0x' : `${(r.cpuUs / ours.cpuUs).toFixed(1)}x`,
    ]),
  ]);
  const budgetUs = (1e6 * os.availableParallelism()) / createOrder.rps;
  console.log(
    `renderQrPng is ${((100 * ours.cpuUs) / budgetUs).toFixed(1)} % of the machine's CPU per create-order ` +
      `at the measured rate; qrcode.toBuffer at scale 6 would be ` +
      `${((100 * theirs[theirs.length - 1].cpuUs) / budgetUs).toFixed(1)} %`,
  );

  // Not a target: where the CPU went, to tell slow code from a saturated machine. The idle row is the
  // baseline: what runs with no request at all (outbox polls, other work on the machine).
  printCpuTable([
    ['idle (no load)', idleCpu],
    ['create-order run', createOrder.cpu],
    ['floor run', floor.cpu],
  ]);
  // The same, per order: what one order costs each process, less sensitive to a busy machine than
  // the throughput (work that other processes do on the machine is not in it).
  if (createOrder.cpu && floor.cpu) {
    const perOrder = (run, names) =>
      names.map((name) => `${name} ${((10 * (run.cpu[name] ?? 0)) / run.rps).toFixed(2)}`).join(', ');
    console.log('\nCPU ms per order:');
    console.log(`  create-order  ${perOrder(createOrder, ['payments', 'orders', 'gateway', 'postgres'])}`);
    console.log(`  floor         ${perOrder(floor, ['floor', 'postgres'])}`);
    // On this VM a system call on a socket costs about 0.1 ms: how many each order takes matters.
    const calls = (run, names) =>
      names
        .filter((name) => run.cpu.syscalls?.[name])
        .map((name) => {
          const { reads, writes } = run.cpu.syscalls[name];
          const per = (n) => (n / run.total).toFixed(2);
          return `${name} ${per(reads)}/${per(writes)}`;
        })
        .join(', ');
    console.log('\nsystem calls per order (reads/writes):');
    console.log(`  create-order  ${calls(createOrder, ['payments', 'orders', 'gateway'])}`);
    console.log(`  floor         ${calls(floor, ['floor'])}`);
  }

  // Not a target: what the database connections were doing, sampled from pg_stat_activity during
  // each run. A pool of 10 whose connections wait on a lock is a queue, however idle the CPU.
  for (const [label, sessions] of [
    ['create-order run', createOrder.sessions],
    ['floor run', floor.sessions],
  ]) {
    if (!sessions || sessions.rows.length === 0) continue;
    console.log(
      `\ndatabase connections during the ${label}, mean over ${sessions.samples} samples of pg_stat_activity:`,
    );
    printTable([
      ['application', 'open', 'running', 'waiting on a lock', 'idle in transaction', 'top wait'],
      ...sessions.rows.map((r) => [
        r.application,
        r.open.toFixed(1),
        r.running.toFixed(1),
        r.lock.toFixed(1),
        r.idleInTransaction.toFixed(1),
        r.topWait,
      ]),
    ]);
  }
}

/**
 * Waits until no connection to the bench database runs a statement or holds a transaction open: the
 * orders still in flight when a run stops (their clients gone) must not be counted in the next run.
 */
async function settle() {
  const client = new pg.Client({ connectionString: DATABASE_URL, application_name: 'bench_sampler' });
  await client.connect();
  try {
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      const { rows } = await client.query(
        `select count(*)::int as busy from pg_stat_activity
          where datname = current_database() and pid <> pg_backend_pid()
            and (state = 'active' or state like 'idle in transaction%')`,
      );
      if (rows[0].busy === 0) break;
      await sleep(200);
    }
    await sleep(500); // the outbox relays' last publications
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function measureQrImages() {
  // Imported here: qr.mjs needs the payments build, which the services' start has just checked.
  const { measureQr } = await import('./qr.mjs');
  // Ours is cheap: many iterations. qrcode.toBuffer takes milliseconds: fewer, warmed up too.
  const ours = await measureQr({ iterations: 1000, warmup: 1000, only: ['renderQrPng (scale 6)'] });
  const theirs = await measureQr({
    iterations: 100,
    warmup: 100,
    only: ['qrcode.toBuffer (defaults)', 'qrcode.toBuffer (scale 6)'],
  });
  return [
    ...ours.map((r) => ({ ...r, iterations: 1000 })),
    ...theirs.map((r) => ({ ...r, iterations: 100 })),
  ];
}

// The measured runs, on the monotonic clock the CPU profiles use, to leave out start-up and warm-up.
const windows = { createOrder: null, floor: null };
const nowUs = () => Number(process.hrtime.bigint() / 1000n);

/** The run's result with what the database connections did meanwhile (`sessions`). */
async function sessionsOf(fn) {
  const { value, sessions } = await withSessions(DATABASE_URL, fn);
  return { ...value, sessions };
}

async function timed(fn) {
  const from = nowUs();
  const result = await fn();
  return { ...result, window: [from, nowUs()] };
}

async function printProfiles() {
  if (!PROFILE_DIR) return;
  const { printProfile, writeProfileWindows } = await import('./profile.mjs');
  console.log(
    `\nCPU profiles in ${PROFILE_DIR}: self time during the measured run (the floor's for the floor, ` +
      "the create-order run's for the services). A whole process: node bench/create-order/profile.mjs <file>",
  );
  const windowOf = (name) => (name === 'floor' ? windows.floor : windows.createOrder);
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

// ---------------------------------------------------------------------------------------------------

async function main() {
  // Each run on empty tables: the orders of earlier runs would make later runs slower (bigger indexes,
  // and on a server with autovacuum off, the outboxes' dead rows that every relay claim reads past).
  await dropDatabase(DATABASE);
  const taken = new Set();
  const ports = await servicePorts(['payments', 'orders', 'gateway'], taken);
  const floorPort = await freePort(13090, taken);
  const paymentsUrl = serviceUrl(ports, 'payments');
  const ordersUrl = serviceUrl(ports, 'orders');
  const gatewayUrl = serviceUrl(ports, 'gateway');
  const floorUrl = `http://127.0.0.1:${floorPort}`;
  if (PROFILE_DIR) mkdirSync(PROFILE_DIR, { recursive: true });
  const profileName = (name) => ({ profileName: `${name}.cpuprofile` });

  const common = {
    ...process.env,
    // The database must be created on the fly, which the services only do outside production.
    NODE_ENV: 'development',
    LOG_LEVEL: 'warn',
    DATABASE_URL,
    AMQP_URL: 'amqp://guest:guest@127.0.0.1:5672',
    AMQP_NAMESPACE: 'bench.orders.',
    SHUTDOWN_TIMEOUT_MS: '5000',
  };
  // Tracing would export a span per request and measure the exporter; keep it off whatever the shell says.
  delete common.OTEL_EXPORTER_OTLP_ENDPOINT;

  console.error(
    `starting payments on ${ports.payments.port}, orders on ${ports.orders.port} and the gateway on ` +
      `${ports.gateway.port}...`,
  );
  startService('payments', { ...common, ...serviceEnv('payments', ports) }, profileName('payments'));
  startService('orders', { ...common, ...serviceEnv('orders', ports) }, profileName('orders'));
  startService(
    'gateway',
    {
      ...common,
      REDIS_URL: 'redis://127.0.0.1:6379',
      // A fresh prefix: no rate-limit counters left over from another run or deployment.
      REDIS_KEY_PREFIX: `bench:${randomBytes(6).toString('hex')}:`,
      RATE_LIMIT_PER_MINUTE: '100000000',
      // Withdrawals and the dispatcher are not called by this bench; pointed at orders so nothing
      // reaches a stray local process.
      ...serviceEnv('gateway', ports, ordersUrl),
    },
    profileName('gateway'),
  );
  await Promise.all([
    waitReady('payments', paymentsUrl),
    waitReady('orders', ordersUrl),
    waitReady('gateway', gatewayUrl),
  ]);
  // The services have created the database by now; the floor makes its own schema in it.
  startProcess(
    'floor',
    path.join(ROOT, 'bench/create-order/floor.mjs'),
    { ...common, PORT: String(floorPort), POOL_MAX: String(POOL_MAX) },
    profileName('floor'),
  );
  await waitReady('floor', floorUrl);

  const key = await createKey(common);
  const productId = await createProduct(`${gatewayUrl}/api/v1`, key);
  const body = JSON.stringify(orderBody(productId));
  let sequence = 0;
  // With BENCH_CUSTOMERS=many, every request under load is another customer's order.
  const setupRequest =
    CUSTOMERS === 'many'
      ? (request) => ({ ...request, body: JSON.stringify(orderBody(productId, nthCpf(sequence++))) })
      : undefined;

  const createOrder = {
    name: 'create-order',
    url: `${gatewayUrl}/api/v1/sellers/orders/`,
    method: 'POST',
    body,
    setupRequest,
    headers: () => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json' }),
    status: 201,
  };
  const floor = {
    name: 'floor',
    url: `${floorUrl}/orders`,
    method: 'POST',
    body,
    setupRequest,
    headers: () => ({ 'content-type': 'application/json' }),
    status: 201,
  };

  const responseBytes = await checkOrder(createOrder);
  await preflight(floor);
  const { cpu: idleCpu } = await withCpu(() => sleep(2_000));
  console.error(`warming up (${WARMUP} s per target)...`);
  // JIT, connection pools and the upstream keep-alive sockets, before anything is counted.
  for (const target of [createOrder, floor]) await load(target, WARMUP, CONNECTIONS);
  console.error(`measuring (${DURATION} s per target, ${CONNECTIONS} connections)...`);
  await settle();
  const createOrderResult = await sessionsOf(() => timed(() => load(createOrder, DURATION, CONNECTIONS)));
  await settle();
  const floorResult = await sessionsOf(() => timed(() => load(floor, DURATION, CONNECTIONS)));
  windows.createOrder = createOrderResult.window;
  windows.floor = floorResult.window;
  console.error('measuring the QR image...');
  const qr = await measureQrImages();
  report({ createOrder: createOrderResult, floor: floorResult, idleCpu, responseBytes, qr });
  printLogSummary();
}

await runBench(main, { afterStop: printProfiles });
