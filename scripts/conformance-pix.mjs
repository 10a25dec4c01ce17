// `npm run conformance:pix`: the charge adapter (immediate and due-date charges) against the Central
// Bank's API Pix OpenAPI document (test/conformance/api-pix.ts, api-pix-cobv.ts, packages/api-pix/spec/README.md). Prints the table and exits non-zero
// on a failure. Node 24 only strips TypeScript's types and the sources use parameter properties (Node
// 20 reads no TypeScript at all): a require hook compiles each .ts file with @swc/core (a devDependency,
// as jest uses it), and the workspace packages are read from their sources, so nothing needs building
// first.
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const swc = require('@swc/core');
const Module = require('node:module');
const root = path.join(path.dirname(fileURLToPath(import.meta.url)), '..');

Module._extensions['.ts'] = (module, filename) => {
  const source = fs.readFileSync(filename, 'utf8');
  const { code } = swc.transformSync(source, {
    filename,
    jsc: { target: 'es2022', parser: { syntax: 'typescript' } },
    module: { type: 'commonjs' },
    sourceMaps: 'inline',
  });
  module._compile(code, filename);
};
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  const workspace = /^@seller-api\/([a-z-]+)$/.exec(request);
  if (workspace) return path.join(root, 'packages', workspace[1], 'src', 'index.ts');
  return resolve.call(this, request, ...rest);
};

const { runApiPixConformance, formatConformance } = require(path.join(root, 'test/conformance/api-pix.ts'));
const { runCobvConformance } = require(path.join(root, 'test/conformance/api-pix-cobv.ts'));
const charges = await runApiPixConformance();
// Due-date charges (cobv) in the same table: the adapter's requests and the simulator's answers.
const dueDate = await runCobvConformance();
const report = {
  ...charges,
  rows: [...charges.rows, ...dueDate.rows],
  failures: [...charges.failures, ...dueDate.failures],
  defectsSeen: [...new Set([...charges.defectsSeen, ...dueDate.defectsSeen])],
};
console.log(formatConformance(report));
process.exitCode = report.failures.length === 0 ? 0 : 1;
