#!/usr/bin/env node
// What the Dockerfile does for one service, without a container engine: `turbo prune` on the build
// context, `npm ci` and the build on the pruned workspace, `npm ci --omit=dev` apart, the runtime
// layout the image gets (production node_modules and the dist/ of each workspace with a `main`), then
// resolves every `require` of the compiled code from where it sits, and checks no dev tool is there.
// Takes minutes (two installs): run by hand, `npm run images:check -- [service...]` (all five by
// default), after changing dependencies, the workspaces or the Dockerfile. Needs the npm registry.
import { execFileSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const ALL = ['gateway', 'orders', 'payments', 'withdrawals', 'webhook-dispatcher'];
const services = process.argv.slice(2).length ? process.argv.slice(2) : ALL;
const env = {
  ...process.env,
  TURBO_TELEMETRY_DISABLED: '1',
  DO_NOT_TRACK: '1',
  NPM_CONFIG_FUND: 'false',
  NPM_CONFIG_AUDIT: 'false',
};
const sh = (cmd, args, cwd) => execFileSync(cmd, args, { cwd, env, stdio: ['ignore', 'inherit', 'inherit'] });
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

function* files(dir) {
  for (const name of readdirSync(dir)) {
    const file = path.join(dir, name);
    if (statSync(file).isDirectory()) yield* files(file);
    else yield file;
  }
}

const work = mkdtempSync(path.join(os.tmpdir(), 'sa-images-check-'));
let failed = false;
try {
  // The build context: git's files (tracked, or untracked and not ignored); .dockerignore is checked
  // by test/ops/images.test.ts.
  const context = path.join(work, 'context');
  const listed = execFileSync('git', ['ls-files', '-co', '--exclude-standard', '-z'], {
    cwd: ROOT,
    encoding: 'utf8',
  });
  for (const file of listed.split('\0').filter((f) => f && existsSync(path.join(ROOT, f)))) {
    mkdirSync(path.dirname(path.join(context, file)), { recursive: true });
    cpSync(path.join(ROOT, file), path.join(context, file));
  }
  const turbo = path.join(ROOT, 'node_modules/.bin/turbo');
  for (const service of services) {
    const started = Date.now();
    console.log(`\n== ${service}`);
    const scopes = execFileSync(process.execPath, ['deploy/images/prune-scopes.mjs', service], {
      cwd: context,
      encoding: 'utf8',
    })
      .trim()
      .split(' ');
    const pruned = path.join(work, `pruned-${service}`);
    sh(turbo, ['prune', ...scopes, '--docker', '--out-dir', pruned], context);

    // build stage
    const build = path.join(work, `build-${service}`);
    cpSync(path.join(pruned, 'json'), build, { recursive: true });
    cpSync(path.join(pruned, 'package-lock.json'), path.join(build, 'package-lock.json'));
    sh(npm, ['ci', '--ignore-scripts', '--prefer-offline'], build);
    cpSync(path.join(pruned, 'full'), build, { recursive: true });
    cpSync(path.join(context, 'tsconfig.base.json'), path.join(build, 'tsconfig.base.json'));
    sh(
      path.join(build, 'node_modules/.bin/turbo'),
      ['run', 'build', `--filter=@seller-api/${service}`],
      build,
    );

    // production stage, then the runtime layout
    const runtime = path.join(work, `runtime-${service}`);
    cpSync(path.join(pruned, 'json'), runtime, { recursive: true });
    cpSync(path.join(pruned, 'package-lock.json'), path.join(runtime, 'package-lock.json'));
    sh(npm, ['ci', '--omit=dev', '--ignore-scripts', '--prefer-offline'], runtime);
    const shipped = [];
    for (const folder of ['packages', 'services'])
      for (const name of existsSync(path.join(build, folder)) ? readdirSync(path.join(build, folder)) : []) {
        const ws = `${folder}/${name}`;
        const manifest = JSON.parse(readFileSync(path.join(build, ws, 'package.json'), 'utf8'));
        if (!manifest.main) continue;
        cpSync(path.join(build, ws, 'dist'), path.join(runtime, ws, 'dist'), { recursive: true });
        shipped.push(ws);
      }

    // Every require of the shipped code resolves in the runtime layout.
    const missing = [];
    let checked = 0;
    for (const ws of shipped)
      for (const file of files(path.join(runtime, ws, 'dist'))) {
        if (!file.endsWith('.js')) continue;
        const require = createRequire(file);
        for (const [, spec] of readFileSync(file, 'utf8').matchAll(/\brequire\("([^"]+)"\)/g)) {
          checked += 1;
          try {
            require.resolve(spec);
          } catch {
            missing.push(`${path.relative(runtime, file)}: ${spec}`);
          }
        }
      }
    const devTools = ['typescript', 'turbo', 'jest', 'vite', 'eslint'].filter((tool) =>
      existsSync(path.join(runtime, 'node_modules', tool)),
    );
    const main = path.join(runtime, 'services', service, 'dist/main.js');
    console.log(
      `${service}: ${shipped.join(', ')} shipped; ${checked} requires checked in ${Math.round((Date.now() - started) / 1000)} s`,
    );
    // The gateway serves the panel its build copied into its dist (services/gateway/scripts/copy-panel.mjs).
    if (service === 'gateway' && !existsSync(path.join(runtime, 'services/gateway/dist/public/index.html'))) {
      failed = true;
      console.error('gateway: no panel in services/gateway/dist/public');
    }
    if (!existsSync(main)) {
      failed = true;
      console.error(`${service}: no ${path.relative(runtime, main)}`);
    }
    if (missing.length) {
      failed = true;
      console.error(`${service}: unresolved in the runtime layout:\n  ${missing.join('\n  ')}`);
    }
    if (devTools.length) {
      failed = true;
      console.error(`${service}: dev tools in the runtime layout: ${devTools.join(', ')}`);
    }
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
console.log(failed ? '\nimages:check failed' : `\nimages:check passed for ${services.join(', ')}`);
process.exit(failed ? 1 : 0);
