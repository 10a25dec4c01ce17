// What the benches share: child processes that are always stopped on the way out, free ports,
// readiness, the operator CLI, autocannon runs with percentiles from every response time, CPU use per
// process from /proc, and the report tables. Importing this module installs the exit and signal
// handlers that stop the children, so a bench imports it once and runs its `main` through `runBench`.
//
// Environment read here: BENCH_VERBOSE=1 streams the children's log lines as they come instead of a
// summary at the end; BENCH_PROFILE=<dir> writes a V8 CPU profile of each child there.
/* global fetch, AbortSignal */
import { execFile, spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { calleeUrls, service } from '../scripts/stack.cjs';

const require = createRequire(import.meta.url);
const autocannon = require('autocannon');
const pg = require('pg');

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const READY_TIMEOUT_MS = 60_000;
const VERBOSE = process.env.BENCH_VERBOSE === '1';

/** An integer knob from the environment, between 1 and `max`; anything else stops the bench. */
export function intFromEnv(name, fallback, max) {
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
let crash; // rejects the main flow as soon as a child dies on its own
const crashed = new Promise((_, reject) => {
  crash = reject;
});
let currentRun = null; // the autocannon instance in flight, stopped on Ctrl-C

const alive = (child) => child.exitCode === null && child.signalCode === null;

/** The name and pid of every child started so far. */
export function childList() {
  return children.map(({ name, child }) => ({ name, pid: child.pid }));
}

/**
 * A compiled service (its entry point in scripts/stack.cjs), as a child named `name`, or `as` when
 * given (the dispatcher's shorter name in the reports).
 */
export function startService(name, env, { as, ...options } = {}) {
  const main = path.join(ROOT, service(name).main);
  if (!existsSync(main)) throw new Error(`${main} is missing: run \`npm run build\` first`);
  return startProcess(as ?? name, main, env, options);
}

/**
 * `node <script>` as a child named `name`. With BENCH_PROFILE set, it writes a V8 CPU profile there
 * when it exits, named `options.profileName` when given (Node's default name otherwise).
 */
export function startProcess(name, script, env, { profileName } = {}) {
  const profile = process.env.BENCH_PROFILE
    ? [
        '--cpu-prof',
        `--cpu-prof-dir=${process.env.BENCH_PROFILE}`,
        ...(profileName ? [`--cpu-prof-name=${profileName}`] : []),
      ]
    : [];
  // BENCH_NODE_FLAGS: V8 and Node flags NODE_OPTIONS refuses (--trace-deopt, say), for every child.
  const flags = (process.env.BENCH_NODE_FLAGS ?? '').split(/\s+/).filter(Boolean);
  const child = spawn(process.execPath, [...flags, ...profile, script], {
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
export function printLogSummary() {
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

/**
 * Runs the bench's `main` and leaves: exit code 0 when it completes (whatever its targets say), 1 when
 * it throws or a child dies on its own, with the children's last log lines. The children are stopped
 * first; `afterStop` then runs (their CPU profiles are written by then).
 */
export async function runBench(main, { afterStop } = {}) {
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
    if (afterStop) {
      try {
        await afterStop();
      } catch (err) {
        console.error(`\n${err instanceof Error ? err.message : err}`);
        exitCode = 1;
      }
    }
    process.exit(exitCode);
  }
}

// ---------------------------------------------------------------------------------------------------
// Set-up helpers.

/** `preferred` when it is free, otherwise one the kernel picks; `taken` keeps the ports distinct. */
export async function freePort(preferred, taken) {
  const tryListen = (port) =>
    new Promise((resolve) => {
      const server = net.createServer();
      server.once('error', () => resolve(null));
      server.listen(port, '0.0.0.0', () => {
        const { port: bound } = server.address();
        server.close(() => resolve(bound));
      });
    });
  let port = !taken.has(preferred) && (await tryListen(preferred));
  // The kernel may hand the port just closed out again: ask until it is one not yet taken.
  for (let tries = 0; (!port || taken.has(port)) && tries < 50; tries += 1) port = await tryListen(0);
  if (!port || taken.has(port)) throw new Error('could not find a free TCP port');
  taken.add(port);
  return port;
}

/**
 * Free ports for the named services of scripts/stack.cjs, each preferring its default port plus 10000
 * (13001, 19001, 18080...): clear of `npm start`'s, and the same from run to run when free.
 */
export async function servicePorts(names, taken) {
  const ports = {};
  for (const name of names) {
    const { port, metricsPort } = service(name);
    ports[name] = {
      port: await freePort(port + 10_000, taken),
      metricsPort: await freePort(metricsPort + 10_000, taken),
    };
  }
  return ports;
}

/** `http://127.0.0.1:<port>` of a service in `ports` (servicePorts). */
export const serviceUrl = (ports, name) => `http://127.0.0.1:${ports[name].port}`;

/**
 * A service's PORT and METRICS_PORT from `ports` (servicePorts), and its callees' `*_URL` variables
 * (scripts/stack.cjs): a callee the bench started by its URL, one it did not at `otherwise` when given
 * (so nothing reaches a stray local process), else left to the service's default.
 */
export function serviceEnv(name, ports, otherwise) {
  const urls = calleeUrls(name, (callee) => (ports[callee] ? serviceUrl(ports, callee) : otherwise));
  return {
    PORT: String(ports[name].port),
    METRICS_PORT: String(ports[name].metricsPort),
    ...Object.fromEntries(Object.entries(urls).filter(([, url]) => url !== undefined)),
  };
}

export async function waitReady(name, baseUrl) {
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

/** A `test` API key made with the operator CLI (`env` carries the gateway's DATABASE_URL). */
export async function createKey(env) {
  const cli = path.join(ROOT, 'services/gateway/dist/cli.js');
  const args = [cli, 'keys', 'create', '--email', 'bench@example.com', '--env', 'test', '--label', 'bench'];
  try {
    const { stdout } = await promisify(execFile)(process.execPath, args, { cwd: ROOT, env, timeout: 60_000 });
    const key = stdout.trim().split('\n').pop()?.trim();
    if (!key) throw new Error('the CLI printed no key');
    return key;
  } catch (err) {
    throw new Error(`creating the API key failed: ${err.message}${err.stderr ? `\n${err.stderr}` : ''}`, {
      cause: err,
    });
  }
}

/**
 * One request to the API for a bench's set-up: `body` (an object) sent as JSON, `key` as the bearer
 * credential when given, `headers` added. Answers the status, the JSON body (null when it is not JSON,
 * the caller reports `text`) and the text.
 */
export async function api(url, { key, method = 'GET', body, headers = {}, timeoutMs = 10_000 } = {}) {
  const res = await fetch(url, {
    method,
    headers: {
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...(key === undefined ? {} : { authorization: `Bearer ${key}` }),
      ...headers,
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(timeoutMs),
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

/**
 * A target: `{ name, url, headers: () => object, method?, body?, setupRequest?, status? }`. `body` is
 * a string sent as is; `setupRequest` may change each request under load (autocannon's hook);
 * `status`, when given, is the only status code accepted (otherwise any 2xx).
 */
function statusOk(target, status) {
  return target.status === undefined ? status >= 200 && status <= 299 : status === target.status;
}

/** One request before loading a target, so a 401 or 404 fails with its body rather than a count. */
export async function preflight(target) {
  const method = target.method ?? 'GET';
  const res = await fetch(target.url, {
    method,
    headers: target.headers(),
    ...(target.body === undefined ? {} : { body: target.body }),
    signal: AbortSignal.timeout(5_000),
  });
  const body = await res.text();
  if (!statusOk(target, res.status)) {
    throw new Error(`${target.name}: ${method} ${target.url} answered ${res.status}: ${body.slice(0, 500)}`);
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

/** A process's read and write system calls so far (reads include recv*, writes send* and writev). */
function procSyscalls(pid) {
  try {
    const io = readFileSync(`/proc/${pid}/io`, 'utf8');
    const field = (name) => Number(new RegExp(`^${name}: (\\d+)$`, 'm').exec(io)?.[1] ?? NaN);
    return { reads: field('syscr'), writes: field('syscw') };
  } catch {
    return null;
  }
}

/** CPU jiffies per process group and for the machine; null where /proc is not available (not Linux). */
function cpuSnapshot() {
  try {
    const groups = {}; // group name -> Map(pid -> jiffies)
    const syscalls = {}; // child name -> { reads, writes }
    const add = (group, pid, jiffies) => (groups[group] ??= new Map()).set(String(pid), jiffies);
    for (const { name, child } of children) {
      add(name, child.pid, procStat(child.pid).jiffies);
      syscalls[name] = procSyscalls(child.pid);
    }
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
    return { groups, syscalls, total, busy: total - idle, self: process.cpuUsage() };
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
  // Not enumerable, so the CPU table's columns stay what they were: each child's system calls.
  const syscalls = {};
  for (const [name, now] of Object.entries(after.syscalls)) {
    const then = before.syscalls[name];
    if (now && then) syscalls[name] = { reads: now.reads - then.reads, writes: now.writes - then.writes };
  }
  return Object.defineProperty({ machine, ...usage, other: Math.max(0, machine - named) }, 'syscalls', {
    value: syscalls,
  });
}

/** Runs `fn` and measures the CPU used meanwhile by each process and by the whole machine. */
export async function withCpu(fn) {
  const before = cpuSnapshot();
  const started = Date.now();
  const value = await fn();
  return { value, cpu: cpuUsage(before, cpuSnapshot(), Date.now() - started) };
}

export function percentile(sorted, q) {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

/**
 * Loads `target` (see `preflight`) for `seconds` over `connections` keep-alive connections. Any
 * error, timeout or unexpected status code fails the bench with the status codes seen.
 */
export async function load(target, seconds, connections) {
  const latencies = [];
  const instance = autocannon({
    url: target.url,
    method: target.method ?? 'GET',
    headers: target.headers(),
    ...(target.body === undefined ? {} : { body: target.body }),
    // A body of its own for every request (a distinct customer, say): `setupRequest(request)`.
    ...(target.setupRequest ? { requests: [{ setupRequest: target.setupRequest }] } : {}),
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
  if (target.status !== undefined) {
    // A 2xx that is not the expected one (a 200 replay where every answer must be a 201).
    const unexpected = Object.entries(result.statusCodeStats ?? {})
      .map(([code, { count }]) => [Number(code), count])
      .filter(([code]) => code >= 200 && code <= 299 && code !== target.status)
      .reduce((sum, [, count]) => sum + count, 0);
    if (unexpected > 0) problems.push(`${unexpected} answers other than ${target.status}`);
  }
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
/**
 * The report of a bench that reads the same queries on a small and a large database (`latencies[name]`
 * holds each query's `small` and `large` ms): a table of p50 and p99 at both sizes and their p99 ratio,
 * each query's ratio answered for printSizeVerdicts.
 */
export function printSizeComparison(latencies, names, sizes) {
  const fmt = (n) => n.toLocaleString('en-US');
  const rows = [
    [
      'query',
      `p50 ${fmt(sizes.small)}`,
      `p99 ${fmt(sizes.small)}`,
      `p50 ${fmt(sizes.large)}`,
      `p99 ${fmt(sizes.large)}`,
      'p99 ratio',
    ],
  ];
  const verdicts = [];
  for (const name of names) {
    const at = (which) => {
      const sorted = Float64Array.from(latencies[name][which]).sort();
      return { p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99) };
    };
    const small = at('small');
    const large = at('large');
    const ratio = large.p99 / small.p99;
    verdicts.push([name, ratio]);
    rows.push([
      name,
      `${small.p50.toFixed(2)} ms`,
      `${small.p99.toFixed(2)} ms`,
      `${large.p50.toFixed(2)} ms`,
      `${large.p99.toFixed(2)} ms`,
      ratio.toFixed(2),
    ]);
  }
  printTable(rows);
  return verdicts;
}

/** The verdict lines of printSizeComparison's answer. */
export function printSizeVerdicts(verdicts, sizes, maxRatio) {
  const fmt = (n) => n.toLocaleString('en-US');
  const width = Math.max(...verdicts.map(([name]) => name.length));
  for (const [name, ratio] of verdicts) {
    console.log(
      `p99 at ${fmt(sizes.large)} over ${fmt(sizes.small)}, ${name.padEnd(width)} ${ratio.toFixed(2).padStart(5)}   ` +
        `target <= ${maxRatio}   ${ratio <= maxRatio ? 'PASS' : 'MISS'}`,
    );
  }
}

/** Exits with a hint when one of `files` (a build's output the bench loads) is missing. */
export function exitUnlessBuilt(files) {
  for (const file of files) {
    if (!existsSync(file)) {
      console.error(`${file} is missing: run \`npm run build\` first`);
      process.exit(1);
    }
  }
}

export function printTable(rows) {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)));
  for (const row of rows) {
    console.log(
      row.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i]))).join('  '),
    );
  }
}

/** The CPU table: one row per `[label, cpu]` run, one column per process group seen in the last run. */
export function printCpuTable(runs) {
  if (runs.some(([, cpu]) => !cpu)) return;
  const names = Object.keys(runs[runs.length - 1][1]);
  console.log(`\nCPU, % of one core (the machine has ${os.availableParallelism()}):`);
  printTable([
    ['', ...names],
    ...runs.map(([label, cpu]) => [label, ...names.map((n) => (cpu[n] ?? 0).toFixed(0))]),
  ]);
}

// ---------------------------------------------------------------------------------------------------
// Orders, for the benches that create them.

/** The CPF every order uses unless a bench asks for many customers. */
export const CPF = '529.982.247-25';

/** The n-th of a sequence of valid CPFs (check digits computed), formatted `000.000.000-00`. */
export function nthCpf(n) {
  const digits = String(100_000_000 + (n % 800_000_000))
    .split('')
    .map(Number);
  for (const length of [9, 10]) {
    const sum = digits.slice(0, length).reduce((acc, d, i) => acc + d * (length + 1 - i), 0);
    const rest = sum % 11;
    digits.push(rest < 2 ? 0 : 11 - rest);
  }
  const s = digits.join('');
  return `${s.slice(0, 3)}.${s.slice(3, 6)}.${s.slice(6, 9)}-${s.slice(9)}`;
}

/** The body of every order: one physical item, a customer with a CPF and an address. */
/** The product every bench sells (POST /sellers/products/). */
export const PRODUCT_BODY = {
  name: 'Camiseta',
  price: 5000,
  type: 'PHYSICAL',
  images: ['https://cdn.example.com/camiseta.png'],
  commission_unit_amount: 500,
  producer_name: 'Produtora X',
};

export function orderBody(productId, taxId = CPF) {
  return {
    customer: {
      name: 'Maria Silva',
      tax_id: taxId,
      email: 'maria.silva@example.com',
      phone: '+5511999990000',
      address: {
        street: 'Rua das Flores',
        number: '123',
        complement: 'Apto 42',
        neighborhood: 'Centro',
        city: 'São Paulo',
        state: 'SP',
        postal_code: '01001-000',
      },
    },
    items: [{ product_uuid: productId, quantity: 1 }],
    payment: { shipping_amount: 1500 },
  };
}

/**
 * Samples pg_stat_activity of the database every 100 ms while `fn` runs, and gives per application
 * name the mean number of connections open, running a statement, waiting on a lock and idle in a
 * transaction, with the most frequent wait. `ignore` leaves out the bench's own connections.
 */
export async function withSessions(databaseUrl, fn, { ignore = [] } = {}) {
  const client = new pg.Client({ connectionString: databaseUrl, application_name: 'bench_sampler' });
  await client.connect();
  const skip = new Set(['bench_sampler', ...ignore]);
  const totals = new Map();
  let samples = 0;
  let running = true;
  const sampling = (async () => {
    while (running) {
      const { rows } = await client.query(
        `select coalesce(nullif(application_name, ''), '?') as app, state, wait_event_type, wait_event
           from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`,
      );
      samples += 1;
      for (const row of rows) {
        if (skip.has(row.app)) continue;
        const t = totals.get(row.app) ?? {
          open: 0,
          running: 0,
          lock: 0,
          idleInTransaction: 0,
          waits: new Map(),
        };
        totals.set(row.app, t);
        t.open += 1;
        if (row.state === 'active' && row.wait_event_type === 'Lock') t.lock += 1;
        else if (row.state === 'active') t.running += 1;
        else if (row.state?.startsWith('idle in transaction')) t.idleInTransaction += 1;
        if (row.state === 'active' && row.wait_event_type) {
          const wait = `${row.wait_event_type}:${row.wait_event}`;
          t.waits.set(wait, (t.waits.get(wait) ?? 0) + 1);
        }
      }
      await sleep(100);
    }
  })();
  try {
    const value = await fn();
    const rows = [...totals]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([application, t]) => ({
        application,
        open: t.open / samples,
        running: t.running / samples,
        lock: t.lock / samples,
        idleInTransaction: t.idleInTransaction / samples,
        topWait: ([...t.waits].sort((a, b) => b[1] - a[1])[0] ?? ['-'])[0],
      }));
    return { value, sessions: { samples, rows } };
  } finally {
    running = false;
    await sampling.catch(() => undefined);
    await client.end().catch(() => undefined);
  }
}

/**
 * Drops a bench's database, so that the services create it anew: every run starts from the same empty
 * tables, not from the rows (and, where autovacuum is off, the dead rows) of the runs before it.
 */
export async function dropDatabase(name) {
  const admin = new pg.Client({
    connectionString: 'postgres://postgres@127.0.0.1:5432/postgres',
    application_name: 'bench',
  });
  await admin.connect();
  try {
    await admin.query(`drop database if exists ${name} with (force)`);
  } finally {
    await admin.end();
  }
}
