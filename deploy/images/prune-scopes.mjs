#!/usr/bin/env node
// Prints the workspaces `turbo prune` must keep to build one service's image, space-separated: the
// service's own package, and any workspace its turbo.json builds first by name (`<name>#build`).
// The gateway's build copies the panel's (services/gateway/turbo.json) without importing it, so its
// package.json does not name it and turbo prune, which follows package.json dependencies only, would
// leave it out. Used by the Dockerfile's prune stage and by test/ops/images.test.ts.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

const [service] = process.argv.slice(2);
if (!service || !/^[a-z][a-z-]*$/.test(service)) {
  console.error('usage: prune-scopes.mjs <service> (the SERVICE build argument is required)');
  process.exit(2);
}
const root = process.argv[3] ?? process.cwd();
const dir = path.join(root, 'services', service);
if (!existsSync(path.join(dir, 'package.json'))) {
  console.error(`prune-scopes.mjs: no service named "${service}" under services/`);
  process.exit(2);
}
const own = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')).name;
const scopes = new Set([own]);
const turboFile = path.join(dir, 'turbo.json');
if (existsSync(turboFile)) {
  const turbo = JSON.parse(readFileSync(turboFile, 'utf8'));
  for (const task of Object.values(turbo.tasks ?? {}))
    for (const dep of task.dependsOn ?? []) {
      const named = /^([^#^$][^#]*)#/.exec(dep)?.[1];
      if (named) scopes.add(named);
    }
}
console.log([...scopes].join(' '));
