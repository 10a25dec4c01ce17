// Puts the built panel (packages/panel/dist) beside the gateway's compiled code, in dist/public: the
// gateway's image ships services/gateway/dist and nothing of packages/panel. turbo builds the panel
// first (services/gateway/turbo.json).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const from = path.resolve(here, '../../../packages/panel/dist');
const to = path.resolve(here, '../dist/public');

fs.rmSync(to, { recursive: true, force: true });
if (fs.existsSync(path.join(from, 'index.html'))) {
  fs.cpSync(from, to, { recursive: true });
} else {
  console.warn(`gateway: no built panel in ${from}; the gateway will answer 503 at / until it is built`);
}
