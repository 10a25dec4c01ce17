// The charts as CI sees them, without a cluster: lint, render every chart alone and the umbrella with
// default and production values, and validate every object against the Kubernetes and Prometheus
// Operator schemas. Also what the charts promise: probes, hardening, hooks, policies, no secrets.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { ConfigMap, Service, ServiceAccount } from 'kubernetes-models/v1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { Job } from 'kubernetes-models/batch/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { Ingress, NetworkPolicy } from 'kubernetes-models/networking.k8s.io/v1';
import {
  PrometheusRule,
  ServiceMonitor,
} from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import { alertRules, CHARTS, prepareCharts, ROOT, SERVICES, type Charts, type K8sObject } from './helm';

type Validator = new (data: never) => { validate(): void };
const MODELS: Record<string, Validator> = {
  'v1/ServiceAccount': ServiceAccount,
  'v1/ConfigMap': ConfigMap,
  'v1/Service': Service,
  'apps/v1/Deployment': Deployment,
  'batch/v1/Job': Job,
  'autoscaling/v2/HorizontalPodAutoscaler': HorizontalPodAutoscaler,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
  'networking.k8s.io/v1/NetworkPolicy': NetworkPolicy,
  'networking.k8s.io/v1/Ingress': Ingress,
  'monitoring.coreos.com/v1/ServiceMonitor': ServiceMonitor,
  'monitoring.coreos.com/v1/PrometheusRule': PrometheusRule,
};

/**
 * Gateway API objects, which kubernetes-models does not ship: the fields the standard channel (v1.5
 * and later) requires, and the shapes the chart relies on.
 */
function validateGatewayApi(o: K8sObject): void {
  const spec = o.spec as Record<string, never>;
  const fail = (why: string) => {
    throw new Error(`${o.kind} ${o.metadata.name} is invalid: ${why}`);
  };
  if (o.kind === 'Gateway') {
    const g = spec as unknown as {
      gatewayClassName?: string;
      listeners?: Array<{
        name?: string;
        port?: number;
        protocol?: string;
        tls?: { mode?: string; certificateRefs?: unknown[] };
      }>;
      tls?: {
        frontend?: {
          default?: {
            validation?: {
              mode?: string;
              caCertificateRefs?: Array<{ kind?: string; group?: string; name?: string }>;
            };
          };
        };
      };
    };
    if (!g.gatewayClassName) fail('spec.gatewayClassName is required');
    if (!g.listeners?.length) fail('spec.listeners is required');
    for (const l of g.listeners ?? []) {
      if (!l.name || !Number.isInteger(l.port) || !l.protocol) fail('a listener needs name, port, protocol');
      if (l.protocol === 'HTTPS' && !l.tls?.certificateRefs?.length)
        fail('an HTTPS listener needs certificateRefs');
    }
    const validation = g.tls?.frontend?.default?.validation;
    if (validation) {
      if (!['AllowValidOnly', 'AllowInsecureFallback'].includes(validation.mode ?? 'AllowValidOnly'))
        fail('bad validation mode');
      if (!validation.caCertificateRefs?.length) fail('validation needs caCertificateRefs');
      for (const ref of validation.caCertificateRefs ?? [])
        if (ref.group !== '' || ref.kind !== 'ConfigMap' || !ref.name)
          fail('a CA reference is a core ConfigMap');
    }
  } else if (o.kind === 'HTTPRoute') {
    const r = spec as unknown as {
      parentRefs?: Array<{ name?: string }>;
      rules?: Array<{
        backendRefs?: Array<{ name?: string; port?: number }>;
        filters?: Array<{ type?: string }>;
      }>;
    };
    if (!r.parentRefs?.length || r.parentRefs.some((p) => !p.name)) fail('spec.parentRefs is required');
    for (const rule of r.rules ?? []) {
      for (const b of rule.backendRefs ?? [])
        if (!b.name || !Number.isInteger(b.port)) fail('a Service backend needs a port');
      for (const f of rule.filters ?? [])
        if (
          ![
            'RequestHeaderModifier',
            'ResponseHeaderModifier',
            'RequestRedirect',
            'URLRewrite',
            'RequestMirror',
            'ExtensionRef',
            'CORS',
          ].includes(f.type ?? '')
        )
          fail(`unknown filter ${f.type}`);
    }
  } else fail('unknown kind');
}

function validateAll(objects: K8sObject[]): void {
  expect(objects.length).toBeGreaterThan(0);
  for (const o of objects) {
    if (o.apiVersion === 'gateway.networking.k8s.io/v1') {
      validateGatewayApi(o);
      continue;
    }
    const key = `${o.apiVersion}/${o.kind}`;
    const Model = MODELS[key];
    if (!Model) throw new Error(`${o.metadata.name}: no schema known for ${key}`);
    try {
      new Model(o as never).validate();
    } catch (err) {
      throw new Error(`${key} ${o.metadata.name} is invalid: ${(err as Error).message}`, { cause: err });
    }
  }
}

const byKind = (objects: K8sObject[], kind: string) => objects.filter((o) => o.kind === kind);
const one = (objects: K8sObject[], kind: string, name?: string) => {
  const found = byKind(objects, kind).filter((o) => !name || o.metadata.name === name);
  expect(found).toHaveLength(1);
  return found[0] as K8sObject & { spec: Record<string, never> };
};

// Everything a production install turns on in a chart rendered alone.
const ALL_ON = [
  'metrics.serviceMonitor.enabled=true',
  'metrics.prometheusRule.enabled=true',
  'ingress.enabled=true',
  'ingress.pspMtls.enabled=true',
  'ingress.pspMtls.caConfigMap=psp-ca',
  'ingress.pspMtls.gatewayApi.gatewayClassName=example',
];
// The same with the PSP hosts on ingress-nginx, which a cluster still running it may choose.
const NGINX_ON = [
  ...ALL_ON.filter((s) => !s.startsWith('ingress.pspMtls.')),
  'ingress.pspMtls.enabled=true',
  'ingress.pspMtls.via=ingress-nginx',
  'ingress.pspMtls.caSecret=seller-api/psp-ca',
];

let charts: Charts;
beforeAll(() => {
  charts = prepareCharts();
}, 120_000);
afterAll(() => charts?.cleanup());

describe('helm lint --strict', () => {
  it.each(CHARTS)('%s', (chart) => {
    const out = charts.run(['lint', '--strict', path.join(charts.dir, chart)]);
    expect(out).toContain('0 chart(s) failed');
  });

  it('the umbrella with the production values', () => {
    const out = charts.run([
      'lint',
      '--strict',
      path.join(charts.dir, 'seller-api'),
      '-f',
      path.join(charts.dir, 'seller-api/values-production.yaml'),
    ]);
    expect(out).toContain('0 chart(s) failed');
  });
});

describe('each service chart installs alone', () => {
  it.each(SERVICES)('%s: default values render valid objects', (service) => {
    const objects = charts.template(service);
    validateAll(objects);
    const kinds = objects.map((o) => o.kind).sort();
    expect(kinds).toEqual(
      [
        'ConfigMap',
        'Deployment',
        'HorizontalPodAutoscaler',
        'Job',
        'NetworkPolicy',
        'PodDisruptionBudget',
        'Service',
        'ServiceAccount',
      ].sort(),
    );
  });

  it.each(SERVICES)('%s: monitoring (and the gateway Ingresses) on render valid objects', (service) => {
    const objects = charts.template(service, {
      set: service === 'gateway' ? ALL_ON : ALL_ON.filter((s) => !s.startsWith('ingress')),
    });
    validateAll(objects);
    one(objects, 'ServiceMonitor');
    one(objects, 'PrometheusRule');
    expect(byKind(objects, 'Ingress')).toHaveLength(service === 'gateway' ? 1 : 0);
    expect(byKind(objects, 'Gateway')).toHaveLength(service === 'gateway' ? 1 : 0);
    expect(byKind(objects, 'HTTPRoute')).toHaveLength(service === 'gateway' ? 1 : 0);
    if (service === 'gateway') validateAll(charts.template(service, { set: NGINX_ON }));
  });

  it.each(SERVICES)('%s: probes, hardening, spread and configuration', (service) => {
    const objects = charts.template(service);
    const deployment = one(objects, 'Deployment') as unknown as {
      spec: { template: { spec: Record<string, unknown> & { containers: Array<Record<string, never>> } } };
    };
    const pod = deployment.spec.template.spec;
    const container = pod.containers[0] as Record<string, Record<string, unknown>>;
    expect(container.livenessProbe?.httpGet).toMatchObject({ path: '/healthz' });
    expect(container.readinessProbe?.httpGet).toMatchObject({ path: '/readyz' });
    expect(container.startupProbe?.httpGet).toMatchObject({ path: '/healthz' });
    expect(container.resources?.requests).toBeDefined();
    expect(container.resources?.limits).toBeDefined();
    expect(container.securityContext).toMatchObject({
      runAsNonRoot: true,
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
    });
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true });
    const spread = pod.topologySpreadConstraints as Array<{ topologyKey: string }>;
    expect(spread.map((c) => c.topologyKey)).toEqual([
      'topology.kubernetes.io/zone',
      'kubernetes.io/hostname',
    ]);
    expect(container.command).toEqual(['node', `services/${service}/dist/main.js`]);
    expect(container.envFrom).toEqual([
      { configMapRef: { name: service } },
      { secretRef: { name: `seller-api-${service}` } },
    ]);
    // The grace period outlasts the service's own drain.
    const config = one(objects, 'ConfigMap') as unknown as { data: Record<string, string> };
    expect(Number(pod.terminationGracePeriodSeconds) * 1000).toBeGreaterThan(
      Number(config.data.SHUTDOWN_TIMEOUT_MS),
    );
    expect(config.data.MIGRATE_ON_START).toBe('false');
    expect(config.data.NODE_ENV).toBe('production');
  });

  it.each(SERVICES)('%s: migrations run as a pre-install/pre-upgrade hook Job', (service) => {
    const job = one(charts.template(service), 'Job') as unknown as {
      metadata: { annotations: Record<string, string> };
      spec: { template: { spec: { containers: Array<{ command: string[] }> } } };
    };
    expect(job.metadata.annotations['helm.sh/hook']).toBe('pre-install,pre-upgrade');
    expect(job.spec.template.spec.containers[0]?.command).toEqual([
      'node',
      `services/${service}/dist/migrate.js`,
    ]);
    // The entry point exists in the service (compiled to dist/migrate.js by its build).
    expect(existsSync(path.join(ROOT, `services/${service}/src/migrate.ts`))).toBe(true);
  });

  it('without the hook Job the pods migrate at start', () => {
    const objects = charts.template('orders', { set: ['migrations.enabled=false'] });
    expect(byKind(objects, 'Job')).toHaveLength(0);
    const config = one(objects, 'ConfigMap') as unknown as { data: Record<string, string> };
    expect(config.data.MIGRATE_ON_START).toBe('true');
  });

  it('behind PgBouncer: DATABASE_PREPARED_STATEMENTS from the chart or global, never DATABASE_LOCK_URL in values', () => {
    const dataOf = (objects: K8sObject[], name?: string) =>
      (one(objects, 'ConfigMap', name) as unknown as { data: Record<string, string> }).data;
    // Unset: the services' own default.
    expect(dataOf(charts.template('orders'))).not.toHaveProperty('DATABASE_PREPARED_STATEMENTS');
    expect(
      dataOf(charts.template('orders', { set: ['databasePreparedStatements=false'] }))
        .DATABASE_PREPARED_STATEMENTS,
    ).toBe('false');
    const umbrella = charts.template('seller-api', {
      release: 'seller-api',
      set: ['global.databasePreparedStatements=false', 'payments.databasePreparedStatements=true'],
    });
    expect(dataOf(umbrella, 'seller-api-orders').DATABASE_PREPARED_STATEMENTS).toBe('false');
    expect(dataOf(umbrella, 'seller-api-payments').DATABASE_PREPARED_STATEMENTS).toBe('true');
    expect(() => charts.template('orders', { set: ['databasePreparedStatements=no'] })).toThrow(
      /databasePreparedStatements/,
    );
    // The lock address holds the role's password: the Secret's, like DATABASE_URL.
    expect(() =>
      charts.template('orders', { set: ['config.DATABASE_LOCK_URL=postgres://u:p@db/x'] }),
    ).toThrow(/DATABASE_LOCK_URL/);
  });

  it('a wrong value is refused by the chart schema', () => {
    expect(() => charts.template('orders', { set: ['replicaCount=two'] })).toThrow(/replicaCount/);
    expect(() => charts.template('gateway', { set: ['ingress.pspMtls.path=psp'] })).toThrow(/pspMtls/);
  });
});

describe('network policies: only the gateway reaches the services', () => {
  type Rule = {
    from?: Array<{ podSelector?: { matchLabels: Record<string, string> } }>;
    ports: Array<{ port: string | number }>;
  };
  const policy = (objects: K8sObject[]) =>
    one(objects, 'NetworkPolicy') as unknown as {
      spec: {
        ingress: Rule[];
        egress: Array<{
          ports?: Array<{ port: number }>;
          to?: Array<Record<string, { matchLabels?: Record<string, string> }>>;
        }>;
      };
    };
  // Each caller once (a caller has a second selector for pods without the group label).
  const callersOf = (objects: K8sObject[]) => [
    ...new Set(
      policy(objects)
        .spec.ingress.filter((r) => r.ports.some((p) => p.port === 'http'))
        .flatMap((r) => r.from ?? [])
        .map((peer) => peer.podSelector?.matchLabels['app.kubernetes.io/name'] ?? 'other'),
    ),
  ];

  it.each([
    ['orders', ['gateway']],
    ['payments', ['gateway', 'orders', 'withdrawals']],
    ['withdrawals', ['gateway', 'orders']],
    ['webhook-dispatcher', ['gateway']],
  ])('%s accepts its service port from %j only', (service, callers) => {
    expect(callersOf(charts.template(service as string)).sort()).toEqual(callers);
  });

  // docs/deploy.md, "Secrets" and "Internal keys": a service that calls others holds its INTERNAL_KEY, a
  // service called by others (those its NetworkPolicy lets in) holds their keys derived for it
  // (INTERNAL_CALLER_KEYS). Each Secret in the table holds exactly that.
  it("each service's Secret holds its own key if it calls, its callers' keys if it is called", () => {
    const called = ['orders', 'payments', 'withdrawals', 'webhook-dispatcher'];
    const callers = Object.fromEntries(
      called.map((service) => [service, callersOf(charts.template(service))]),
    );
    const deploy = readFileSync(path.join(ROOT, 'docs/deploy.md'), 'utf8');
    for (const service of SERVICES) {
      const row = deploy.split('\n').find((line) => line.startsWith(`| \`seller-api-${service}\` |`));
      expect(row).toBeDefined();
      const keys = (row as string).split('|')[2] ?? '';
      const held = [...keys.matchAll(/`(INTERNAL_[A-Z_]*)`/g)].map((m) => m[1]).sort();
      const calls = called.some((callee) => callers[callee]?.includes(service));
      const expected = [
        ...(calls ? ['INTERNAL_KEY'] : []),
        ...(called.includes(service) ? ['INTERNAL_CALLER_KEYS'] : []),
      ].sort();
      expect({ service, held }).toEqual({ service, held: expected });
    }
    expect(callers['webhook-dispatcher']).toEqual(['gateway']);
  });

  it('the gateway accepts the ingress controller only, and calls the four services', () => {
    const objects = charts.template('gateway');
    expect(callersOf(objects)).toEqual(['other']);
    const peers = policy(objects)
      .spec.egress.flatMap((r) => r.to ?? [])
      .map((peer) => peer.podSelector?.matchLabels?.['app.kubernetes.io/name'])
      .filter(Boolean);
    expect([...new Set(peers)].sort()).toEqual(['orders', 'payments', 'webhook-dispatcher', 'withdrawals']);
  });

  it('two installs in one namespace cannot call each other (release groups)', () => {
    type Selector = {
      matchLabels?: Record<string, string>;
      matchExpressions?: Array<{ key: string; operator: string }>;
    };
    type Peer = { podSelector?: Selector };
    const podLabels = (objects: K8sObject[], name?: string) =>
      (
        one(objects, 'Deployment', name) as unknown as {
          spec: { template: { metadata: { labels: Record<string, string> } } };
        }
      ).spec.template.metadata.labels;
    // Enough of a label selector for these policies: matchLabels and DoesNotExist.
    const selects = (peers: Peer[], labels: Record<string, string>) =>
      peers.some(
        ({ podSelector: sel }) =>
          sel !== undefined &&
          Object.entries(sel.matchLabels ?? {}).every(([k, v]) => labels[k] === v) &&
          (sel.matchExpressions ?? []).every((e) => e.operator === 'DoesNotExist' && !(e.key in labels)),
      );
    const from = (objects: K8sObject[], name?: string) =>
      (
        one(objects, 'NetworkPolicy', name) as unknown as { spec: { ingress: Array<{ from?: Peer[] }> } }
      ).spec.ingress.flatMap((r) => r.from ?? []);
    const to = (objects: K8sObject[]) =>
      (one(objects, 'NetworkPolicy') as unknown as { spec: { egress: Array<{ to?: Peer[] }> } }).spec.egress
        .flatMap((r) => r.to ?? [])
        .filter((peer) => peer.podSelector?.matchLabels?.['app.kubernetes.io/name'] === 'orders');

    const prodGateway = charts.template('gateway', { release: 'prod-gateway' });
    const stagingGateway = charts.template('gateway', { release: 'staging-gateway' });
    const prodOrders = charts.template('orders', { release: 'prod-orders' });
    expect(podLabels(prodGateway)['seller-api/group']).toBe('prod');
    // orders accepts the gateway of its own group only, and the gateway reaches its own group's orders.
    expect(selects(from(prodOrders), podLabels(prodGateway))).toBe(true);
    expect(selects(from(prodOrders), podLabels(stagingGateway))).toBe(false);
    expect(selects(to(prodGateway), podLabels(prodOrders))).toBe(true);
    expect(selects(to(stagingGateway), podLabels(prodOrders))).toBe(false);
    // Pods of a chart version without the label pass while allowUngroupedPeers is on (the upgrade).
    const { 'seller-api/group': _group, ...older } = podLabels(stagingGateway);
    expect(selects(from(prodOrders), older)).toBe(true);
    const strict = charts.template('orders', {
      release: 'prod-orders',
      set: ['networkPolicy.allowUngroupedPeers=false'],
    });
    expect(selects(from(strict), older)).toBe(false);
    expect(selects(from(strict), podLabels(prodGateway))).toBe(true);

    // Through the umbrella the release is the group: another umbrella release is another group.
    const a = charts.template('seller-api', { release: 'seller-api' });
    const b = charts.template('seller-api', { release: 'seller-api-b' });
    const callers = from(a, 'seller-api-orders');
    expect(selects(callers, podLabels(a, 'seller-api-gateway'))).toBe(true);
    expect(selects(callers, podLabels(b, 'seller-api-b-gateway'))).toBe(false);
  });

  it.each(SERVICES)('%s egresses only to what it needs', (service) => {
    const egress = policy(charts.template(service)).spec.egress;
    const ports = egress.flatMap((r) => (r.ports ?? []).map((p) => p.port));
    expect(ports).toEqual(expect.arrayContaining([53, 5432, 5672]));
    expect(ports.includes(6379)).toBe(service === 'gateway');
    const internet = egress.some((r) => (r.to ?? []).some((peer) => 'ipBlock' in peer));
    expect(internet).toBe(['payments', 'withdrawals', 'webhook-dispatcher'].includes(service));
  });
});

describe('the umbrella chart', () => {
  it.each([
    ['default values', []],
    ['production values', ['values-production.yaml']],
  ])('%s: every object is valid, five of each workload', (_label, values) => {
    const objects = charts.template('seller-api', { release: 'seller-api', values: values as string[] });
    validateAll(objects);
    for (const kind of [
      'Deployment',
      'Service',
      'Job',
      'NetworkPolicy',
      'PodDisruptionBudget',
      'HorizontalPodAutoscaler',
    ])
      expect(byKind(objects, kind)).toHaveLength(5);
  });

  it('production values: monitoring, the Ingress and the PSP Gateway, narrowed egress, the PSP certificate', () => {
    const objects = charts.template('seller-api', {
      release: 'seller-api',
      values: ['values-production.yaml'],
    });
    expect(byKind(objects, 'ServiceMonitor')).toHaveLength(5);
    expect(byKind(objects, 'PrometheusRule')).toHaveLength(5);
    const psp = one(objects, 'Gateway', 'seller-api-gateway-psp');
    expect(JSON.stringify(psp.spec)).toContain(
      '"caCertificateRefs":[{"kind":"ConfigMap","group":"","name":"psp-client-ca"}]',
    );
    expect(
      byKind(objects, 'Ingress')
        .map((o) => o.metadata.annotations ?? {})
        .flatMap(Object.keys)
        .filter((k) => k.includes('auth-tls')),
    ).toEqual([]);
    const text = JSON.stringify(byKind(objects, 'NetworkPolicy'));
    expect(text).toContain('10.20.0.0/24');
    // The PSP Gateway's data plane reaches the gateway's port, besides the public Ingress's controller.
    const gatewayPolicy = one(objects, 'NetworkPolicy', 'seller-api-gateway') as unknown as {
      spec: { ingress: Array<{ from?: unknown[] }> };
    };
    expect(JSON.stringify(gatewayPolicy.spec.ingress)).toContain('envoy-gateway-system');
    const payments = one(objects, 'Deployment', 'seller-api-payments');
    expect(JSON.stringify(payments)).toContain('/etc/seller-api/psp-tls');
  });

  it('with the PSP Ingress on, the gateway answers the PSP path on the PSP host only', () => {
    const gatewayConfig = (objects: K8sObject[]) =>
      (one(objects, 'ConfigMap', 'seller-api-gateway') as unknown as { data: Record<string, string> }).data;
    const production = gatewayConfig(
      charts.template('seller-api', { release: 'seller-api', values: ['values-production.yaml'] }),
    );
    expect(production.PSP_NOTIFICATION_HOST).toBe('psp.seller.example.com');
    // The panel is served on the main Ingress host, the origin its changes are checked against.
    const main = one(
      charts.template('seller-api', { release: 'seller-api', values: ['values-production.yaml'] }),
      'Ingress',
      'seller-api-gateway',
    ) as unknown as { spec: { rules: Array<{ host: string }> } };
    expect(production.PANEL_ORIGIN).toBe(`https://${main.spec.rules[0]?.host}`);
    // Without the PSP Ingress the variable is empty, which the gateway reads as unset (any host).
    expect(
      gatewayConfig(charts.template('seller-api', { release: 'seller-api' })).PSP_NOTIFICATION_HOST,
    ).toBe('');
    const alone = one(charts.template('gateway', { set: ALL_ON }), 'ConfigMap') as unknown as {
      data: Record<string, string>;
    };
    expect(alone.data.PSP_NOTIFICATION_HOST).toBe('psp.api.example.com');
  });

  it("gives each PSP its own Gateway, which accepts only certificates of that PSP's CA", () => {
    const objects = charts.template('gateway', {
      set: [
        ...ALL_ON,
        'ingress.pspMtls.homologation.enabled=true',
        'ingress.pspMtls.homologation.caConfigMap=psp-homolog-ca',
        'ingress.pspMtls.gatewayApi.certificateHeaders[0].name=ssl-client-subject-dn',
        'ingress.pspMtls.gatewayApi.certificateHeaders[0].value=%DOWNSTREAM_PEER_SUBJECT%',
      ],
    });
    validateAll(objects);
    interface Gateway {
      spec: {
        gatewayClassName: string;
        listeners: Array<{
          hostname: string;
          protocol: string;
          port: number;
          tls: { certificateRefs: Array<{ name: string }> };
        }>;
        tls: {
          frontend: { default: { validation: { mode: string; caCertificateRefs: Array<{ name: string }> } } };
        };
      };
    }
    interface Route {
      spec: {
        parentRefs: Array<{ name: string; sectionName: string }>;
        hostnames: string[];
        rules: Array<{
          matches: Array<{ path: { type: string; value: string } }>;
          filters: Array<{
            requestHeaderModifier: { set: Array<{ name: string; value: string }>; remove?: string[] };
          }>;
          backendRefs: Array<{ name: string; port: number }>;
        }>;
      };
    }
    const expected = {
      'gateway-psp': { host: 'psp.api.example.com', ca: 'psp-ca', tls: 'seller-api-psp-tls' },
      'gateway-psp-homolog': {
        host: 'psp-homolog.api.example.com',
        ca: 'psp-homolog-ca',
        tls: 'seller-api-psp-homolog-tls',
      },
    };
    for (const [name, want] of Object.entries(expected)) {
      const gateway = one(objects, 'Gateway', name) as unknown as Gateway;
      expect(gateway.spec.gatewayClassName).toBe('example');
      expect(gateway.spec.listeners).toEqual([
        expect.objectContaining({
          hostname: want.host,
          protocol: 'HTTPS',
          port: 443,
          tls: expect.objectContaining({
            mode: 'Terminate',
            certificateRefs: [expect.objectContaining({ name: want.tls })],
          }),
        }),
      ]);
      expect(gateway.spec.tls.frontend.default.validation).toEqual({
        mode: 'AllowValidOnly',
        caCertificateRefs: [{ kind: 'ConfigMap', group: '', name: want.ca }],
      });
      const route = one(objects, 'HTTPRoute', name) as unknown as Route;
      expect(route.spec.parentRefs).toEqual([expect.objectContaining({ name, sectionName: 'https' })]);
      expect(route.spec.hostnames).toEqual([want.host]);
      const [rule] = route.spec.rules;
      expect(rule?.matches).toEqual([{ path: { type: 'Exact', value: '/api/v1/psp/webhook/pix' } }]);
      expect(rule?.backendRefs).toEqual([{ name: 'gateway', port: 8080 }]);
      // The verdict is the route's own, the subject the implementation's; a client's copies never pass.
      expect(rule?.filters[0]?.requestHeaderModifier).toEqual({
        set: [
          { name: 'ssl-client-verify', value: 'SUCCESS' },
          { name: 'ssl-client-subject-dn', value: '%DOWNSTREAM_PEER_SUBJECT%' },
        ],
        remove: ['ssl-client-issuer-dn', 'ssl-client-cert'],
      });
    }
    expect(byKind(objects, 'Ingress')).toHaveLength(1);
    const config = (one(objects, 'ConfigMap') as unknown as { data: Record<string, string> }).data;
    expect(config.PSP_NOTIFICATION_HOST).toBe('psp.api.example.com,psp-homolog.api.example.com');
    expect(() =>
      charts.template('gateway', {
        set: [
          ...ALL_ON,
          'ingress.pspMtls.homologation.enabled=true',
          'ingress.pspMtls.homologation.caConfigMap=psp-ca',
        ],
      }),
    ).toThrow(/homologation.caConfigMap must not be the live PSP's caConfigMap/);
    expect(() =>
      charts.template('gateway', { set: ALL_ON.filter((s) => !s.includes('gatewayClassName')) }),
    ).toThrow(/gatewayClassName is required/);
    expect(() => charts.template('gateway', { set: [...ALL_ON, 'ingress.pspMtls.via=traefik'] })).toThrow(
      /via/,
    );
  });

  it('with ingress-nginx, gives each PSP its own Ingress and CA, and the gateway both PSP hosts', () => {
    const homologation = [
      ...NGINX_ON,
      'ingress.pspMtls.homologation.enabled=true',
      'ingress.pspMtls.homologation.caSecret=seller-api/psp-homolog-ca',
    ];
    const objects = charts.template('gateway', { set: homologation });
    const ingress = (name: string) =>
      one(objects, 'Ingress', name) as unknown as {
        metadata: { annotations: Record<string, string> };
        spec: { rules: Array<{ host: string; http: { paths: Array<{ path: string; pathType: string }> } }> };
      };
    const live = ingress('gateway-psp');
    const homolog = ingress('gateway-psp-homolog');
    expect(live.metadata.annotations['nginx.ingress.kubernetes.io/auth-tls-secret']).toBe(
      'seller-api/psp-ca',
    );
    expect(homolog.metadata.annotations['nginx.ingress.kubernetes.io/auth-tls-secret']).toBe(
      'seller-api/psp-homolog-ca',
    );
    for (const psp of [live, homolog]) {
      expect(psp.metadata.annotations['nginx.ingress.kubernetes.io/auth-tls-verify-client']).toBe('on');
      expect(psp.spec.rules[0]?.http.paths).toEqual([
        expect.objectContaining({ path: '/api/v1/psp/webhook/pix', pathType: 'Exact' }),
      ]);
    }
    expect(homolog.spec.rules[0]?.host).toBe('psp-homolog.api.example.com');
    const config = (one(objects, 'ConfigMap') as unknown as { data: Record<string, string> }).data;
    expect(config.PSP_NOTIFICATION_HOST).toBe('psp.api.example.com,psp-homolog.api.example.com');
    // One CA for both PSPs would let the homologation PSP's CA vouch for the live PSP's name.
    expect(() =>
      charts.template('gateway', {
        set: [
          ...NGINX_ON,
          'ingress.pspMtls.homologation.enabled=true',
          'ingress.pspMtls.homologation.caSecret=seller-api/psp-ca',
        ],
      }),
    ).toThrow(/homologation.caSecret must not be the live PSP's caSecret/);
    expect(() =>
      charts.template('gateway', { set: [...NGINX_ON, 'ingress.pspMtls.homologation.enabled=true'] }),
    ).toThrow(/homologation.caSecret/);
  });

  it('production values: every NetworkPolicy lets the service reach the OTLP collector', () => {
    const values = parse(readFileSync(path.join(ROOT, 'helm/seller-api/values-production.yaml'), 'utf8')) as {
      global: { otlpEndpoint?: string };
    };
    const endpoint = new URL(values.global.otlpEndpoint ?? '');
    // http://<service>.<namespace>[:port]: an in-cluster Service name.
    const namespace = endpoint.hostname.split('.')[1];
    const port = Number(endpoint.port || (endpoint.protocol === 'https:' ? 443 : 80));
    const objects = charts.template('seller-api', {
      release: 'seller-api',
      values: ['values-production.yaml'],
    });
    const configs = byKind(objects, 'ConfigMap').filter((c) => c.metadata.name.startsWith('seller-api-'));
    const policies = byKind(objects, 'NetworkPolicy') as unknown as Array<{
      metadata: { name: string };
      spec: {
        egress: Array<{
          ports?: Array<{ port: number | string; protocol?: string }>;
          to?: Array<{ namespaceSelector?: { matchLabels?: Record<string, string> }; ipBlock?: unknown }>;
        }>;
      };
    }>;
    expect(policies).toHaveLength(5);
    for (const policy of policies) {
      const allowed = policy.spec.egress.some(
        (rule) =>
          (rule.ports ?? []).some((p) => p.port === port && (p.protocol ?? 'TCP') === 'TCP') &&
          (rule.to === undefined ||
            rule.to.some(
              (peer) => peer.namespaceSelector?.matchLabels?.['kubernetes.io/metadata.name'] === namespace,
            )),
      );
      expect({ policy: policy.metadata.name, allowed }).toEqual({
        policy: policy.metadata.name,
        allowed: true,
      });
    }
    // And the services are told to send there.
    const withEndpoint = configs.filter(
      (c) =>
        (c as unknown as { data: Record<string, string> }).data.OTEL_EXPORTER_OTLP_ENDPOINT ===
        endpoint.href.replace(/\/$/, ''),
    );
    expect(withEndpoint).toHaveLength(5);
  });

  it('the gateway finds the services by their release names', () => {
    const objects = charts.template('seller-api', { release: 'seller-api' });
    const config = one(objects, 'ConfigMap', 'seller-api-gateway') as unknown as {
      data: Record<string, string>;
    };
    const services = byKind(objects, 'Service').map((s) => s.metadata.name);
    for (const key of ['ORDERS_URL', 'PAYMENTS_URL', 'WITHDRAWALS_URL', 'WEBHOOKS_URL']) {
      const host = new URL(config.data[key] as string).hostname;
      expect(services).toContain(host);
    }
    // Installed alone with releases named after the services, too.
    const alone = one(charts.template('gateway', { release: 'prod-gateway' }), 'ConfigMap') as unknown as {
      data: Record<string, string>;
    };
    expect(alone.data.ORDERS_URL).toBe('http://prod-orders:3001');
    // An umbrella release whose name contains a service's name names every service alike.
    const stack = charts.template('seller-api', { release: 'orders-stack' });
    expect(
      byKind(stack, 'Deployment')
        .map((d) => d.metadata.name)
        .sort(),
    ).toEqual(SERVICES.map((s) => `orders-stack-${s}`).sort());
    const stackConfig = one(stack, 'ConfigMap', 'orders-stack-gateway') as unknown as {
      data: Record<string, string>;
    };
    expect(stackConfig.data.ORDERS_URL).toBe('http://orders-stack-orders:3001');
    expect(stackConfig.data.PAYMENTS_URL).toBe('http://orders-stack-payments:3002');
    // Withdrawals reads payments' charges (the ledger's reconciliation), and may reach its port.
    const withdrawals = one(objects, 'ConfigMap', 'seller-api-withdrawals') as unknown as {
      data: Record<string, string>;
    };
    expect(services).toContain(new URL(withdrawals.data.PAYMENTS_URL as string).hostname);
    const egress = (
      one(objects, 'NetworkPolicy', 'seller-api-withdrawals') as unknown as {
        spec: { egress: Array<{ to?: Array<{ podSelector?: { matchLabels?: Record<string, string> } }> }> };
      }
    ).spec.egress.flatMap((r) => r.to ?? []);
    expect(
      egress.some((peer) => peer.podSelector?.matchLabels?.['app.kubernetes.io/name'] === 'payments'),
    ).toBe(true);
  });

  it('never holds a secret value: no Secret objects, no secret variable in a ConfigMap', () => {
    const objects = charts.template('seller-api', {
      release: 'seller-api',
      values: ['values-production.yaml'],
    });
    expect(byKind(objects, 'Secret')).toHaveLength(0);
    for (const cm of byKind(objects, 'ConfigMap')) {
      const keys = Object.keys((cm as unknown as { data: Record<string, string> }).data);
      expect(keys.filter((k) => /SECRET|PASSWORD|DATABASE_URL|AMQP_URL|REDIS_URL|CLIENT_ID/.test(k))).toEqual(
        [],
      );
    }
  });

  it('the chart schemas refuse secrets in values: secret names in config, or literal in extraEnv', () => {
    for (const set of [
      'config.DATABASE_URL=postgres://u:p@db/x',
      'config.AMQP_URL=amqp://u:p@mq',
      'config.PSP_CLIENT_SECRET=s',
      'config.PSP_CLIENT_ID=i',
      'config.INTERNAL_SECRET=s',
      'config.PAYMENTS_INTERNAL_SECRET=s',
      'config.INTERNAL_KEY=k',
      'config.INTERNAL_CALLER_KEYS=k',
      'config.SOME_TOKEN=t',
    ])
      expect(() => charts.template('payments', { set: [set] })).toThrow(/config: Property name of "[A-Z_]+"/);
    // Through the umbrella too: each service's section is checked by its chart's schema.
    expect(() =>
      charts.template('seller-api', { set: ['orders.config.DATABASE_URL=postgres://u:p@db/x'] }),
    ).toThrow(/DATABASE_URL/);
    expect(() =>
      charts.template('gateway', { set: ['extraEnv[0].name=REDIS_URL', 'extraEnv[0].value=redis://:p@r'] }),
    ).toThrow(/extraEnv/);
    // What stays allowed: public keys, certificate and key file paths, token endpoint URLs, and a
    // secret's name taken from a Secret.
    const allowed = charts.template('payments', {
      set: [
        'config.PIX_KEY=pix@example.com',
        'config.PSP_TLS_KEY_FILE=/etc/psp/tls.key',
        'config.PSP_TOKEN_URL=https://psp.example.com/oauth/token',
        'extraEnv[0].name=PSP_CLIENT_SECRET',
        'extraEnv[0].valueFrom.secretKeyRef.name=psp',
        'extraEnv[0].valueFrom.secretKeyRef.key=secret',
      ],
    });
    const config = one(allowed, 'ConfigMap') as unknown as { data: Record<string, string> };
    expect(config.data.PSP_TLS_KEY_FILE).toBe('/etc/psp/tls.key');
  });

  it.each([
    ['default values', [], 'seller-api'],
    ['production values', ['values-production.yaml'], 'seller-api-prod'],
  ])('%s: each service reads its own Secret, shared with no other', (_label, values, prefix) => {
    const objects = charts.template('seller-api', { release: 'seller-api', values: values as string[] });
    type Pod = {
      containers: Array<{
        envFrom?: Array<{ secretRef?: { name: string } }>;
        env?: Array<{ name: string; valueFrom?: { secretKeyRef?: { name: string } } }>;
      }>;
    };
    const secretsOf = new Map<string, Set<string>>();
    for (const o of [...byKind(objects, 'Deployment'), ...byKind(objects, 'Job')]) {
      const service = o.metadata.labels?.['app.kubernetes.io/name'] as string;
      const pod = (o.spec as unknown as { template: { spec: Pod } }).template.spec;
      const names = secretsOf.get(service) ?? new Set<string>();
      for (const c of pod.containers) {
        for (const from of c.envFrom ?? []) if (from.secretRef) names.add(from.secretRef.name);
        for (const e of c.env ?? []) if (e.valueFrom?.secretKeyRef) names.add(e.valueFrom.secretKeyRef.name);
      }
      secretsOf.set(service, names);
    }
    expect([...secretsOf.keys()].sort()).toEqual([...SERVICES].sort());
    // The Deployment and the migrations Job of a service read its Secret, and nothing else does.
    for (const service of SERVICES)
      expect([...(secretsOf.get(service) ?? [])]).toEqual([`${prefix}-${service}`]);
    // A shared name for every service is refused by the schema rather than silently used.
    expect(() => charts.template('seller-api', { set: ['global.existingSecret=seller-api'] })).toThrow(
      /existingSecret/,
    );
  });

  it("the webhook-dispatcher, which calls sellers' URLs, is given no PSP setting or secret", () => {
    for (const values of [[], ['values-production.yaml']]) {
      const objects = charts
        .template('seller-api', { release: 'seller-api', values })
        .filter((o) => o.metadata.labels?.['app.kubernetes.io/name'] === 'webhook-dispatcher');
      const config = one(objects, 'ConfigMap') as unknown as { data: Record<string, string> };
      expect(Object.keys(config.data).filter((k) => /PSP|PAYOUT/.test(k))).toEqual([]);
      const deployment = one(objects, 'Deployment') as unknown as {
        spec: {
          template: { spec: { containers: Array<{ env?: Array<{ name: string }> }>; volumes?: unknown[] } };
        };
      };
      const pod = deployment.spec.template.spec;
      expect(pod.containers.flatMap((c) => c.env ?? []).filter((e) => /PSP|PAYOUT/.test(e.name))).toEqual([]);
      expect(JSON.stringify(pod.volumes ?? [])).not.toMatch(/psp/i);
    }
  });

  it('ships each dashboard JSON, unchanged, in a ConfigMap labelled for Grafana', () => {
    const objects = charts.template('seller-api', { release: 'seller-api' });
    const dashboards = byKind(objects, 'ConfigMap').filter(
      (c) => c.metadata.labels?.grafana_dashboard === '1',
    );
    expect(dashboards.map((d) => d.metadata.name).sort()).toEqual([
      'seller-api-dashboard-api-overview',
      'seller-api-dashboard-internals',
      'seller-api-dashboard-orders-payments',
      'seller-api-dashboard-webhooks',
    ]);
    for (const cm of dashboards) {
      const [file, json] = Object.entries((cm as unknown as { data: Record<string, string> }).data)[0] as [
        string,
        string,
      ];
      const source = readFileSync(path.join(ROOT, 'helm/seller-api/dashboards', file), 'utf8');
      expect(JSON.parse(json)).toEqual(JSON.parse(source));
    }
  });
});

describe('alerts', () => {
  it('cover 5xx ratio, p99 latency, outbox lag, dead deliveries, a stopped consumer, readiness and the ledger reconciliation', () => {
    const names = new Set(alertRules(charts).map((r) => r.alert));
    expect([...names].sort()).toEqual([
      'SellerApiConsumerStopped',
      'SellerApiDeadWebhookDeliveries',
      'SellerApiHigh5xxRatio',
      'SellerApiHighP99Latency',
      'SellerApiInternalCallRefused',
      'SellerApiLedgerReconciliationMismatch',
      'SellerApiLedgerReconciliationStalled',
      'SellerApiOutboxLag',
      'SellerApiReadinessFailing',
      'SellerApiRefundHoldsUnresolved',
      'SellerApiRefundsUnresolved',
    ]);
  });

  it('watch the ledger reconciliation in withdrawals only: mismatches left open, and runs that stop finishing', () => {
    const rules = alertRules(charts).filter((r) => r.alert.startsWith('SellerApiLedgerReconciliation'));
    expect(rules.map((r) => [r.alert, r.service]).sort()).toEqual([
      ['SellerApiLedgerReconciliationMismatch', 'withdrawals'],
      ['SellerApiLedgerReconciliationStalled', 'withdrawals'],
    ]);
    const byName = Object.fromEntries(rules.map((r) => [r.alert, r.expr]));
    expect(byName.SellerApiLedgerReconciliationMismatch).toMatch(
      /ledger_reconciliation_mismatches\{[^}]*\}\)\) > 0\s*$/,
    );
    expect(byName.SellerApiLedgerReconciliationStalled).toMatch(
      /^time\(\) - \(\s*max by \(namespace\) \(ledger_reconciliation_last_success_timestamp_seconds\{[^}]*\} > 0\)\s*or min by \(namespace\) \(process_start_time_seconds\{[^}]*\}\)\s*\) > 1800\s*$/,
    );
  });

  it('watch signed calls refused by the access tables, in every service that is called', () => {
    const rules = alertRules(charts).filter((r) => r.alert === 'SellerApiInternalCallRefused');
    expect(rules.map((r) => r.service).sort()).toEqual([
      'orders',
      'payments',
      'webhook-dispatcher',
      'withdrawals',
    ]);
    for (const rule of rules)
      expect(rule.expr).toMatch(/increase\(internal_calls_refused_total\{[^}]*\}\[5m\]\)\) > 0/);
  });

  it('watch refund holds kept for an operator, in withdrawals only', () => {
    const rules = alertRules(charts).filter((r) => r.alert === 'SellerApiRefundHoldsUnresolved');
    expect(rules.map((r) => r.service)).toEqual(['withdrawals']);
    expect(rules[0]?.expr).toMatch(/^max by \(namespace\) \(refund_holds_unresolved\{[^}]*\}\) > 0\s*$/);
  });

  it('watch refunds the PSP has not ended, in payments only', () => {
    const rules = alertRules(charts).filter((r) => r.alert === 'SellerApiRefundsUnresolved');
    expect(rules.map((r) => r.service)).toEqual(['payments']);
    expect(rules[0]?.expr).toMatch(/^max by \(namespace\) \(payments_refunds_unresolved\{[^}]*\}\) > 0\s*$/);
  });

  it('select their own namespace and service, group by namespace, and leave out the probes', () => {
    const rules = alertRules(charts);
    // The Services the ServiceMonitors scrape: `up` carries job=<Service name>, not the service label.
    const services = byKind(
      charts.template('seller-api', { set: ['global.monitoring.serviceMonitor=true'] }),
      'Service',
    ).map((s) => s.metadata.name);
    for (const rule of rules) {
      const where = `${rule.service} ${rule.alert}`;
      const selectors = [...rule.expr.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)\{([^}]*)\}/g)];
      expect(selectors.length).toBeGreaterThan(0);
      for (const [, metric, labels = ''] of selectors) {
        expect({ where, metric, labels }).toEqual({
          where,
          metric,
          labels: expect.stringContaining('namespace="seller-api"'),
        });
        if (metric === 'up') {
          const job = /job="([^"]+)"/.exec(labels)?.[1];
          expect(services).toContain(job);
          expect(job).toBe(`seller-api-${rule.service}`);
        } else expect(labels).toContain(`service="${rule.service}"`);
        if (metric?.startsWith('http_')) expect(labels).toContain('route!~"/healthz|/readyz"');
      }
      expect(rule.labels?.service).toBe(rule.service);
      // Every aggregation keeps the namespace apart.
      for (const m of rule.expr.matchAll(/\b(sum|max|min|avg|count)\s*(?:by\s*\(([^)]*)\))?\s*\(/g))
        expect({ where, by: m[2] ?? '' }).toEqual({ where, by: expect.stringContaining('namespace') });
    }
  });

  it('a stopped consumer and failing readiness also fire when the series vanish', () => {
    const rules = alertRules(charts);
    const consumers = rules.filter((r) => r.alert === 'SellerApiConsumerStopped');
    // Only the services with queues have the alert (it would fire for ever where there is no consumer).
    expect(consumers.map((r) => r.service).sort()).toEqual(['orders', 'webhook-dispatcher', 'withdrawals']);
    for (const rule of consumers) expect(rule.expr).toMatch(/\bor absent_over_time\(amqp_consumer_active\{/);
    const readiness = rules.filter((r) => r.alert === 'SellerApiReadinessFailing');
    expect(readiness).toHaveLength(5);
    for (const rule of readiness) {
      expect(rule.expr).toMatch(/\bor max by \(namespace, pod\) \(up\{[^}]*\}\) == 0/);
      expect(rule.expr).toMatch(/\bor absent_over_time\(up\{/);
    }
    // Without the chart's ServiceMonitor there is no `up` of a known job to look at.
    const alone = one(
      charts.template('orders', { set: ['metrics.prometheusRule.enabled=true'] }),
      'PrometheusRule',
    );
    expect(JSON.stringify(alone)).not.toMatch(/\bup\{/);
  });

  it('each links its runbook, and the runbook exists', () => {
    for (const rule of alertRules(charts)) {
      expect(rule.annotations.runbook_url).toMatch(new RegExp(`/docs/runbooks/${rule.alert}\\.md$`));
      expect(existsSync(path.join(ROOT, 'docs/runbooks', `${rule.alert}.md`))).toBe(true);
    }
  });
});

it('values.schema.json files are generated from scripts/helm-schemas.mjs', () => {
  expect(() =>
    execFileSync(process.execPath, [path.join(ROOT, 'scripts/helm-schemas.mjs'), '--check'], {
      stdio: 'pipe',
    }),
  ).not.toThrow();
});
