// docker-compose.yml is not run here (no Docker): its observability wiring is checked by reading it.
// Grafana must load the very files the Helm chart ships, and Prometheus scrape every metrics port.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { SERVICE_NAMES, deriveCallKey, parseCallerKeys } from '@seller-api/service-kit';
import { ROOT } from './helm';

const read = (file: string): unknown => parse(readFileSync(path.join(ROOT, file), 'utf8'));
const text = readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8');
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

it("gives each service its own key and its callers' keys, from .env, never a fallback (docs/deploy.md)", () => {
  const envName = (service: string) => service.toUpperCase().replace(/-/g, '_');
  for (const service of SERVICE_NAMES) {
    const environment = compose.services[service]?.environment ?? {};
    const held = Object.keys(environment)
      .filter((k) => /SECRET|KEY/.test(k))
      .sort();
    const expected = [
      // Every service but payments and the dispatcher signs calls; every service but the gateway is called.
      ...(['payments', 'webhook-dispatcher'].includes(service) ? [] : ['INTERNAL_KEY']),
      ...(service === 'gateway' ? [] : ['INTERNAL_CALLER_KEYS']),
      // The key that seals the webhooks' signing secrets (docs/deploy.md).
      ...(service === 'webhook-dispatcher' ? ['WEBHOOK_SECRETS_KEY'] : []),
    ].sort();
    expect({ service, held }).toEqual({ service, held: expected });
    if (held.includes('INTERNAL_KEY'))
      expect(environment.INTERNAL_KEY).toBe(
        `\${${envName(service)}_INTERNAL_KEY:?run npm run compose:env > .env}`,
      );
    if (held.includes('INTERNAL_CALLER_KEYS'))
      expect(environment.INTERNAL_CALLER_KEYS).toBe(
        `\${${envName(service)}_CALLER_KEYS:?run npm run compose:env > .env}`,
      );
  }
  // No password or key falls back to a value written in the file.
  expect(text).not.toMatch(/\$\{[A-Z_]*(PASSWORD|SECRET|KEY)[A-Z_]*:-/);
});

it('`npm run compose:env` writes every variable the file requires, keys derived as the services derive them', () => {
  const out = execFileSync(process.execPath, [path.join(ROOT, 'scripts/compose-env.mjs')], {
    encoding: 'utf8',
  });
  const env = Object.fromEntries(
    out
      .split('\n')
      .filter((line) => line && !line.startsWith('#'))
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  );
  const required = [...text.matchAll(/\$\{([A-Z_]+):\?/g)].map((m) => m[1] as string);
  for (const name of new Set(required))
    expect({ name, set: Boolean(env[name]) }).toEqual({ name, set: true });
  const gatewayKey = env.GATEWAY_INTERNAL_KEY as string;
  expect(Buffer.byteLength(gatewayKey)).toBeGreaterThanOrEqual(32);
  expect(parseCallerKeys(env.WITHDRAWALS_CALLER_KEYS as string).get('gateway')).toEqual([
    deriveCallKey(gatewayKey, 'withdrawals'),
  ]);
  // Only real callers: payments is called by three services, the dispatcher by the gateway alone.
  expect([...parseCallerKeys(env.PAYMENTS_CALLER_KEYS as string).keys()]).toEqual([
    'gateway',
    'orders',
    'withdrawals',
  ]);
  expect([...parseCallerKeys(env.WEBHOOK_DISPATCHER_CALLER_KEYS as string).keys()]).toEqual(['gateway']);
  expect(env.PAYMENTS_INTERNAL_KEY).toBeUndefined();
});
