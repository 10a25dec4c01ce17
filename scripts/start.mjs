// `npm start`: the five services in one terminal, logs prefixed by service, against the local
// PostgreSQL, Redis and RabbitMQ. Root variables such as GATEWAY_PORT or ORDERS_PORT become each
// service's PORT; everything else in the environment is passed on unchanged. Each service connects to
// PostgreSQL as its own role, which this script creates through the local superuser
// (local-database.mjs); RabbitMQ's `guest` serves all five locally.
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { serviceDatabaseUrls } from './local-database.mjs';
import { SERVICES, service as serviceNamed, serviceUrls } from './stack.cjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
// Log prefix colours; the services, their ports and who calls whom are in stack.cjs.
const COLORS = { orders: 32, payments: 33, withdrawals: 35, 'webhook-dispatcher': 34, gateway: 36 };

const portOf = (s) => process.env[`${s.env}_PORT`] ?? String(s.port);
const shared = serviceUrls(
  (name) => process.env[serviceNamed(name).urlVar] ?? `http://127.0.0.1:${portOf(serviceNamed(name))}`,
);
const width = Math.max(...SERVICES.map((s) => s.name.length));
const color = process.stdout.isTTY && !process.env.NO_COLOR;

const databaseUrls = await serviceDatabaseUrls(
  SERVICES.map((s) => s.name),
  { warn: (line) => process.stdout.write(`${line}\n`) },
);

const children = [];
let stopping = false;

function start(service) {
  const env = {
    ...process.env,
    ...shared,
    DATABASE_URL: databaseUrls[service.name],
    PORT: portOf(service),
    METRICS_PORT: process.env[`${service.env}_METRICS_PORT`] ?? String(service.metricsPort),
    // Test webhooks may reach this machine, where `npm run cli -- webhooks listen` receives them
    // (docs/webhooks.md, "Local receivers"). Only here: a deployment never sets it.
    WEBHOOK_ALLOW_LOOPBACK_TARGETS: process.env.WEBHOOK_ALLOW_LOOPBACK_TARGETS ?? 'true',
  };
  const child = spawn(process.execPath, [path.join(root, service.main)], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const label = service.name.padEnd(width);
  const prefix = color ? `\x1b[${COLORS[service.name] ?? 37}m${label}\x1b[0m |` : `${label} |`;
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on('line', (line) => process.stdout.write(`${prefix} ${line}\n`));
  }
  child.on('exit', (code, signal) => {
    process.stdout.write(`${prefix} exited (${signal ?? code})\n`);
    if (!stopping) shutdown(code || 1);
  });
  children.push(child);
}

function shutdown(code = 0) {
  if (stopping) return;
  stopping = true;
  for (const child of children) if (child.exitCode === null) child.kill('SIGTERM');
  const deadline = setTimeout(() => process.exit(code), 12_000);
  deadline.unref();
  Promise.all(children.map((c) => (c.exitCode !== null ? null : new Promise((r) => c.once('exit', r))))).then(
    () => process.exit(code),
  );
}

process.on('SIGINT', () => shutdown(0));
process.on('SIGTERM', () => shutdown(0));
for (const service of SERVICES) start(service);
