// Where a process spent its CPU, from a V8 .cpuprofile (`node --cpu-prof`, which run.mjs passes to
// every child when BENCH_PROFILE=<dir> is set): self time summed by package and by file.
//   node bench/create-order/profile.mjs <file.cpuprofile | dir> [top]
// A package is the npm package a function comes from (`pg`, `@mikro-orm/core`), the workspace
// (`services/orders`, `packages/service-kit`), `node` for Node's own JavaScript, or one of V8's
// pseudo-frames: `(garbage collector)`, `(program)` (native code that V8 cannot attribute), `(idle)`.
// Beside the profiles a bench wrote, each process's measured run only (the windows.json the bench
// leaves there, writeProfileWindows).
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** `{ pkg, file }` of a call frame. */
function locate(callFrame) {
  const { url, functionName } = callFrame;
  if (!url) {
    // V8's pseudo-frames, or a builtin without a script (JSON.parse, a crypto binding): by name.
    if (/^\(.*\)$/.test(functionName)) return { pkg: functionName, file: functionName };
    return { pkg: '(native)', file: `(native) ${functionName || '(anonymous)'}` };
  }
  if (url.startsWith('node:')) return { pkg: 'node', file: url };
  let file = url.startsWith('file://') ? fileURLToPath(url) : url;
  const nm = file.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const rest = file.slice(nm + '/node_modules/'.length);
    const parts = rest.split('/');
    const pkg = parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
    return { pkg, file: rest };
  }
  if (file.startsWith(`${ROOT}/`)) file = file.slice(ROOT.length + 1);
  const workspace = /^(services|packages|bench)\/[^/]+/.exec(file);
  return { pkg: workspace ? workspace[0] : file, file };
}

/**
 * Self time (ms) per package and per file, with the busy total (everything but `(idle)`). `window`
 * `[fromUs, toUs]` keeps the samples taken in it, on the clock of `process.hrtime` (V8's profiles use
 * the same monotonic clock), e.g. one measured run rather than the start-up and the warm-up.
 */
export function summarise(profile, window = null) {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfUs = new Map(); // node id -> µs
  let at = profile.startTime;
  let first = Infinity;
  let last = -Infinity;
  // timeDeltas[i] is the time before sample i; attribute each interval to the sample that ends it.
  profile.samples.forEach((id, i) => {
    const delta = Math.max(0, profile.timeDeltas[i] ?? 0);
    at += delta;
    if (window && (at < window[0] || at > window[1])) return;
    first = Math.min(first, at - delta);
    last = Math.max(last, at);
    selfUs.set(id, (selfUs.get(id) ?? 0) + delta);
  });
  const packages = new Map();
  const files = new Map();
  const functions = new Map();
  let busyUs = 0;
  for (const [id, us] of selfUs) {
    const { callFrame } = byId.get(id);
    const { pkg, file } = locate(callFrame);
    packages.set(pkg, (packages.get(pkg) ?? 0) + us);
    files.set(file, (files.get(file) ?? 0) + us);
    const fn = callFrame.url
      ? `${callFrame.functionName || '(anonymous)'} ${file}:${callFrame.lineNumber + 1}`
      : file;
    functions.set(fn, (functions.get(fn) ?? 0) + us);
    if (pkg !== '(idle)') busyUs += us;
  }
  const sorted = (map) =>
    [...map]
      .filter(([key]) => key !== '(idle)')
      .map(([key, us]) => ({ key, ms: us / 1000 }))
      .sort((a, b) => b.ms - a.ms);
  return {
    wallMs: last > first ? (last - first) / 1000 : 0,
    busyMs: busyUs / 1000,
    packages: sorted(packages),
    files: sorted(files),
    functions: sorted(functions),
  };
}

/**
 * Leaves `windows.json` beside a bench's profiles: each process's measured window, the one the bench's
 * own summary used, so that reading the profiles again later (the command line below) sees the same.
 */
export function writeProfileWindows(dir, names, windowOf) {
  writeFileSync(
    path.join(dir, 'windows.json'),
    JSON.stringify(Object.fromEntries(names.map((n) => [n, windowOf(n)]))),
  );
}

/** The summary of one profile file, printed: top packages, files and functions, in % of busy time. */
export function printProfile(label, file, top = 12, window = null) {
  const s = summarise(JSON.parse(readFileSync(file, 'utf8')), window);
  const pct = (ms) => `${((100 * ms) / s.busyMs).toFixed(1).padStart(5)} %`;
  console.log(
    `\n${label}: ${(s.busyMs / 1000).toFixed(1)} s of CPU in ${(s.wallMs / 1000).toFixed(1)} s ` +
      `(${path.relative(process.cwd(), file) || file})`,
  );
  console.log('  by package (self time, % of busy):');
  for (const { key, ms } of s.packages.slice(0, top)) console.log(`    ${pct(ms)}  ${key}`);
  console.log('  by file:');
  for (const { key, ms } of s.files.slice(0, top)) console.log(`    ${pct(ms)}  ${key}`);
  console.log('  by function:');
  for (const { key, ms } of s.functions.slice(0, top)) console.log(`    ${pct(ms)}  ${key}`);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const target = process.argv[2];
  const top = Number(process.argv[3] ?? 12);
  if (!target) {
    console.error('usage: node bench/create-order/profile.mjs <file.cpuprofile | dir> [top]');
    process.exit(1);
  }
  const files = statSync(target).isDirectory()
    ? readdirSync(target)
        .filter((name) => name.endsWith('.cpuprofile'))
        .sort()
        .map((name) => path.join(target, name))
    : [target];
  for (const file of files) {
    const name = path.basename(file, '.cpuprofile');
    const windowsFile = path.join(path.dirname(file), 'windows.json');
    const windows = existsSync(windowsFile) ? JSON.parse(readFileSync(windowsFile, 'utf8')) : {};
    printProfile(name, file, top, windows[name] ?? null);
  }
}
