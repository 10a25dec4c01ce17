// Runs fuzz/cli.ts. Node 24 only strips TypeScript's types (no enums, no parameter properties; Node 20
// reads no TypeScript at all): a require hook compiles each .ts file of fuzz/ with @swc/core (already a
// devDependency, as jest uses it). The packages come from their builds (`npm run fuzz` builds first).
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const swc = require('@swc/core');
const Module = require('node:module');
const here = path.dirname(fileURLToPath(import.meta.url));

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

require(path.join(here, 'cli.ts'));
