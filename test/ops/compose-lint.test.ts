import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import Ajv from 'ajv';
import { parse } from 'yaml';
import { ROOT, SERVICES } from './helm';

/*
 * No container engine runs here, so `docker compose config` cannot. Its checks are done here instead:
 * the file against the Compose Specification's JSON schema (the copy dclint ships: dclint's own
 * check, then ajv on the same schema), dclint's rules, and the references compose resolves before it
 * starts anything: dependencies, profiles, networks, volumes, mounted files, build contexts.
 * test/ops/dclint.json turns off: the ordering rules (the file groups services by role, not
 * alphabetically), require-quotes-in-ports (style), no-build-and-image and
 * service-image-require-explicit-tag (`image` names what `build` makes, `seller-api/<name>:dev`),
 * no-unbound-port-interfaces (the gateway's 8080 is public on purpose; every other port is bound to
 * 127.0.0.1, which the last test here checks).
 */

const run = promisify(execFile);
const FILE = path.join(ROOT, 'docker-compose.yml');
const dclint = path.join(ROOT, 'node_modules/.bin/dclint');

interface Dependency {
  condition?: string;
  required?: boolean;
}
interface Service {
  image?: string;
  build?: { context?: string; dockerfile?: string };
  profiles?: string[];
  depends_on?: string[] | Record<string, Dependency>;
  networks?: string[] | Record<string, unknown>;
  volumes?: string[];
  env_file?: string | string[];
  secrets?: Array<string | { source: string }>;
  configs?: Array<string | { source: string }>;
  healthcheck?: { test?: unknown; disable?: boolean };
  restart?: string;
  environment?: Record<string, string>;
  command?: string[];
  ports?: string[];
}
interface Compose {
  services: Record<string, Service>;
  networks?: Record<string, unknown>;
  volumes?: Record<string, unknown>;
  secrets?: Record<string, { file?: string }>;
  configs?: Record<string, { file?: string }>;
}

// `merge: true` resolves the `<<` merge keys, as compose does.
const compose = parse(readFileSync(FILE, 'utf8'), { merge: true }) as Compose;
const services = Object.entries(compose.services);

const dependencies = (service: Service): Array<[string, Dependency]> =>
  Array.isArray(service.depends_on)
    ? service.depends_on.map((name) => [name, { condition: 'service_started' }])
    : Object.entries(service.depends_on ?? {});

async function lint(file: string): Promise<{ code: number; messages: string[] }> {
  try {
    const { stdout } = await run(dclint, ['-c', path.join(ROOT, 'test/ops/dclint.json'), '-f', 'json', file]);
    return { code: 0, messages: messagesOf(stdout) };
  } catch (err) {
    const { code, stdout } = err as { code: number; stdout: string };
    return { code, messages: messagesOf(stdout) };
  }
}
function messagesOf(stdout: string): string[] {
  const report = JSON.parse(stdout || '[]') as Array<{ messages: Array<{ rule: string; message: string }> }>;
  return report.flatMap((r) => r.messages.map((m) => `${m.rule}: ${m.message}`));
}

describe('docker-compose.yml, as `docker compose config` would read it', () => {
  it('passes dclint: the compose schema and its rules', async () => {
    expect(await lint(FILE)).toEqual({ code: 0, messages: [] });
  }, 30_000);

  it('dclint refuses what compose refuses (a key the schema does not know)', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'sa-compose-'));
    try {
      const bad = path.join(dir, 'docker-compose.yml');
      writeFileSync(
        bad,
        readFileSync(FILE, 'utf8').replace('    hostname: rabbitmq', '    host_name: rabbitmq'),
      );
      const result = await lint(bad);
      expect(result.code).not.toBe(0);
      expect(result.messages.join('\n')).toMatch(/invalid-schema/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 30_000);

  it('is valid against the Compose Specification schema (merge keys resolved)', () => {
    const schema = JSON.parse(
      readFileSync(path.join(ROOT, 'node_modules/dclint/schemas/compose.schema.json'), 'utf8'),
    ) as { $schema?: string; properties: Record<string, unknown> };
    // Draft-07, which ajv's default meta-schema is; the schema names it by a URL ajv does not register.
    delete schema.$schema;
    const ajv = new Ajv({ allErrors: true, strict: false });
    const validate = ajv.compile(schema);
    validate(compose);
    expect(validate.errors ?? []).toEqual([]);
    // The schema is the one that knows `depends_on.required` (Compose 2.20 and later).
    expect(JSON.stringify(schema)).toContain('"required":{"type":"boolean","default":true');
  });

  it('depends only on services that exist, healthy only on those with a health check', () => {
    const problems: string[] = [];
    for (const [name, service] of services)
      for (const [target, dep] of dependencies(service)) {
        const other = compose.services[target];
        if (!other) {
          problems.push(`${name} -> ${target}: no such service`);
          continue;
        }
        if (dep.condition === 'service_healthy' && !other.healthcheck?.test)
          problems.push(`${name} -> ${target}: service_healthy without a healthcheck`);
        if (dep.condition === 'service_completed_successfully' && other.restart !== 'no')
          problems.push(`${name} -> ${target}: a one-shot service must not restart`);
        // A profile that is off leaves its services undefined: only an optional dependency may name them.
        const offProfiles = (other.profiles ?? []).filter((p) => !(service.profiles ?? []).includes(p));
        if (offProfiles.length && dep.required !== false)
          problems.push(
            `${name} -> ${target}: required, but ${target} is only in profiles ${offProfiles.join(',')}`,
          );
      }
    expect(problems).toEqual([]);
  });

  it('uses only networks, volumes, secrets and configs it defines, and files that exist', () => {
    const problems: string[] = [];
    const exists = (file: string) => existsSync(path.resolve(ROOT, file));
    for (const [name, service] of services) {
      const networks = Array.isArray(service.networks)
        ? service.networks
        : Object.keys(service.networks ?? {});
      for (const network of networks)
        if (!compose.networks?.[network]) problems.push(`${name}: network ${network} undefined`);
      for (const volume of service.volumes ?? []) {
        const source = volume.split(':')[0] as string;
        if (source.startsWith('.') || source.startsWith('/')) {
          if (!exists(source)) problems.push(`${name}: ${source} does not exist`);
        } else if (!compose.volumes?.[source]) problems.push(`${name}: volume ${source} undefined`);
      }
      for (const file of [service.env_file ?? []].flat())
        if (!exists(file)) problems.push(`${name}: env_file ${file} does not exist`);
      for (const ref of service.secrets ?? []) {
        const source = typeof ref === 'string' ? ref : ref.source;
        if (!compose.secrets?.[source]) problems.push(`${name}: secret ${source} undefined`);
      }
      for (const ref of service.configs ?? []) {
        const source = typeof ref === 'string' ? ref : ref.source;
        if (!compose.configs?.[source]) problems.push(`${name}: config ${source} undefined`);
      }
      if (service.build) {
        const context = service.build.context ?? '.';
        if (!exists(path.join(context, service.build.dockerfile ?? 'Dockerfile')))
          problems.push(`${name}: no Dockerfile in ${context}`);
      }
      if (!service.image && !service.build) problems.push(`${name}: neither image nor build`);
    }
    for (const [name, def] of Object.entries({ ...compose.secrets, ...compose.configs }))
      if (def.file && !exists(def.file)) problems.push(`${name}: ${def.file} does not exist`);
    expect(problems).toEqual([]);
  });

  it('pins every image it pulls to a version, on the lines the docs name', () => {
    const pulled = services.filter(([, s]) => !s.build).map(([name, s]) => [name, s.image ?? ''] as const);
    for (const [name, image] of pulled)
      expect({ name, image }).toEqual({
        name,
        image: expect.stringMatching(/^[\w./-]+:v?\d+(\.\d+)*[\w.-]*$/),
      });
    const image = (name: string) => compose.services[name]?.image ?? '';
    expect(image('rabbitmq')).toMatch(/^rabbitmq:4\.\d+(\.\d+)?-management$/);
    expect(image('prometheus')).toMatch(/^prom\/prometheus:v3\.\d+\.\d+$/);
    expect(image('grafana')).toMatch(/^grafana\/grafana:1[3-9]\.\d+\.\d+$/);
    expect(image('otel-collector')).toMatch(/^otel\/opentelemetry-collector-contrib:\d+\.\d+\.\d+$/);
  });

  it('runs the OpenTelemetry collector only with the tracing profile, and tracing stays off without it', () => {
    const collector = compose.services['otel-collector'];
    expect(collector?.profiles).toEqual(['tracing']);
    // Nothing else is behind a profile: `docker compose up` starts the whole stack but the collector.
    expect(services.filter(([name, s]) => name !== 'otel-collector' && s.profiles).map(([n]) => n)).toEqual(
      [],
    );
    const config = parse(readFileSync(path.join(ROOT, 'deploy/otel-collector/config.yaml'), 'utf8')) as {
      receivers: { otlp: { protocols: { http: { endpoint: string } } } };
      processors: Record<string, unknown>;
      exporters: Record<string, unknown>;
      service: {
        pipelines: Record<string, { receivers: string[]; processors: string[]; exporters: string[] }>;
      };
    };
    expect(collector?.volumes).toContain(
      './deploy/otel-collector/config.yaml:/etc/otelcol-contrib/config.yaml:ro',
    );
    expect(collector?.command).toEqual(['--config=/etc/otelcol-contrib/config.yaml']);
    // service-kit exports OTLP over HTTP: the endpoint the comments give is the receiver's port.
    expect(config.receivers.otlp.protocols.http.endpoint).toBe('0.0.0.0:4318');
    const traces = config.service.pipelines.traces;
    expect(traces?.receivers).toEqual(['otlp']);
    for (const p of traces?.processors ?? []) expect(Object.keys(config.processors)).toContain(p);
    for (const e of traces?.exporters ?? []) expect(Object.keys(config.exporters)).toContain(e);
    expect(readFileSync(FILE, 'utf8')).toContain('OTEL_EXPORTER_OTLP_ENDPOINT=http://otel-collector:4318');
    for (const service of SERVICES) {
      const env = compose.services[service]?.environment ?? {};
      // Empty unless .env sets it: without the profile, no service exports to a collector that is not there.
      expect(env.OTEL_EXPORTER_OTLP_ENDPOINT).toBe('${OTEL_EXPORTER_OTLP_ENDPOINT:-}');
      expect(dependencies(compose.services[service] as Service)).toContainEqual([
        'otel-collector',
        { condition: 'service_started', required: false },
      ]);
    }
  });

  it('publishes the public API on every interface and every other port on the loopback only', () => {
    const published = services.flatMap(([name, s]) => (s.ports ?? []).map((port) => `${name} ${port}`));
    expect(published).toContain('gateway 8080:8080');
    expect(published.filter((p) => p !== 'gateway 8080:8080' && !/^\S+ 127\.0\.0\.1:/.test(p))).toEqual([]);
  });
});
