import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { ROOT, SERVICES } from './helm';

/*
 * No Docker engine runs here, so the images are never built in CI: these checks keep the one root
 * Dockerfile's stages in the order that prunes, installs, builds and ships one service, in step with
 * docker-compose.yml, which builds it once per service with the SERVICE build argument, and with the
 * ports the Helm charts use. The prune itself: images.test.ts; the lint: dockerfile-lint.test.ts.
 */

const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
const dockerfile = read('Dockerfile');

interface Stage {
  from: string;
  name?: string;
  body: string;
}

/** The Dockerfile's stages, in order: each FROM line and the instructions under it. */
function stages(): Stage[] {
  return dockerfile
    .split(/^(?=FROM )/m)
    .filter((chunk) => chunk.startsWith('FROM '))
    .map((chunk) => {
      const [, from, name] = /^FROM (\S+)(?: AS (\S+))?\s*$/m.exec(chunk) ?? [];
      if (from === undefined) throw new Error(`unreadable FROM line: ${chunk.split('\n')[0]}`);
      return { from, name, body: chunk };
    });
}

function workspaces(): string[] {
  return ['packages', 'services'].flatMap((folder) =>
    readdirSync(path.join(ROOT, folder))
      .filter((name) => existsSync(path.join(ROOT, folder, name, 'package.json')))
      .map((name) => `${folder}/${name}`),
  );
}

interface ComposeService {
  image?: string;
  build?: { context?: string; dockerfile?: string; args?: Record<string, string> };
  environment?: Record<string, string>;
}
const compose = parse(read('docker-compose.yml')) as { services: Record<string, ComposeService> };

describe('Dockerfile', () => {
  it('is the only one: no service keeps a Dockerfile of its own', () => {
    const services = readdirSync(path.join(ROOT, 'services'));
    expect(services.filter((name) => existsSync(path.join(ROOT, 'services', name, 'Dockerfile')))).toEqual(
      [],
    );
  });

  it('installs from the pruned manifests and lockfile only, with the turbo of package.json', () => {
    const body = (name: string) => stages().find((stage) => stage.name === name)?.body ?? '';
    expect(body('prune')).toMatch(
      /^RUN scopes="\$\(node deploy\/images\/prune-scopes\.mjs "\$\{SERVICE\}"\)" \\\n\s+&& turbo prune \$\{scopes\} --docker --out-dir \/pruned$/m,
    );
    const turbo = /npm install --global --ignore-scripts turbo@(\S+)/.exec(body('prune'))?.[1];
    const rootPackage = JSON.parse(read('package.json')) as { devDependencies: Record<string, string> };
    expect(turbo).toBe(rootPackage.devDependencies.turbo);
    for (const stage of ['deps', 'production']) {
      const copies = body(stage)
        .split('\n')
        .filter((line) => line.startsWith('COPY'));
      expect({ stage, copies }).toEqual({
        stage,
        copies: ['COPY --from=prune /pruned/json/ ./', 'COPY --from=prune /pruned/package-lock.json ./'],
      });
    }
    expect(body('deps')).toMatch(/npm ci --ignore-scripts$/m);
    expect(body('production')).toMatch(/npm ci --omit=dev --ignore-scripts$/m);
    // The sources come after the install, so editing code does not invalidate it.
    expect(body('build')).toMatch(/^COPY --from=prune \/pruned\/full\/ \.\/$/m);
    expect(workspaces().length).toBeGreaterThan(0);
  });

  it('has the build stages, then one stage per service, then the one SERVICE names', () => {
    const all = stages();
    expect(all.map((stage) => stage.name)).toEqual([
      'node',
      'base',
      'prune',
      'deps',
      'build',
      'production',
      'runtime',
      ...SERVICES.map((service) => `service-${service}`),
      undefined,
    ]);
    expect(all.map((stage) => stage.from)).toEqual([
      'node:24.22.3-bookworm-slim',
      'node',
      'base',
      'base',
      'deps',
      'base',
      'node',
      ...SERVICES.map(() => 'runtime'),
      'service-${SERVICE}',
    ]);
    // A required argument: no default, so a build without it fails instead of picking a service.
    expect(dockerfile).toMatch(/^ARG SERVICE$/m);
    // Every service under services/ has its stage.
    const onDisk = workspaces().filter((w) => w.startsWith('services/'));
    expect(onDisk.map((w) => w.slice('services/'.length)).sort()).toEqual([...SERVICES].sort());
  });

  it('runs as node, in production, with a health check, no package manager and no sources', () => {
    const runtime = stages().find((stage) => stage.name === 'runtime')?.body ?? '';
    expect(runtime).toMatch(/^USER node$/m);
    expect(runtime).toMatch(/^ENV NODE_ENV=production$/m);
    expect(runtime).toMatch(/^HEALTHCHECK .*\\\n\s+CMD \["node", "-e", ".*\/healthz/m);
    // npm, npx and corepack live in /usr/local/lib/node_modules; the build fails if any is left.
    expect(runtime).toMatch(
      /^RUN rm -rf \/usr\/local\/lib\/node_modules \/usr\/local\/bin\/npm \/usr\/local\/bin\/npx \\$/m,
    );
    expect(runtime).toMatch(
      /command -v npm \|\| command -v npx \|\| command -v corepack \|\| command -v yarn; then exit 1/,
    );
    expect(runtime).not.toMatch(/\bnpm (ci|install|run)\b/);
    const copies = runtime.split('\n').filter((line) => line.startsWith('COPY'));
    expect(copies).toEqual(['COPY --from=production /app/ ./', 'COPY --from=build /out/ ./']);
    // Only compiled output leaves the build stage.
    expect(stages().find((stage) => stage.name === 'build')?.body).toMatch(
      /cp -R "\$ws\/dist\/\." "\/out\/\$ws\/dist\/"/,
    );
  });

  it.each(SERVICES)('stage service-%s exposes its ports and starts its compiled main', (service) => {
    const stage = stages().find((s) => s.name === `service-${service}`);
    expect(stage).toBeDefined();
    const body = stage?.body ?? '';
    const port = /PORT=(\d+)/.exec(body.replace(/METRICS_PORT=\d+/, ''))?.[1];
    const metricsPort = /METRICS_PORT=(\d+)/.exec(body)?.[1];
    expect(body).toMatch(new RegExp(`^EXPOSE ${port} ${metricsPort}$`, 'm'));
    expect(body).toMatch(new RegExp(`^CMD \\["node", "services/${service}/dist/main\\.js"\\]$`, 'm'));
    expect(existsSync(path.join(ROOT, 'services', service, 'src/main.ts'))).toBe(true);

    // The same ports as docker-compose.yml and the service's Helm chart.
    expect({ port, metricsPort }).toEqual({
      port: compose.services[service]?.environment?.PORT,
      metricsPort: compose.services[service]?.environment?.METRICS_PORT,
    });
    const values = parse(read(`helm/${service}/values.yaml`)) as { ports: { http: number; metrics: number } };
    expect({ port, metricsPort }).toEqual({
      port: String(values.ports.http),
      metricsPort: String(values.ports.metrics),
    });
  });

  it.each(SERVICES)('docker-compose.yml builds %s from it with SERVICE set to its name', (service) => {
    const entry = compose.services[service];
    expect(entry?.image).toBe(`seller-api/${service}:dev`);
    expect(entry?.build).toEqual({ context: '.', dockerfile: 'Dockerfile', args: { SERVICE: service } });
  });

  it('takes no secret as a build argument', () => {
    // Build arguments end up in the image history: secrets belong in the runtime environment.
    const secretLike = /SECRET|PASSWORD|TOKEN|KEY|CREDENTIAL/i;
    const args = [...dockerfile.matchAll(/^ARG (\w+)/gm)].map((m) => m[1] ?? '');
    expect(args).toEqual(['SERVICE', 'SERVICE', 'SERVICE']);
    const env = [...dockerfile.matchAll(/^ENV ([\s\S]*?)(?<!\\)$/gm)].flatMap((m) =>
      [...(m[1] ?? '').matchAll(/(\w+)=/g)].map((v) => v[1] ?? ''),
    );
    expect(env.filter((name) => secretLike.test(name))).toEqual([]);
    const buildArgs = Object.values(compose.services).flatMap((s) => Object.keys(s.build?.args ?? {}));
    expect(buildArgs.filter((name) => secretLike.test(name))).toEqual([]);
  });

  it('is what the docs build, not the per-service files it replaced', () => {
    for (const doc of ['README.md', 'docs/deploy.md', 'deploy/README.md', 'docker-compose.yml']) {
      expect({ doc, stale: read(doc).match(/services\/[a-z<>-]+\/Dockerfile/g) }).toEqual({
        doc,
        stale: null,
      });
    }
    expect(read('deploy/README.md')).toContain('docker build --build-arg SERVICE=$s -t seller-api/$s .');
  });
});
