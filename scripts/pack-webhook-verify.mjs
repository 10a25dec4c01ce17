// `npm run pack:webhook-verify [-- <directory>]`: packs @seller-api/webhook-verify (compiled JS, types,
// its source, README and LICENSE) into an npm tarball, by default dist/packages/, and prints its path.
// The package is not on the public npm registry: receivers install this tarball (docs/webhooks.md,
// "Node.js (Express) with @seller-api/webhook-verify").
import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Packs the package into `destination` (made if missing); answers the tarball's absolute path. */
export function packWebhookVerify(destination = path.join(root, 'dist/packages')) {
  const target = path.resolve(destination);
  mkdirSync(target, { recursive: true });
  // The package's prepack builds dist/ afresh; its output goes to stderr so stdout is the JSON report.
  const pack = spawnSync(
    'npm',
    ['pack', '--json', '--workspace', '@seller-api/webhook-verify', '--pack-destination', target],
    { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] },
  );
  if (pack.status !== 0) throw new Error(`npm pack failed (exit ${pack.status ?? pack.signal})`);
  const [report] = JSON.parse(pack.stdout.slice(pack.stdout.indexOf('[')));
  return path.join(target, report.filename);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    console.log(packWebhookVerify(process.argv[2]));
  } catch (err) {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  }
}
