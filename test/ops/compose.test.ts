// docker-compose.yml is not run here (no Docker): its observability wiring is checked by reading it.
// Grafana must load the very files the Helm chart ships, and Prometheus scrape every metrics port.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { ROOT } from './helm';

const read = (file: string): unknown => parse(readFileSync(path.join(ROOT, file), 'utf8'));
const compose = read('docker-compose.yml') as {
  services: Record<string, { volumes?: string[]; environment?: Record<string, string> }>;
};

it('Grafana mounts the Helm chart dashboards where its provisioning reads them', () => {
  const volumes = compose.services.grafana?.volumes ?? [];
  const dashboards = volumes.find((v) => v.startsWith('./helm/seller-api/dashboards:'));
  expect(dashboards).toBeDefined();
  const mountPath = (dashboards as string).split(':')[1];
  expect(volumes).toContain('./deploy/grafana/provisioning:/etc/grafana/provisioning:ro');
  const provider = read('deploy/grafana/provisioning/dashboards/seller-api.yml') as {
    providers: Array<{ options: { path: string } }>;
  };
  expect(provider.providers[0]?.options.path).toBe(mountPath);
  const datasource = read('deploy/grafana/provisioning/datasources/prometheus.yml') as {
    datasources: Array<{ type: string; url: string; isDefault: boolean }>;
  };
  expect(datasource.datasources[0]).toMatchObject({
    type: 'prometheus',
    url: 'http://prometheus:9090',
    isDefault: true,
  });
});

it('Prometheus scrapes each service on the METRICS_PORT compose gives it', () => {
  const config = read('deploy/prometheus/prometheus.yml') as {
    scrape_configs: Array<{ static_configs: Array<{ targets: string[] }> }>;
  };
  const targets = config.scrape_configs.flatMap((c) => c.static_configs.flatMap((s) => s.targets));
  for (const service of ['gateway', 'orders', 'payments', 'withdrawals', 'webhook-dispatcher']) {
    const port = compose.services[service]?.environment?.METRICS_PORT;
    expect(port).toBeDefined();
    expect(targets).toContain(`${service}:${port}`);
  }
  expect(compose.services.prometheus?.volumes).toContain(
    './deploy/prometheus/prometheus.yml:/etc/prometheus/prometheus.yml:ro',
  );
});

it("gives each service its own internal secret and each caller only its callees' (docs/deploy.md)", () => {
  // The variable each secret is read from, by service: its own INTERNAL_SECRET and the callees'.
  const expected: Record<string, Record<string, string>> = {
    gateway: {
      ORDERS_INTERNAL_SECRET: 'ORDERS_INTERNAL_SECRET',
      PAYMENTS_INTERNAL_SECRET: 'PAYMENTS_INTERNAL_SECRET',
      WITHDRAWALS_INTERNAL_SECRET: 'WITHDRAWALS_INTERNAL_SECRET',
      WEBHOOKS_INTERNAL_SECRET: 'WEBHOOKS_INTERNAL_SECRET',
    },
    orders: {
      INTERNAL_SECRET: 'ORDERS_INTERNAL_SECRET',
      PAYMENTS_INTERNAL_SECRET: 'PAYMENTS_INTERNAL_SECRET',
      WITHDRAWALS_INTERNAL_SECRET: 'WITHDRAWALS_INTERNAL_SECRET',
    },
    payments: { INTERNAL_SECRET: 'PAYMENTS_INTERNAL_SECRET' },
    withdrawals: {
      INTERNAL_SECRET: 'WITHDRAWALS_INTERNAL_SECRET',
      PAYMENTS_INTERNAL_SECRET: 'PAYMENTS_INTERNAL_SECRET',
    },
    'webhook-dispatcher': { INTERNAL_SECRET: 'WEBHOOKS_INTERNAL_SECRET' },
  };
  const shared = (compose as unknown as { 'x-service-env': Record<string, string> })['x-service-env'];
  expect(Object.keys(shared).filter((k) => k.includes('SECRET'))).toEqual([]);
  for (const [service, secrets] of Object.entries(expected)) {
    const environment = compose.services[service]?.environment ?? {};
    const held = Object.keys(environment).filter((k) => k.endsWith('INTERNAL_SECRET'));
    expect({ service, held: held.sort() }).toEqual({ service, held: Object.keys(secrets).sort() });
    for (const [name, variable] of Object.entries(secrets))
      expect(environment[name]).toMatch(new RegExp(`^\\$\\{${variable}:-[a-z-]{16,}\\}$`));
  }
});
