// `npm run bench:gateway`: what the gateway costs on an authenticated GET. It starts the withdrawals
// service and the gateway from their builds, creates a test key, then loads
// `GET /finance/balance/` twice with autocannon: straight to the service (with the identity headers the
// gateway would add), then through the gateway (auth lookup, Redis rate limit, signing, proxy).
// The result is a report: exit code 0 whether the targets pass or not, non-zero only if the bench broke.
//
// Environment: BENCH_DURATION (s, default 10), BENCH_CONNECTIONS (default 32), BENCH_WARMUP (s, default 3),
// BENCH_VERBOSE=1 to stream the services' log lines as they come instead of a summary at the end,
// BENCH_PROFILE=<dir> to write a V8 CPU profile of each service there. The plumbing is in ../lib.mjs.
import { randomBytes, randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ROOT,
  createKey,
  intFromEnv,
  load,
  preflight,
  printCpuTable,
  printLogSummary,
  printTable,
  runBench,
  serviceEnv,
  servicePorts,
  serviceUrl,
  startService,
  waitReady,
  withCpu,
} from '../lib.mjs';

const require = createRequire(import.meta.url);
// The services run with the development keys (NODE_ENV=development): the bench signs as the gateway.
const { callKeyOf, devInternalKey, signIdentity } = require(
  path.join(ROOT, 'packages/service-kit/dist/index.js'),
);

const TARGET_MIN_RATIO = 0.6; // the gateway keeps at least 60 % of the direct throughput...
const TARGET_MAX_ADDED_P50_MS = 1; // ...and adds at most 1 ms to the median latency.
const BALANCE_PATH = '/finance/balance/';
// A signed identity is accepted for 60 s, and the direct runs reuse one signature; stay well inside.
const MAX_RUN_SECONDS = 50;

const DURATION = intFromEnv('BENCH_DURATION', 10, MAX_RUN_SECONDS);
const CONNECTIONS = intFromEnv('BENCH_CONNECTIONS', 32, 10_000);
const WARMUP = intFromEnv('BENCH_WARMUP', 3, MAX_RUN_SECONDS);

// ---------------------------------------------------------------------------------------------------
// Report.

function report(direct, gateway, idleCpu, directSerial, gatewaySerial) {
  const ratio = gateway.rps / direct.rps;
  // Under a closed loop of many connections, latency is connections / throughput, so the hop's own
  // cost is read from one connection at a time; throughput from the loaded runs.
  const addedP50 = gatewaySerial.p50 - directSerial.p50;
  const ratioOk = ratio >= TARGET_MIN_RATIO;
  const latencyOk = addedP50 <= TARGET_MAX_ADDED_P50_MS;
  const verdict = (ok) => (ok ? 'PASS' : 'FAIL');

  console.log(
    `\nGET ${BALANCE_PATH} - ${CONNECTIONS} connections, ${DURATION} s per target ` +
      `(after ${WARMUP} s warm-up each), ${os.availableParallelism()} CPU cores shared with the load generator\n`,
  );
  printTable([
    ['target', 'req/s (mean)', 'p50 ms', 'p99 ms', 'requests'],
    ...[
      ['direct (withdrawals)', direct],
      ['gateway -> withdrawals', gateway],
    ].map(([label, r]) => [label, r.rps.toFixed(0), r.p50.toFixed(2), r.p99.toFixed(2), String(r.total)]),
  ]);
  console.log(`\none connection at a time (the cost of the hop itself):`);
  printTable([
    ['target', 'req/s (mean)', 'p50 ms', 'p99 ms', 'requests'],
    ...[
      ['direct (withdrawals)', directSerial],
      ['gateway -> withdrawals', gatewaySerial],
    ].map(([label, r]) => [label, r.rps.toFixed(0), r.p50.toFixed(2), r.p99.toFixed(2), String(r.total)]),
  ]);
  console.log('');
  console.log(
    `gateway/direct throughput  ${(100 * ratio).toFixed(1).padStart(6)} %   ` +
      `target >= ${100 * TARGET_MIN_RATIO} %   ${verdict(ratioOk)}`,
  );
  console.log(
    `added median (1 connection) ${addedP50.toFixed(2).padStart(5)} ms  ` +
      `target <= ${TARGET_MAX_ADDED_P50_MS} ms    ${verdict(latencyOk)}`,
  );
  console.log(`overall                    ${verdict(ratioOk && latencyOk)}`);

  // Not a target: where the CPU went, to tell a slow gateway from a saturated machine. The idle row
  // is the baseline: what runs with no request at all (background loops, other work on the machine).
  printCpuTable([
    ['idle (no load)', idleCpu],
    ['direct run', direct.cpu],
    ['gateway run', gateway.cpu],
  ]);
}

// ---------------------------------------------------------------------------------------------------

async function main() {
  const ports = await servicePorts(['withdrawals', 'gateway'], new Set());
  const withdrawalsUrl = serviceUrl(ports, 'withdrawals');
  const gatewayUrl = serviceUrl(ports, 'gateway');

  const common = {
    ...process.env,
    // The database must be created on the fly, which the services only do outside production.
    NODE_ENV: 'development',
    LOG_LEVEL: 'warn',
    DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/seller_api_bench',
    AMQP_URL: 'amqp://guest:guest@127.0.0.1:5672',
    AMQP_NAMESPACE: 'bench.',
    SHUTDOWN_TIMEOUT_MS: '5000',
  };
  // Tracing would export a span per request and measure the exporter; keep it off whatever the shell says.
  delete common.OTEL_EXPORTER_OTLP_ENDPOINT;

  console.error(
    `starting withdrawals on ${ports.withdrawals.port} and the gateway on ${ports.gateway.port}...`,
  );
  startService('withdrawals', {
    ...common,
    // No ledger reconciliation in the middle of the measurement (it reads payments, not started here).
    RECONCILE_INTERVAL_MS: '0',
    ...serviceEnv('withdrawals', ports),
  });
  startService('gateway', {
    ...common,
    REDIS_URL: 'redis://127.0.0.1:6379',
    // A fresh prefix: no rate-limit counters left over from another run or deployment.
    REDIS_KEY_PREFIX: `bench:${randomBytes(6).toString('hex')}:`,
    RATE_LIMIT_PER_MINUTE: '100000000',
    // Orders, payments and the dispatcher are not called by this bench; pointed at withdrawals so
    // nothing reaches a stray local process.
    ...serviceEnv('gateway', ports, withdrawalsUrl),
  });
  await Promise.all([waitReady('withdrawals', withdrawalsUrl), waitReady('gateway', gatewayUrl)]);

  const key = await createKey(common);

  const direct = {
    name: 'direct',
    url: `${withdrawalsUrl}${BALANCE_PATH}`,
    // Signed anew for every run: the signature is only accepted for 60 s.
    headers: () =>
      signIdentity(
        callKeyOf({ INTERNAL_KEY: devInternalKey('gateway') }, 'gateway', 'withdrawals'),
        { user_id: randomUUID(), seller_id: randomUUID(), environment: 'test', role: 'seller' },
        'GET',
        BALANCE_PATH,
      ),
  };
  const gateway = {
    name: 'gateway',
    url: `${gatewayUrl}/api/v1${BALANCE_PATH}`,
    headers: () => ({ authorization: `Bearer ${key}` }),
  };

  for (const target of [direct, gateway]) await preflight(target);
  const { cpu: idleCpu } = await withCpu(() => sleep(2_000));
  console.error(`warming up (${WARMUP} s per target)...`);
  // JIT, connection pools and the gateway's upstream keep-alive sockets, before anything is counted.
  for (const target of [direct, gateway]) await load(target, WARMUP, CONNECTIONS);
  console.error(`measuring (${DURATION} s per target, ${CONNECTIONS} connections)...`);
  const directResult = await load(direct, DURATION, CONNECTIONS);
  const gatewayResult = await load(gateway, DURATION, CONNECTIONS);
  console.error(`measuring the hop alone (${DURATION} s per target, 1 connection)...`);
  const directSerial = await load(direct, DURATION, 1);
  const gatewaySerial = await load(gateway, DURATION, 1);
  report(directResult, gatewayResult, idleCpu, directSerial, gatewaySerial);
  printLogSummary();
}

await runBench(main);
