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

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SERVICES = [
  { name: 'orders', env: 'ORDERS', port: 3001, metrics: 9001, color: 32 },
  { name: 'payments', env: 'PAYMENTS', port: 3002, metrics: 9002, color: 33 },
  { name: 'withdrawals', env: 'WITHDRAWALS', port: 3003, metrics: 9003, color: 35 },
  { name: 'webhook-dispatcher', env: 'WEBHOOK_DISPATCHER', port: 3004, metrics: 9004, color: 34 },
  { name: 'gateway', env: 'GATEWAY', port: 8080, metrics: 9080, color: 36 },
];

const portOf = (s) => process.env[`${s.env}_PORT`] ?? String(s.port);
const url = (s) => `http://127.0.0.1:${portOf(s)}`;
const byName = Object.fromEntries(SERVICES.map((s) => [s.name, s]));
const shared = {
  ORDERS_URL: process.env.ORDERS_URL ?? url(byName.orders),
  PAYMENTS_URL: process.env.PAYMENTS_URL ?? url(byName.payments),
  WITHDRAWALS_URL: process.env.WITHDRAWALS_URL ?? url(byName.withdrawals),
  WEBHOOKS_URL: process.env.WEBHOOKS_URL ?? url(byName['webhook-dispatcher']),
};
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
    METRICS_PORT: process.env[`${service.env}_METRICS_PORT`] ?? String(service.metrics),
  };
  const child = spawn(process.execPath, [path.join(root, 'services', service.name, 'dist', 'main.js')], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const label = service.name.padEnd(width);
  const prefix = color ? `\x1b[${service.color}m${label}\x1b[0m |` : `${label} |`;
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
