import http from 'node:http';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { MikroORM } from './db';

export type Metrics = ReturnType<typeof createMetrics>;

/** One registry per service instance, so two instances in one process (tests) never collide. */
export function createMetrics(service: string) {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  const httpDuration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration by method, route template and status code',
    labelNames: ['method', 'route', 'status_code'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const httpRequests = new Counter({
    name: 'http_requests_total',
    help: 'HTTP requests by method, route template and status code',
    labelNames: ['method', 'route', 'status_code'] as const,
    registers: [registry],
  });
  const outboxPublished = new Counter({
    name: 'outbox_messages_published_total',
    help: 'Messages the outbox relay published with a broker confirm',
    labelNames: ['exchange', 'routing_key'] as const,
    registers: [registry],
  });
  const outboxLag = new Histogram({
    name: 'outbox_publish_lag_seconds',
    help: 'Time from an outbox row being committed to its broker confirm',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  });
  const messagesConsumed = new Counter({
    name: 'messages_consumed_total',
    help: 'Messages consumed by queue and outcome (processed, duplicate, retried, dead)',
    labelNames: ['queue', 'outcome'] as const,
    registers: [registry],
  });
  // Set by the broker: 1 while a consumer runs on the queue, 0 once its channel is gone (the
  // "consumer stopped" alert).
  const consumerActive = new Gauge({
    name: 'amqp_consumer_active',
    help: 'Whether this process consumes the queue (1) or not (0)',
    labelNames: ['queue'] as const,
    registers: [registry],
  });
  // Set on every /readyz (the kubelet calls it every few seconds): the "readiness failing" alert.
  const readiness = new Gauge({
    name: 'readiness_check_up',
    help: 'Result of the last readiness probe of each dependency (1 ok, 0 failing)',
    labelNames: ['check'] as const,
    registers: [registry],
  });
  return {
    registry,
    httpDuration,
    httpRequests,
    outboxPublished,
    outboxLag,
    messagesConsumed,
    consumerActive,
    readiness,
  };
}

/**
 * Read at scrape time from the service's outbox table: rows waiting for the relay and the age of the
 * oldest one (the outbox lag alert: it grows when the relay or the broker is stuck, even though no
 * publish happens to be observed). A failed query reports NaN (unknown) rather than failing the scrape.
 */
export function registerOutboxGauges(metrics: Metrics, orm: MikroORM, schema: string): void {
  const query = (sql: string) =>
    orm.em
      .getConnection()
      .execute<Array<{ v: string | null }>>(sql)
      .then((rows) => Number(rows[0]?.v ?? 0));
  new Gauge({
    name: 'outbox_messages_pending',
    help: 'Outbox rows not yet published',
    registers: [metrics.registry],
    async collect() {
      this.set(await query(`select count(*) as v from "${schema}".outbox`).catch(() => NaN));
    },
  });
  new Gauge({
    name: 'outbox_oldest_message_age_seconds',
    help: 'Age of the oldest outbox row not yet published (0 when none)',
    registers: [metrics.registry],
    async collect() {
      const sql = `select coalesce(extract(epoch from now() - min(created_at)), 0) as v from "${schema}".outbox`;
      this.set(await query(sql).catch(() => NaN));
    },
  });
}

/**
 * A domain event counted twice: how many (`<name>_total`) and how much money (`<name>_amount_cents_total`,
 * integer cents), both by one label. Call `record` after the change has committed.
 */
export function countWithAmount<L extends string>(
  metrics: Metrics,
  options: { name: string; help: string; label: L },
): (labelValue: string, amountCents: number) => void {
  const labelNames = [options.label] as const;
  const count = new Counter({
    name: `${options.name}_total`,
    help: options.help,
    labelNames,
    registers: [metrics.registry],
  });
  const amount = new Counter({
    name: `${options.name}_amount_cents_total`,
    help: `${options.help}: their amount in cents (BRL)`,
    labelNames,
    registers: [metrics.registry],
  });
  return (labelValue, amountCents) => {
    const labels = { [options.label]: labelValue } as Record<L, string>;
    count.inc(labels);
    amount.inc(labels, amountCents);
  };
}

/** `/metrics` lives on its own admin port, never on the public one. */
export function startMetricsServer(metrics: Metrics, port: number, host = '0.0.0.0'): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    if (req.method === 'GET' && req.url?.split('?')[0] === '/metrics') {
      metrics.registry
        .metrics()
        .then((text) => {
          res.writeHead(200, { 'Content-Type': metrics.registry.contentType });
          res.end(text);
        })
        .catch(() => {
          res.writeHead(500).end();
        });
      return;
    }
    res
      .writeHead(404, { 'Content-Type': 'application/json' })
      .end('{"message":"Not found","code":"not_found"}');
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve(server));
  });
}
