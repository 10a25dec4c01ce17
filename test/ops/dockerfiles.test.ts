import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';

/*
 * No Docker engine runs here, so the images are never built in CI: these checks keep the Dockerfiles in
 * step with the workspace layout, which is what broke them before (`npm ci` in an image needs the
 * package.json of every workspace, and a new package was forgotten).
 */

const ROOT = path.resolve(__dirname, '../..');
const SERVICES = ['gateway', 'orders', 'payments', 'withdrawals', 'webhook-dispatcher'];
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

function workspaces(): string[] {
  return ['packages', 'services'].flatMap((folder) =>
    readdirSync(path.join(ROOT, folder))
      .filter((name) => existsSync(path.join(ROOT, folder, name, 'package.json')))
      .map((name) => `${folder}/${name}`),
  );
}

describe('Dockerfiles', () => {
  it.each(SERVICES)('%s copies the package.json of every workspace before npm ci', (service) => {
    const dockerfile = read(`services/${service}/Dockerfile`);
    const missing = workspaces().filter(
      (workspace) => !dockerfile.includes(`COPY ${workspace}/package.json ${workspace}/`),
    );
    expect(missing).toEqual([]);
  });

  it('are the same file but for the service name and its ports', () => {
    const normalised = SERVICES.map((service) =>
      read(`services/${service}/Dockerfile`)
        .replace(/^ARG SERVICE=.*$/m, 'ARG SERVICE=<name>')
        .replace(/^ARG SERVICE_PORT=.*$/m, 'ARG SERVICE_PORT=<port>')
        .replace(/^ARG SERVICE_METRICS_PORT=.*$/m, 'ARG SERVICE_METRICS_PORT=<port>')
        .replace(/^# Image of the .* service\.$/m, '# Image of the <name> service.')
        .replace(/-f services\/[a-z-]+\/Dockerfile -t seller-api\/[a-z-]+/g, '-f <dockerfile> -t <image>')
        .replace(/services\/[a-z-]+\/dist\/main\.js/g, '<main>'),
    );
    for (const other of normalised.slice(1)) expect(other).toBe(normalised[0]);
  });
});
