// Every metric a dashboard panel or an alert reads must be exposed by a running service: the five
// services are started, a little traffic goes through them, and each /metrics is scraped over HTTP (on
// an ephemeral port, from the service's own registry). Also the domain counters count what happened.
import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync } from 'node:fs';
import { startMetricsServer, type Runtime } from '@seller-api/service-kit';
import { call } from '../support/system';
import { useSystem } from '../support/use-system';
import { waitFor } from '../support/wait';
import { createOrder, standaloneOrder } from '../orders/fixtures';
import { alertRules, dashboardFiles, metricNames, prepareCharts } from './helm';

const t = useSystem();
let runtimes: Runtime[];
const servers: http.Server[] = [];

beforeAll(() => {
  runtimes = [
    t.gateway.service.runtime,
    t.system.orders.runtime,
    t.system.payments.runtime,
    t.system.withdrawals.runtime,
    t.system.dispatcher.runtime,
  ];
  t.cleanup(() => Promise.all(servers.map((s) => new Promise((r) => s.close(r)))));
});

const urls = new Map<Runtime, string>();
async function scrape(runtime: Runtime): Promise<string> {
  let url = urls.get(runtime);
  if (!url) {
    const server = await startMetricsServer(runtime.metrics, 0, '127.0.0.1');
    servers.push(server);
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/metrics`;
    urls.set(runtime, url);
  }
  const res = await fetch(url);
  expect(res.status).toBe(200);
  return res.text();
}

/** Names a scrape offers a query: each family, and a histogram's _bucket, _sum and _count series. */
function exposedNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const [, name, type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    names.add(name as string);
    if (type === 'histogram' || type === 'summary')
      for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${name}${suffix}`);
  }
  return names;
}

/** The value of one sample, e.g. sample(text, 'orders_created_total', {environment: 'test'}). */
function sample(text: string, name: string, labels: Record<string, string>): number {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue;
    if (Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`)))
      return Number(line.split(' ').pop());
  }
  return 0;
}

it('every metric of the dashboards and the alerts is exposed by some service', async () => {
  const exposed = new Set<string>();
  for (const runtime of runtimes) for (const name of exposedNames(await scrape(runtime))) exposed.add(name);

  const wanted = new Map<string, string>();
  for (const file of dashboardFiles()) {
    const dashboard = JSON.parse(readFileSync(file, 'utf8')) as {
      panels: Array<{ title: string; targets?: Array<{ expr: string }> }>;
    };
    for (const panel of dashboard.panels)
      for (const target of panel.targets ?? [])
        for (const name of metricNames(target.expr)) wanted.set(name, `${file}: ${panel.title}`);
  }
  const charts = prepareCharts();
  try {
    for (const rule of alertRules(charts))
      for (const name of metricNames(rule.expr)) wanted.set(name, `alert ${rule.alert}`);
  } finally {
    charts.cleanup();
  }
  expect(wanted.size).toBeGreaterThan(20);
  // `up` is Prometheus's own series for every scrape target, not a service metric.
  const missing = [...wanted]
    .filter(([name]) => !exposed.has(name) && name !== 'up')
    .map(([n, where]) => `${n} (${where})`);
  expect(missing).toEqual([]);
}, 120_000);

it('counts orders created and charges paid, with their amounts in cents', async () => {
  const { key } = await t.newKey();
  const created = await createOrder(t.url, key, standaloneOrder({ payment: { gross_amount: 12345 } }));
  expect(created.status).toBe(201);
  const uuid = (created.body.data as { uuid: string }).uuid;
  const paid = await call(`${t.url}/sandbox/orders/${uuid}/pay/`, { method: 'POST', key });
  expect(paid.status).toBe(200);

  const orders = await scrape(t.system.orders.runtime);
  expect(sample(orders, 'orders_created_total', { environment: 'test' })).toBe(1);
  expect(sample(orders, 'orders_created_amount_cents_total', { environment: 'test' })).toBe(12345);
  const payments = await scrape(t.system.payments.runtime);
  expect(sample(payments, 'payments_charge_status_changes_total', { status: 'paid' })).toBe(1);
  expect(sample(payments, 'payments_charge_status_changes_amount_cents_total', { status: 'paid' })).toBe(
    12345,
  );
  // Published through the outbox, by routing key; the outbox drains to nothing waiting.
  await waitFor(async () =>
    (await scrape(t.system.payments.runtime)).includes('routing_key="payment.approved"'),
  );
  await waitFor(
    async () => sample(await scrape(t.system.payments.runtime), 'outbox_messages_pending', {}) === 0,
  );
});

it('reports consumers and readiness checks', async () => {
  const ready = await fetch(`${t.system.services.orders}/readyz`);
  expect(ready.status).toBe(200);
  const text = await scrape(t.system.orders.runtime);
  expect(sample(text, 'readiness_check_up', { check: 'postgres' })).toBe(1);
  expect(sample(text, 'readiness_check_up', { check: 'rabbitmq' })).toBe(1);
  expect(text).toMatch(/^amqp_consumer_active\{queue="[^"]+",service="orders"\} 1$/m);
});
