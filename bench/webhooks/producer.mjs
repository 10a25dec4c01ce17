// The event producer of `npm run bench:webhooks`: a minimal service that commits events the way every
// service of the repository does, and nothing else. It runs service-kit's runtime (the outbox table in
// its own schema, `bench_producer`, the broker and the OutboxRelay), and each `POST /events` is one
// transaction that stores one outbox row through service-kit's `enqueue`: an `order.created` on the
// orders exchange with the headers the orders service sets (seller, environment, order id) and a real
// order.created payload. The relay publishes it after the commit, as it does for the orders service.
// What it leaves out is the orders service's own work (validation, pricing, the PIX charge), which
// bench/create-order measures.
//
// Environment: PORT, and the services' DATABASE_URL, AMQP_URL, AMQP_NAMESPACE, LOG_LEVEL.
// HTTP, on 127.0.0.1:PORT:
//   GET  /readyz      200 once the database, the broker and the relay are up
//   POST /template    { seller_id, payload }: what every event carries from then on
//   POST /events      commits one event; 201 once committed
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const kit = require(path.join(ROOT, 'packages/service-kit/dist/index.js'));
const { Migration } = require('@mikro-orm/migrations');

const SCHEMA = 'bench_producer';

class Init extends Migration {
  async up() {
    for (const sql of kit.kitMigrationSql(SCHEMA)) this.addSql(sql);
  }
}

const runtime = await kit.createRuntime({
  service: 'bench-producer',
  config: {
    NODE_ENV: 'development',
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
    DATABASE_URL: process.env.DATABASE_URL,
    AMQP_URL: process.env.AMQP_URL,
    AMQP_NAMESPACE: process.env.AMQP_NAMESPACE ?? '',
    MIGRATE_ON_START: true,
    SHUTDOWN_TIMEOUT_MS: 5_000,
  },
  schema: SCHEMA,
  entities: [],
  migrations: [{ name: 'BenchProducerInit', class: Init }],
  // The orders exchange, declared by the orders service and the dispatcher too.
  topology: { exchanges: ['orders.events'], queues: [] },
});

let template = null;

async function readJson(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}');
}

async function commitEvent() {
  const orderId = randomUUID();
  await runtime.orm.em.fork().transactional(async (tx) => {
    kit.enqueue(tx, {
      exchange: 'orders.events',
      routingKey: 'order.created',
      payload: template.payload,
      headers: { 'x-seller-id': template.sellerId, 'x-environment': 'test', 'x-order-uuid': orderId },
    });
  });
}

const server = http.createServer((req, res) => {
  const reply = (status, body = {}) =>
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  const route = `${req.method} ${req.url}`;
  if (route === 'GET /readyz') return reply(200, { ok: true });
  if (route === 'POST /template') {
    readJson(req)
      .then((body) => {
        template = { sellerId: body.seller_id, payload: body.payload };
        reply(200, { ok: true });
      })
      .catch((err) => reply(400, { error: err.message }));
    return undefined;
  }
  if (route === 'POST /events') {
    if (!template) return reply(409, { error: 'POST /template first' });
    req.resume();
    commitEvent()
      .then(() => reply(201, { ok: true }))
      .catch((err) => reply(500, { error: err.message }));
    return undefined;
  }
  return reply(404, { error: 'not found' });
});
server.keepAliveTimeout = 15_000;
await new Promise((resolve) => server.listen(Number(process.env.PORT), '127.0.0.1', resolve));

let stopping = false;
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    server.close();
    server.closeAllConnections();
    runtime
      .stop()
      .catch(() => undefined)
      .finally(() => process.exit(0));
  });
}
