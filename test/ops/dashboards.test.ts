// The dashboards' JSON as Grafana imports it (the sidecar, provisioning or the import screen): a
// datasource variable instead of a fixed data source, panels with unique ids and Prometheus targets,
// inside the 24-column grid. The metrics they query are checked against the services in metrics.test.ts.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { dashboardFiles, metricNames } from './helm';

interface Target {
  refId: string;
  expr: string;
  datasource: { type: string; uid: string };
}
interface Panel {
  id: number;
  type: string;
  title: string;
  gridPos: { h: number; w: number; x: number; y: number };
  datasource?: { type: string; uid: string };
  targets?: Target[];
}
interface Dashboard {
  uid: string;
  title: string;
  schemaVersion: number;
  id?: unknown;
  panels: Panel[];
  templating: {
    list: Array<{ name: string; type: string; query: unknown; includeAll?: boolean; allValue?: string }>;
  };
}

const dashboards = dashboardFiles().map(
  (file) => [path.basename(file), JSON.parse(readFileSync(file, 'utf8')) as Dashboard] as const,
);

it('there are the four dashboards of the issue, with unique uids', () => {
  expect(dashboards.map(([f]) => f).sort()).toEqual([
    'api-overview.json',
    'internals.json',
    'orders-payments.json',
    'webhooks.json',
  ]);
  const uids = dashboards.map(([, d]) => d.uid);
  expect(new Set(uids).size).toBe(uids.length);
});

describe.each(dashboards)('%s', (_file, dashboard) => {
  it('is importable: title, uid, schema version, no fixed id', () => {
    expect(dashboard.title).toMatch(/^Seller API \/ /);
    expect(dashboard.uid).toMatch(/^[a-zA-Z0-9_-]{1,40}$/);
    expect(dashboard.schemaVersion).toBeGreaterThanOrEqual(36);
    // An "id" would make Grafana overwrite whatever dashboard has that database id.
    expect(dashboard.id ?? null).toBeNull();
  });

  it('takes its Prometheus data source from a variable', () => {
    const variable = dashboard.templating.list.find((v) => v.name === 'datasource');
    expect(variable).toMatchObject({ type: 'datasource', query: 'prometheus' });
  });

  it('has panels with unique ids, inside the grid, each graph with Prometheus targets', () => {
    const ids = dashboard.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    const graphs = dashboard.panels.filter((p) => p.type !== 'row');
    expect(graphs.length).toBeGreaterThanOrEqual(4);
    for (const panel of dashboard.panels) {
      const { x, w, h } = panel.gridPos;
      expect(x + w).toBeLessThanOrEqual(24);
      expect(h).toBeGreaterThan(0);
    }
    for (const panel of graphs) {
      expect(panel.title).toBeTruthy();
      expect(panel.datasource).toEqual({ type: 'prometheus', uid: '${datasource}' });
      expect(panel.targets?.length).toBeGreaterThan(0);
      const refIds = (panel.targets ?? []).map((t) => t.refId);
      expect(new Set(refIds).size).toBe(refIds.length);
      for (const target of panel.targets ?? []) {
        expect(target.datasource.uid).toBe('${datasource}');
        expect(metricNames(target.expr).length).toBeGreaterThan(0);
      }
    }
  });

  it('shows one namespace (one install) at a time, every query selecting it', () => {
    const variable = dashboard.templating.list.find((v) => v.name === 'namespace');
    // "All" is any value or none: the local stack's Prometheus (docker-compose) has no namespace label.
    expect(variable).toMatchObject({ type: 'query', includeAll: true, allValue: '.*' });
    for (const panel of dashboard.panels)
      for (const target of panel.targets ?? [])
        for (const name of metricNames(target.expr))
          for (const m of target.expr.matchAll(new RegExp(`\\b${name}(?![a-zA-Z0-9_:])(\\{[^}]*\\})?`, 'g')))
            expect({ panel: panel.title, selector: m[0] }).toEqual({
              panel: panel.title,
              selector: expect.stringContaining('namespace=~"$namespace"'),
            });
  });

  it('panels do not overlap', () => {
    const cells = new Set<string>();
    for (const { gridPos: g, title } of dashboard.panels)
      for (let x = g.x; x < g.x + g.w; x += 1)
        for (let y = g.y; y < g.y + g.h; y += 1) {
          const cell = `${x},${y}`;
          if (cells.has(cell)) throw new Error(`"${title}" overlaps another panel at ${cell}`);
          cells.add(cell);
        }
    expect(cells.size).toBeGreaterThan(0);
  });
});

it('the API overview leaves the health probes out of the request rates and durations', () => {
  const overview = dashboards.find(([f]) => f === 'api-overview.json')?.[1];
  const selectors = (overview?.panels ?? [])
    .flatMap((p) => p.targets ?? [])
    .flatMap((t) => [...t.expr.matchAll(/\bhttp_request[a-z_]*\{[^}]*\}/g)].map((m) => m[0]));
  expect(selectors.length).toBeGreaterThan(5);
  for (const selector of selectors) expect(selector).toContain('route!~"/healthz|/readyz"');
});

describe('metricNames (PromQL)', () => {
  it('finds metric names, not functions, labels, keywords, numbers or variables', () => {
    expect(
      metricNames(
        'histogram_quantile(0.99, sum by (le, service) (rate(http_request_duration_seconds_bucket{service=~"$service"}[$__rate_interval]))) > 1e3',
      ),
    ).toEqual(['http_request_duration_seconds_bucket']);
    expect(
      metricNames('sum(rate(a_total{x="y"}[5m])) / on (service) group_left sum(b_total) or vector(0)'),
    ).toEqual(['a_total', 'b_total']);
  });
});
