// The system under test, started from its build as separate processes (by default two replicas of
// every service), and the local servers it depends on. A service can be killed (SIGKILL) and started
// again with the same environment and port; PostgreSQL, RabbitMQ and Redis are stopped and started
// with the commands of this machine, each one replaceable through an environment variable.
/* global fetch, AbortSignal */
import { execFile, spawn } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { SERVICES, serviceUrls, startWaves } from '../scripts/stack.cjs';
import { startBalancer } from './balancer.mjs';

const require = createRequire(import.meta.url);
const amqp = require('amqplib');
const pg = require('pg');

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const run = promisify(execFile);

// Whatever way the harness leaves, no service it started outlives it.
const everyChild = new Set();
process.on('exit', () => {
  for (const child of everyChild) child.kill('SIGKILL');
});
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => process.exit(130));

/** Local server commands; each can be replaced, e.g. CHAOS_PG_RESTART='systemctl restart postgresql'. */
function serverCommands() {
  const pgVersion = existsSync('/etc/postgresql') ? (readdirSync('/etc/postgresql')[0] ?? '15') : '15';
  return {
    pgRestart:
      process.env.CHAOS_PG_RESTART ?? `pg_ctlcluster --skip-systemctl-redirect ${pgVersion} main restart`,
    rabbitStop: process.env.CHAOS_RABBITMQ_STOP ?? 'rabbitmqctl stop_app',
    rabbitStart: process.env.CHAOS_RABBITMQ_START ?? 'rabbitmqctl start_app',
    redisStop: process.env.CHAOS_REDIS_STOP ?? 'redis-cli -p 6379 shutdown nosave',
    redisStart:
      process.env.CHAOS_REDIS_START ??
      'redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no --dir /var/lib/redis --logfile /var/log/redis/ci.log',
  };
}

export async function shell(command) {
  try {
    await run('bash', ['-c', command], { timeout: 120_000 });
  } catch (err) {
    // `redis-cli shutdown` closes the connection it asked on: an error that means it worked.
    if (!/shutdown/.test(command))
      throw new Error(`${command}: ${err.stderr || err.message}`, { cause: err });
  }
}

/** Waits until a TCP port accepts connections (a server back after a restart). */
export async function portAnswers(port, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const ok = await new Promise((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.destroy();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (ok) return;
    await sleep(200);
  }
  throw new Error(`port ${port} did not answer within ${timeoutMs / 1000} s`);
}

export function servers() {
  const commands = serverCommands();
  return {
    async restartPostgres() {
      await shell(commands.pgRestart);
      await portAnswers(5432);
    },
    stopRabbit: () => shell(commands.rabbitStop),
    async startRabbit() {
      await shell(commands.rabbitStart);
      await portAnswers(5672);
    },
    stopRedis: () => shell(commands.redisStop),
    async startRedis() {
      await shell(commands.redisStart);
      await portAnswers(6379);
    },
  };
}

/** Ports given out this run: a service keeps its port across its restarts. */
const given = new Set();

/**
 * A free port below the kernel's ephemeral range (32768 and up on Linux): a killed service's port
 * must still be free when it starts again, and a port in that range can meanwhile be taken as the
 * local end of any outgoing connection (then the restart fails with EADDRINUSE).
 */
async function freePort() {
  for (let tries = 0; tries < 200; tries += 1) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    if (given.has(port)) continue;
    const free = await new Promise((resolve) => {
      const server = net.createServer();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
    if (free) {
      given.add(port);
      return port;
    }
  }
  throw new Error('no free port between 20000 and 32000');
}

async function waitReady(name, url, timeoutMs = 90_000) {
  const deadline = Date.now() + timeoutMs;
  let last = 'no answer';
  while (Date.now() < deadline) {
    try {
      const res = await fetch(`${url}/readyz`, { signal: AbortSignal.timeout(2_000) });
      if (res.status === 200) return;
      last = `HTTP ${res.status}`;
    } catch (err) {
      last = err.cause?.code ?? err.message;
    }
    await sleep(250);
  }
  throw new Error(`${name} not ready at ${url}/readyz (last: ${last})`);
}

/** Every queue the topologies declare, in the namespace, old classic names included. */
export const QUEUES = ['withdrawals.ledger', 'orders.charges', 'webhooks.intake'].flatMap((q) =>
  [q, `${q}.quorum`].flatMap((main) => [main, `${main}.retry`, `${main}.dead`]),
);

/** A run starts from nothing: its own database, dropped first, and no queue left by an earlier run. */
export async function resetState({ database, amqpUrl, namespace }) {
  const admin = new pg.Client({ connectionString: 'postgres://postgres@127.0.0.1:5432/postgres' });
  await admin.connect();
  try {
    await admin.query(`drop database if exists ${database} with (force)`);
    await admin.query(`create database ${database}`);
  } finally {
    await admin.end();
  }
  await deleteQueues(amqpUrl, namespace);
}

/**
 * Deletes the run's queues (deleting a missing queue is no error). Each quorum queue holds three of
 * RabbitMQ's file handles while it exists, so a run leaves none behind.
 */
export async function deleteQueues(amqpUrl, namespace) {
  const connection = await amqp.connect(amqpUrl);
  try {
    const channel = await connection.createChannel();
    await Promise.all(QUEUES.map((queue) => channel.deleteQueue(`${namespace}${queue}`)));
  } finally {
    await connection.close();
  }
}

/** How each service's replicas are named: `orders`, or `orders-1`, `orders-2`... */
const SHORT = { 'webhook-dispatcher': 'dispatcher' };
// The gateway and the dispatcher are always numbered, one replica or more (the benches read them so).
const ALWAYS_NUMBERED = new Set(['gateway', 'webhook-dispatcher']);

/**
 * The replicas of each service: a number for all of them, or `{service: n}` with `default` for the
 * others. `topology` ("2", "1", "orders=3,payments=2", "default=1,gateway=2") is the harness's option.
 */
export function parseTopology(topology) {
  const counts = Object.fromEntries(SERVICES.map((s) => [s.name, 2]));
  const set = (name, value) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < 1 || n > 4) throw new Error(`topology: ${name} needs 1 to 4 replicas`);
    if (name === 'default') for (const s of SERVICES) counts[s.name] = n;
    else if (name in counts) counts[name] = n;
    else throw new Error(`topology: no service "${name}" (${Object.keys(counts).join(', ')})`);
  };
  if (typeof topology === 'object') for (const [name, value] of Object.entries(topology)) set(name, value);
  else if (typeof topology === 'number') set('default', topology);
  else if (/^\d+$/.test(String(topology))) set('default', topology);
  else {
    const parts = String(topology)
      .split(',')
      .map((part) => part.trim().split('='));
    // `default` first, whatever its place, so a service named beside it keeps its own count.
    for (const [name, value] of parts.filter(([name]) => name === 'default')) set(name, value);
    for (const [name, value] of parts.filter(([name]) => name !== 'default')) set(name, value);
  }
  return counts;
}

/** The names of a service's replicas under `counts`. */
export function replicaNames(service, counts) {
  const n = counts[service];
  const short = SHORT[service] ?? service;
  if (n === 1 && !ALWAYS_NUMBERED.has(service)) return [service];
  return Array.from({ length: n }, (_, i) => `${short}-${i + 1}`);
}

/**
 * The services, each as `replicas` says (parseTopology: a number for all, or per service; `1` is one
 * of each, as `npm start` runs them). A service with several replicas is reached by the others through
 * a balancer in front of them (balancer.mjs), as a deployment's Service; the gateways are called by the
 * client directly, each by its own URL. Logs go to one file per process under `logDir`, kept after the
 * run. `nodeArgs` go before each child's script (a bench's `--cpu-prof`); `envFor(i)` adds variables
 * of the i-th process (its own broker address list).
 */
export async function startCluster({ env, logDir, replicas = 2, nodeArgs = [], envFor }) {
  mkdirSync(logDir, { recursive: true });
  const counts = parseTopology(replicas);
  const namesOf = (service) => replicaNames(service, counts);
  const specs = SERVICES.flatMap((s) =>
    namesOf(s.name).map((name) => ({ name, service: s.name, main: s.main })),
  );
  const procs = new Map();
  for (const [index, spec] of specs.entries()) {
    const main = path.join(ROOT, spec.main);
    if (!existsSync(main)) throw new Error(`${main} is missing: run \`npm run build\` first`);
    procs.set(spec.name, {
      ...spec,
      main,
      port: await freePort(),
      metricsPort: await freePort(),
      own: envFor?.(index) ?? {},
      child: null,
    });
  }
  const url = (name) => `http://127.0.0.1:${procs.get(name).port}`;
  const balancers = new Map();
  for (const s of SERVICES) {
    const names = namesOf(s.name);
    if (names.length > 1 && s.name !== 'gateway')
      balancers.set(s.name, await startBalancer(names.map((name) => procs.get(name).port)));
  }
  // A service of one replica is reached at it; a replicated one through its balancer.
  const serviceUrl = (service) =>
    balancers.has(service) ? `http://127.0.0.1:${balancers.get(service).port}` : url(namesOf(service)[0]);
  const shared = { ...env, ...serviceUrls(serviceUrl) };
  const envOf = (p) => ({ ...shared, ...p.own, PORT: String(p.port), METRICS_PORT: String(p.metricsPort) });
  let stopping = false;
  const exits = [];

  function start(name) {
    const p = procs.get(name);
    const log = createWriteStream(path.join(logDir, `${name}.log`), { flags: 'a' });
    const child = spawn(process.execPath, [...nodeArgs, p.main], {
      cwd: ROOT,
      env: envOf(p),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout.pipe(log, { end: false });
    child.stderr.pipe(log, { end: false });
    child.once('exit', (code, signal) => {
      log.end();
      if (p.child === child) p.child = null;
      if (!stopping && !p.killing) exits.push(`${name} exited by itself (${signal ?? `code ${code}`})`);
    });
    everyChild.add(child);
    child.once('exit', () => everyChild.delete(child));
    p.child = child;
    p.killing = false;
  }

  const startAll = async (names) => {
    for (const name of names) start(name);
    await Promise.all(names.map((name) => waitReady(name, url(name))));
  };
  // Each service after the ones it calls (stack.cjs): payments and the dispatchers first, the gateways
  // last.
  for (const wave of startWaves()) await startAll(wave.flatMap(namesOf));
  const gateways = namesOf('gateway');
  return {
    url,
    counts,
    /** The replicas of a service, by name. */
    replicasOf: namesOf,
    gatewayUrls: gateways.map((g) => `${url(g)}/api/v1`),
    envOf: (name) => envOf(procs.get(name)),
    /** Each running process's name and pid (for a bench reading /proc). */
    pids: () => [...procs.values()].filter((p) => p.child).map((p) => ({ name: p.name, pid: p.child.pid })),
    /** Processes that died without being killed by a fault: a failure of the run. */
    unexpectedExits: () => [...exits],
    kill(name) {
      const p = procs.get(name);
      if (!p.child) return;
      p.killing = true;
      p.child.kill('SIGKILL');
    },
    async restart(name) {
      const p = procs.get(name);
      if (p.child) await new Promise((resolve) => p.child.once('exit', resolve));
      start(name);
      await waitReady(name, url(name));
    },
    async stop() {
      stopping = true;
      const running = [...procs.values()].filter((p) => p.child);
      const exited = Promise.all(running.map((p) => new Promise((resolve) => p.child.once('exit', resolve))));
      for (const p of running) p.child.kill('SIGTERM');
      await Promise.race([exited, sleep(15_000)]);
      for (const p of running) p.child?.kill('SIGKILL');
      for (const balancer of balancers.values()) await balancer.close();
    },
  };
}

/** A seller with a `test` API key, made with the operator CLI. */
export async function createSeller(gatewayEnv, email) {
  const cli = path.join(ROOT, 'services/gateway/dist/cli.js');
  const args = [cli, 'keys', 'create', '--email', email, '--env', 'test', '--label', 'chaos'];
  const { stdout } = await run(process.execPath, args, { cwd: ROOT, env: gatewayEnv, timeout: 60_000 });
  const key = stdout.trim().split('\n').pop()?.trim();
  if (!key) throw new Error('the key CLI printed no key');
  return key;
}
