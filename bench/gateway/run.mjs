// `npm run bench:gateway`: what the gateway costs on an authenticated GET. It starts the withdrawals
// service and the gateway from their builds, creates a test key, then loads
// `GET /finance/balance/` twice with autocannon: straight to the service (with the identity headers the
// gateway would add), then through the gateway (auth lookup, Redis rate limit, signing, proxy).
// The result is a report: exit code 0 whether the targets pass or not, non-zero only if the bench broke.
//
// Environment: BENCH_DURATION (s, default 10), BENCH_CONNECTIONS (default 32), BENCH_WARMUP (s, default 3),
// BENCH_VERBOSE=1 to stream the services' log lines as they come instead of a summary at the end.
/* global fetch, AbortSignal */
import { execFile, spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const require = createRequire(import.meta.url);
const autocannon = require('autocannon');

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const { signIdentity } = require(path.join(ROOT, 'packages/service-kit/dist/index.js'));

const TARGET_MIN_RATIO = 0.6; // the gateway keeps at least 60 % of the direct throughput...
const TARGET_MAX_ADDED_P50_MS = 1; // ...and adds at most 1 ms to the median latency.
const BALANCE_PATH = '/finance/balance/';
const READY_TIMEOUT_MS = 60_000;
// A signed identity is accepted for 60 s, and the direct runs reuse one signature; stay well inside.
const MAX_RUN_SECONDS = 50;

const DURATION = intFromEnv('BENCH_DURATION', 10, MAX_RUN_SECONDS);
const CONNECTIONS = intFromEnv('BENCH_CONNECTIONS', 32, 10_000);
const WARMUP = intFromEnv('BENCH_WARMUP', 3, MAX_RUN_SECONDS);
const VERBOSE = process.env.BENCH_VERBOSE === '1';

function intFromEnv(name, fallback, max) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1 || value > max) {
    console.error(`${name} must be an integer between 1 and ${max}, got "${raw}"`);
    process.exit(1);
  }
  return value;
}

// ---------------------------------------------------------------------------------------------------
// Child processes: always stopped on the way out, whatever the way out is.

const children = [];
let stopping = false;
let crash; // rejects the main flow as soon as a service dies on its own
const crashed = new Promise((_, reject) => {
  crash = reject;
});
let currentRun = null; // the autocannon instance in flight, stopped on Ctrl-C

const alive = (child) => child.exitCode === null && child.signalCode === null;

function startService(name, env) {
  const main = path.join(ROOT, 'services', name, 'dist', 'main.js');
  if (!existsSync(main)) throw new Error(`${main} is missing: run \`npm run build\` first`);
  // BENCH_PROFILE=<dir> writes a V8 CPU profile of each service there, to see where the time goes.
  const profile = process.env.BENCH_PROFILE
    ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_PROFILE}`]
    : [];
  const child = spawn(process.execPath, [...profile, main], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // LOG_LEVEL is warn, so whatever a service prints deserves to be seen, but one line per request
  // would bury the report: count them by message for a summary, keep the last ones for a failure.
  const logs = { counts: new Map(), tail: [] };
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on('line', (line) => {
      const key = logKey(line);
      logs.counts.set(key, (logs.counts.get(key) ?? 0) + 1);
      logs.tail.push(line);
      if (logs.tail.length > 15) logs.tail.shift();
      if (VERBOSE) process.stderr.write(`[${name}] ${line}\n`);
    });
  }
  child.on('exit', (code, signal) => {
    if (!stopping) crash(new Error(`${name} exited unexpectedly (${signal ?? `code ${code}`})`));
  });
  children.push({ name, child, logs });
  return child;
}

/** What a log line is about: level, message and error message of a pino line, else the line itself. */
function logKey(line) {
  try {
    const entry = JSON.parse(line);
    return `${entry.level ?? '?'}: ${entry.msg ?? ''}${entry.err?.message ? ` (${entry.err.message})` : ''}`;
  } catch {
    return line.slice(0, 160); // not JSON: a stack trace, a warning from Node
  }
}

/** Log lines grouped by what they are about, most frequent first. */
function printLogSummary() {
  const groups = [];
  for (const { name, logs } of children) {
    for (const [key, count] of logs.counts) groups.push({ name, key, count });
  }
  if (groups.length === 0) {
    console.log('\nservice logs: nothing at warn level or above');
    return;
  }
  console.log('\nservice logs at warn level or above (BENCH_VERBOSE=1 shows every line):');
  for (const { name, key, count } of groups.sort((a, b) => b.count - a.count).slice(0, 10)) {
    console.log(`  ${name.padEnd(11)} ${String(count).padStart(7)} x ${key}`);
  }
}

function printLogTails() {
  for (const { name, logs } of children) {
    if (logs.tail.length === 0) continue;
    console.error(`\nlast log lines of ${name}:`);
    for (const line of logs.tail) console.error(`  ${line.slice(0, 500)}`);
  }
}

async function stopChildren() {
  stopping = true;
  const running = children.filter(({ child }) => alive(child)).map(({ child }) => child);
  const exited = Promise.all(running.map((child) => new Promise((resolve) => child.once('exit', resolve))));
  for (const child of running) child.kill('SIGTERM');
  // The services shut down gracefully within SHUTDOWN_TIMEOUT_MS; after that, no more courtesy.
  await Promise.race([exited, sleep(8_000)]);
  for (const child of running) if (alive(child)) child.kill('SIGKILL');
}

// Last resort if the process leaves by a path that skipped stopChildren (an uncaught exception).
process.on('exit', () => {
  for (const { child } of children) if (alive(child)) child.kill('SIGKILL');
});

for (const [signal, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
]) {
  process.on(signal, () => {
    if (stopping) return;
    process.stderr.write(`\n${signal}: stopping the services...\n`);
    currentRun?.stop();
    stopChildren().finally(() => process.exit(code));
  });
}

// ---------------------------------------------------------------------------------------------------
// Set-up helpers.

/** `preferred` when it is free, otherwise one the kernel picks; `taken` keeps the four ports distinct. */
async function freePort(preferred, taken) {
  const tryListen = (port) =>
    new Promise((resolve) => {
      const server = net.createServer();
      server.once('error', () => resolve(null));
      server.listen(port, '0.0.0.0', () => {
        const { port: bound } = server.address();
        server.close(() => resolve(bound));
      });
    });
  const port = (!taken.has(preferred) && (await tryListen(preferred))) || (await tryListen(0));
  if (!port || taken.has(port)) throw new Error('could not find a free TCP port');
  taken.add(port);
  return port;
}

async function waitReady(name, baseUrl) {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let last = 'no answer';
  while (Date.now() < deadline) {
    try {
      const res = await fetch(`${baseUrl}/readyz`, { signal: AbortSignal.timeout(2_000) });
      if (res.status === 200) return;
      last = `HTTP ${res.status} ${(await res.text()).slice(0, 300)}`;
    } catch (err) {
      last = err.cause?.code ?? err.message;
    }
    await sleep(250);
  }
  throw new Error(
    `${name} not ready at ${baseUrl}/readyz after ${READY_TIMEOUT_MS / 1000} s (last: ${last})`,
  );
}

async function createKey(env) {
  const cli = path.join(ROOT, 'services/gateway/dist/cli.js');
  const args = [cli, 'keys', 'create', '--email', 'bench@example.com', '--env', 'test', '--label', 'bench'];
  try {
    const { stdout } = await promisify(execFile)(process.execPath, args, { cwd: ROOT, env, timeout: 60_000 });
    const key = stdout.trim().split('\n').pop()?.trim();
    if (!key) throw new Error('the CLI printed no key');
    return key;
  } catch (err) {
    throw new Error(`creating the API key failed: ${err.message}${err.stderr ? `\n${err.stderr}` : ''}`);
  }
}

/** One request before loading a target, so a 401 or 404 fails with its body rather than a count. */
async function preflight(target) {
  const res = await fetch(target.url, { headers: target.headers(), signal: AbortSignal.timeout(5_000) });
  const body = await res.text();
  if (res.status < 200 || res.status > 299) {
    throw new Error(`${target.name}: GET ${target.url} answered ${res.status}: ${body.slice(0, 500)}`);
  }
}

// ---------------------------------------------------------------------------------------------------
// Measuring.

// Shared servers whose CPU counts too, summed over their processes (PostgreSQL forks one per connection).
const SERVERS = { postgres: 'postgres', redis: 'redis-server' };

/** A process's name and its CPU time so far (user + system, in jiffies), from /proc/<pid>/stat. */
function procStat(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const close = stat.lastIndexOf(')'); // the name may hold spaces and parentheses
  // After "pid (comm) ", field N of proc(5) is at index N - 3: utime (14) and stime (15).
  const fields = stat.slice(close + 2).split(' ');
  return { comm: stat.slice(stat.indexOf('(') + 1, close), jiffies: Number(fields[11]) + Number(fields[12]) };
}

/** CPU jiffies per process group and for the machine; null where /proc is not available (not Linux). */
function cpuSnapshot() {
  try {
    const groups = {}; // group name -> Map(pid -> jiffies)
    const add = (group, pid, jiffies) => (groups[group] ??= new Map()).set(String(pid), jiffies);
    for (const { name, child } of children) add(name, child.pid, procStat(child.pid).jiffies);
    for (const pid of readdirSync('/proc').filter((entry) => /^\d+$/.test(entry))) {
      try {
        const { comm, jiffies } = procStat(pid);
        const group = Object.keys(SERVERS).find((key) => SERVERS[key] === comm);
        if (group) add(group, pid, jiffies);
      } catch {
        // The process ended in the meantime.
      }
    }
    const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1, 9).map(Number);
    const total = cpu.reduce((a, b) => a + b, 0);
    const idle = cpu[3] + cpu[4]; // idle + iowait
    return { groups, total, busy: total - idle, self: process.cpuUsage() };
  } catch {
    return null;
  }
}

/**
 * CPU use between two snapshots, in % of one core (so 200 % is both cores of a 2-core machine).
 * `other` is what the machine spent outside the processes named here: the kernel, other work.
 */
function cpuUsage(before, after, wallMs) {
  if (!before || !after) return null;
  const jiffiesPerCore = (after.total - before.total) / os.availableParallelism();
  const share = (jiffies) => (100 * jiffies) / jiffiesPerCore;
  const usage = {};
  for (const [group, pids] of Object.entries(after.groups)) {
    let jiffies = 0;
    // A process started during the run counts from zero; one that ended during it is lost.
    for (const [pid, now] of pids) jiffies += now - (before.groups[group]?.get(pid) ?? 0);
    usage[group] = share(jiffies);
  }
  const self = after.self.user + after.self.system - (before.self.user + before.self.system);
  usage['load generator'] = (100 * self) / 1000 / wallMs;
  const machine = share(after.busy - before.busy);
  const named = Object.values(usage).reduce((a, b) => a + b, 0);
  return { machine, ...usage, other: Math.max(0, machine - named) };
}

/** Runs `fn` and measures the CPU used meanwhile by each process and by the whole machine. */
async function withCpu(fn) {
  const before = cpuSnapshot();
  const started = Date.now();
  const value = await fn();
  return { value, cpu: cpuUsage(before, cpuSnapshot(), Date.now() - started) };
}

function percentile(sorted, q) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

async function load(target, seconds, connections = CONNECTIONS) {
  const latencies = [];
  const instance = autocannon({
    url: target.url,
    method: 'GET',
    headers: target.headers(),
    connections,
    duration: seconds,
  });
  currentRun = instance;
  // autocannon's own histogram keeps whole milliseconds, too coarse for a 1 ms budget on the median:
  // keep every 2xx response time (fractional ms) and take the percentiles from those.
  instance.on('response', (_client, statusCode, _bytes, responseTime) => {
    if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
  });
  const { value: result, cpu } = await withCpu(() => instance);
  currentRun = null;
  if (stopping) throw new Error('interrupted');

  const problems = ['errors', 'timeouts', 'non2xx', 'mismatches']
    .filter((field) => result[field] > 0)
    .map((field) => `${result[field]} ${field}`);
  if (problems.length || result.requests.total === 0) {
    const codes = JSON.stringify(result.statusCodeStats ?? {});
    throw new Error(
      `${target.name}: ${problems.join(', ') || 'no request completed'} (status codes: ${codes})`,
    );
  }
  const sorted = Float64Array.from(latencies).sort();
  return {
    rps: result.requests.mean,
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    total: result.requests.total,
    cpu,
  };
}

// ---------------------------------------------------------------------------------------------------
// Report.

/** Columns aligned; the first one to the left, the figures to the right. */
function printTable(rows) {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)));
  for (const row of rows) {
    console.log(
      row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  '),
    );
  }
}

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
  if (idleCpu && direct.cpu && gateway.cpu) {
    const names = Object.keys(gateway.cpu);
    console.log(`\nCPU, % of one core (the machine has ${os.availableParallelism()}):`);
    printTable([
      ['', ...names],
      ...[
        ['idle (no load)', idleCpu],
        ['direct run', direct.cpu],
        ['gateway run', gateway.cpu],
      ].map(([label, cpu]) => [label, ...names.map((n) => (cpu[n] ?? 0).toFixed(0))]),
    ]);
  }
}

// ---------------------------------------------------------------------------------------------------

async function main() {
  const taken = new Set();
  const ports = {
    withdrawals: await freePort(13003, taken),
    withdrawalsMetrics: await freePort(19003, taken),
    gateway: await freePort(18080, taken),
    gatewayMetrics: await freePort(19080, taken),
  };
  const secret = randomBytes(24).toString('hex');
  const withdrawalsUrl = `http://127.0.0.1:${ports.withdrawals}`;
  const gatewayUrl = `http://127.0.0.1:${ports.gateway}`;

  const common = {
    ...process.env,
    // The database must be created on the fly, which the services only do outside production.
    NODE_ENV: 'development',
    LOG_LEVEL: 'warn',
    DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/seller_api_bench',
    AMQP_URL: 'amqp://guest:guest@127.0.0.1:5672',
    AMQP_NAMESPACE: 'bench.',
    INTERNAL_SECRET: secret,
    SHUTDOWN_TIMEOUT_MS: '5000',
  };
  // Tracing would export a span per request and measure the exporter; keep it off whatever the shell says.
  delete common.OTEL_EXPORTER_OTLP_ENDPOINT;

  console.error(`starting withdrawals on ${ports.withdrawals} and the gateway on ${ports.gateway}...`);
  startService('withdrawals', {
    ...common,
    PORT: String(ports.withdrawals),
    METRICS_PORT: String(ports.withdrawalsMetrics),
  });
  startService('gateway', {
    ...common,
    PORT: String(ports.gateway),
    METRICS_PORT: String(ports.gatewayMetrics),
    REDIS_URL: 'redis://127.0.0.1:6379',
    // A fresh prefix: no rate-limit counters left over from another run or deployment.
    REDIS_KEY_PREFIX: `bench:${randomBytes(6).toString('hex')}:`,
    RATE_LIMIT_PER_MINUTE: '100000000',
    WITHDRAWALS_URL: withdrawalsUrl,
    // Not called by this bench; pointed at the same service so nothing reaches a stray local process.
    ORDERS_URL: withdrawalsUrl,
    PAYMENTS_URL: withdrawalsUrl,
    WEBHOOKS_URL: withdrawalsUrl,
  });
  await Promise.all([waitReady('withdrawals', withdrawalsUrl), waitReady('gateway', gatewayUrl)]);

  const key = await createKey(common);

  const direct = {
    name: 'direct',
    url: `${withdrawalsUrl}${BALANCE_PATH}`,
    // Signed anew for every run: the signature is only accepted for 60 s.
    headers: () =>
      signIdentity(
        secret,
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
  for (const target of [direct, gateway]) await load(target, WARMUP);
  console.error(`measuring (${DURATION} s per target, ${CONNECTIONS} connections)...`);
  const directResult = await load(direct, DURATION);
  const gatewayResult = await load(gateway, DURATION);
  console.error(`measuring the hop alone (${DURATION} s per target, 1 connection)...`);
  const directSerial = await load(direct, DURATION, 1);
  const gatewaySerial = await load(gateway, DURATION, 1);
  report(directResult, gatewayResult, idleCpu, directSerial, gatewaySerial);
  printLogSummary();
}

let exitCode = 0;
try {
  await Promise.race([main(), crashed]);
} catch (err) {
  if (!stopping) {
    printLogTails();
    console.error(`\nbench failed: ${err instanceof Error ? err.message : err}`);
    exitCode = 1;
  }
}
if (!stopping) {
  await stopChildren();
  process.exit(exitCode);
}
