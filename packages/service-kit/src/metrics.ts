import http from 'node:http';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

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
    labelNames: ['exchange'] as const,
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
  return { registry, httpDuration, httpRequests, outboxPublished, outboxLag, messagesConsumed };
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
