import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { waitFor } from '../support/wait';

const ROOT = path.resolve(__dirname, '../..');
export const PANEL_DIST = path.join(ROOT, 'packages/panel/dist');
const SOURCES = [
  path.join(ROOT, 'packages/panel/src'),
  path.join(ROOT, 'packages/panel/vite.config.ts'),
  path.join(ROOT, 'packages/contracts/src'),
];
const LOCK = path.join(os.tmpdir(), 'seller-api-panel-build.lock');

function newestMtime(entry: string): number {
  const stat = fs.statSync(entry);
  if (!stat.isDirectory()) return stat.mtimeMs;
  return Math.max(0, ...fs.readdirSync(entry).map((name) => newestMtime(path.join(entry, name))));
}

function isFresh(): boolean {
  const index = path.join(PANEL_DIST, 'index.html');
  if (!fs.existsSync(index)) return false;
  return fs.statSync(index).mtimeMs >= Math.max(...SOURCES.map(newestMtime));
}

/**
 * CI runs `npm test` without `npm run build`: the browser tests build the panel when its dist is
 * missing or older than its sources (or the contracts it compiles in). One build at a time.
 */
export async function ensurePanelBuilt(): Promise<void> {
  if (isFresh()) return;
  await waitFor(
    () => {
      try {
        fs.mkdirSync(LOCK);
        return true;
      } catch {
        // A lock older than two minutes belongs to a build that died.
        const age = Date.now() - (fs.statSync(LOCK, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
        if (age > 120_000) fs.rmSync(LOCK, { recursive: true, force: true });
        return false;
      }
    },
    { timeoutMs: 120_000, intervalMs: 200, what: 'the panel build lock' },
  );
  try {
    if (isFresh()) return;
    execFileSync(
      process.execPath,
      [
        path.join(ROOT, 'node_modules/vite/bin/vite.js'),
        'build',
        '--config',
        'packages/panel/vite.config.ts',
      ],
      {
        cwd: ROOT,
        env: { ...process.env, NODE_ENV: 'production' },
        stdio: ['ignore', 'ignore', 'pipe'],
        timeout: 120_000,
      },
    );
  } finally {
    fs.rmSync(LOCK, { recursive: true, force: true });
  }
}
