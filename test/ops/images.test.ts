import { execFile, execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import ignore from '@balena/dockerignore';
import { ROOT, SERVICES } from './helm';

/*
 * The Dockerfile prunes the monorepo to one service with `turbo prune` before installing anything. No
 * container engine runs here, so this runs the same prune the prune stage runs, on the build context
 * as .dockerignore leaves it (no .git, no node_modules), for every service, and checks that what the
 * service needs survived it: its workspaces, what they import, and a lockfile covering them.
 * `npm run images:check` goes further (npm ci and the build of a pruned service) and takes minutes.
 */

const run = promisify(execFile);
const turbo = path.join(ROOT, 'node_modules/.bin/turbo');

interface Manifest {
  name: string;
  main?: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}
interface Lockfile {
  lockfileVersion: number;
  packages: Record<string, { name?: string; link?: boolean; resolved?: string; dev?: boolean }>;
}

const readJson = <T>(file: string): T => JSON.parse(readFileSync(file, 'utf8')) as T;

/** Every workspace of the repository, by package name: its folder and manifest. */
function workspaces(root: string): Map<string, { dir: string; manifest: Manifest }> {
  const all = new Map<string, { dir: string; manifest: Manifest }>();
  for (const folder of ['packages', 'services'])
    for (const name of readdirSync(path.join(root, folder))) {
      const file = path.join(root, folder, name, 'package.json');
      if (!existsSync(file)) continue;
      const manifest = readJson<Manifest>(file);
      all.set(manifest.name, { dir: `${folder}/${name}`, manifest });
    }
  return all;
}

/** The workspaces a build of `scopes` needs: them and, transitively, every workspace they depend on. */
function closure(scopes: string[], all: ReturnType<typeof workspaces>): Set<string> {
  const seen = new Set<string>();
  const visit = (name: string) => {
    if (seen.has(name) || !all.has(name)) return;
    seen.add(name);
    const { manifest } = all.get(name)!;
    for (const dep of Object.keys({ ...manifest.dependencies, ...manifest.devDependencies })) visit(dep);
  };
  scopes.forEach(visit);
  return seen;
}

let context: string;
const pruned = new Map<string, string>();

beforeAll(async () => {
  // The build context: what git would commit (tracked, or untracked and not ignored) less .dockerignore.
  const files = execFileSync('git', ['ls-files', '-co', '--exclude-standard', '-z'], {
    cwd: ROOT,
    encoding: 'utf8',
  })
    .split('\0')
    .filter((file) => file && existsSync(path.join(ROOT, file)));
  const filter = ignore().add(readFileSync(path.join(ROOT, '.dockerignore'), 'utf8'));
  context = mkdtempSync(path.join(os.tmpdir(), 'sa-image-context-'));
  for (const file of filter.filter(files)) {
    mkdirSync(path.dirname(path.join(context, file)), { recursive: true });
    cpSync(path.join(ROOT, file), path.join(context, file));
  }
  // The prune stage's two commands, for each service at once.
  await Promise.all(
    SERVICES.map(async (service) => {
      const { stdout } = await run(process.execPath, ['deploy/images/prune-scopes.mjs', service], {
        cwd: context,
      });
      const out = path.join(context, '.pruned', service);
      await run(turbo, ['prune', ...stdout.trim().split(' '), '--docker', '--out-dir', out], {
        cwd: context,
        env: { ...process.env, TURBO_TELEMETRY_DISABLED: '1', DO_NOT_TRACK: '1' },
      });
      pruned.set(service, out);
    }),
  );
}, 120_000);

afterAll(() => {
  if (context) rmSync(context, { recursive: true, force: true });
});

describe('the build context', () => {
  it('keeps what the Dockerfile copies from it and drops what no image needs', () => {
    for (const kept of ['package.json', 'package-lock.json', 'turbo.json', 'tsconfig.base.json'])
      expect({ kept, present: existsSync(path.join(context, kept)) }).toEqual({ kept, present: true });
    expect(existsSync(path.join(context, 'deploy/images/prune-scopes.mjs'))).toBe(true);
    for (const dropped of ['.git', 'node_modules', 'test', 'helm', 'docs', '.env', 'deploy/prometheus'])
      expect({ dropped, present: existsSync(path.join(context, dropped)) }).toEqual({
        dropped,
        present: false,
      });
  });

  it('prune-scopes refuses a missing or unknown service (the SERVICE build argument is required)', async () => {
    for (const args of [[], [''], ['nope']])
      await expect(
        run(process.execPath, ['deploy/images/prune-scopes.mjs', ...args], { cwd: context }),
      ).rejects.toMatchObject({ code: 2 });
  });
});

describe.each(SERVICES)('turbo prune for %s', (service) => {
  const all = () => workspaces(context);
  const expected = () => {
    const scopes = execFileSync(process.execPath, ['deploy/images/prune-scopes.mjs', service], {
      cwd: context,
      encoding: 'utf8',
    })
      .trim()
      .split(' ');
    return closure(scopes, all());
  };

  it('keeps exactly the service and the workspaces it depends on, manifests and sources', () => {
    const out = pruned.get(service)!;
    const names = [...expected()].sort();
    const root = readJson<{ workspaces: string[] }>(path.join(out, 'json/package.json'));
    expect(
      root.workspaces
        .map((dir) => readJson<Manifest>(path.join(out, 'json', dir, 'package.json')).name)
        .sort(),
    ).toEqual(names);
    for (const name of names) {
      const { dir } = all().get(name)!;
      expect({ dir, src: existsSync(path.join(out, 'full', dir, 'src')) }).toEqual({ dir, src: true });
    }
    expect(names).toContain(`@seller-api/${service}`);
    expect(names).toEqual(expect.arrayContaining(['@seller-api/contracts', '@seller-api/service-kit']));
    if (service === 'gateway') expect(names).toContain('@seller-api/panel');
    if (service === 'payments')
      expect(names).toEqual(expect.arrayContaining(['@seller-api/qr', '@seller-api/api-pix']));
  });

  it('writes a lockfile that resolves every dependency of those workspaces, and no other workspace', () => {
    const out = pruned.get(service)!;
    const lock = readJson<Lockfile>(path.join(out, 'package-lock.json'));
    expect(lock.lockfileVersion).toBe(3);
    const names = expected();
    const dirs = [...names].map((name) => all().get(name)!.dir);
    const lockedWorkspaces = Object.keys(lock.packages).filter(
      (key) =>
        key && !key.includes('node_modules/') && (key.startsWith('packages/') || key.startsWith('services/')),
    );
    expect(lockedWorkspaces.sort()).toEqual([...dirs].sort());
    // npm resolves a dependency from the workspace's own node_modules, then the root's.
    const unresolved: string[] = [];
    for (const name of names) {
      const { dir, manifest } = all().get(name)!;
      for (const dep of Object.keys({ ...manifest.dependencies, ...manifest.devDependencies })) {
        if (!lock.packages[`${dir}/node_modules/${dep}`] && !lock.packages[`node_modules/${dep}`])
          unresolved.push(`${name} -> ${dep}`);
      }
    }
    expect(unresolved).toEqual([]);
  });
});
