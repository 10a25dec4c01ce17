// The local database of `npm start` and `npm run migrate`: each service connects as its own role,
// owner of its own schema only (docs/deploy.md, "One role and one broker user per service"). Through
// the local superuser (DATABASE_URL, by default `postgres` without a password) it creates the database
// and the roles, hands each schema to its role, and answers each service's DATABASE_URL. Where that is
// not possible (DATABASE_URL names a role that may not create roles) every service gets DATABASE_URL
// itself, as before, with a warning. `<SERVICE>_DATABASE_URL` (ORDERS_DATABASE_URL, ...) wins.
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);

export const DEFAULT_DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/seller_api';

/** `webhook-dispatcher` → `WEBHOOK_DISPATCHER`, the prefix of its root variables. */
export const envPrefix = (service) => service.toUpperCase().replace(/-/g, '_');

/**
 * Each service's DATABASE_URL, keyed by service name. `services` are names from the kit's
 * SERVICE_ACCESS; `warn` receives one line when the services must share DATABASE_URL.
 */
export async function serviceDatabaseUrls(services, { env = process.env, warn = console.warn } = {}) {
  const kit = require(path.join(root, 'packages/service-kit/dist/index.js'));
  const { SERVICE_ACCESS, serviceRolesSql } = require(
    path.join(root, 'packages/service-kit/dist/service-access.js'),
  );
  const adminUrl = env.DATABASE_URL ?? DEFAULT_DATABASE_URL;
  const access = SERVICE_ACCESS.filter((a) => services.includes(a.service));
  const own = Object.fromEntries(
    access.map((a) => [a.service, env[`${envPrefix(a.service)}_DATABASE_URL`]]).filter(([, url]) => url),
  );
  if (access.every((a) => own[a.service])) return own;
  const shared = Object.fromEntries(access.map((a) => [a.service, own[a.service] ?? adminUrl]));
  const { Client } = require('pg');
  try {
    if (env.NODE_ENV !== 'production') await kit.ensureDatabase(adminUrl);
    const client = new Client({ connectionString: adminUrl });
    await client.connect();
    try {
      await client.query(serviceRolesSql(access));
      // A local password, for servers that ask for one (trust needs none); production roles get
      // real ones from the operator (docs/deploy.md).
      for (const a of access) await client.query(`alter role "${a.role}" password '${a.role}'`);
    } finally {
      await client.end();
    }
  } catch (err) {
    warn(
      `cannot create the services' PostgreSQL roles through DATABASE_URL (${err.message}); ` +
        'every service connects with DATABASE_URL itself',
    );
    return shared;
  }
  return Object.fromEntries(
    access.map((a) => {
      if (own[a.service]) return [a.service, own[a.service]];
      const url = new URL(adminUrl);
      url.username = a.role;
      url.password = a.role;
      return [a.service, url.toString()];
    }),
  );
}
