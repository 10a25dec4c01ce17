// `npm run migrate`: apply every service's pending migrations once, then exit (Helm runs the same
// thing as a pre-install/pre-upgrade Job). Services also migrate at start unless MIGRATE_ON_START=false.
// Each service migrates as its own role, the owner of its schema (local-database.mjs, as `npm start`).
import path from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { serviceDatabaseUrls } from './local-database.mjs';
import { SERVICE_NAMES as SERVICES } from './stack.cjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const require = createRequire(import.meta.url);
const kit = require(path.join(root, 'packages/service-kit/dist/index.js'));

const config = kit.loadConfig({
  DATABASE_URL: kit.commonEnv.DATABASE_URL,
  NODE_ENV: kit.commonEnv.NODE_ENV,
  LOG_LEVEL: kit.commonEnv.LOG_LEVEL,
});
const logger = kit.createLogger('migrate', config.LOG_LEVEL);
if (config.NODE_ENV !== 'production') await kit.ensureDatabase(config.DATABASE_URL);
const only = process.argv[2];
const chosen = SERVICES.filter((s) => !only || s === only);
const urls = await serviceDatabaseUrls(chosen);
for (const name of chosen) {
  const dir = path.join(root, 'services', name, 'dist', 'db');
  const { SCHEMA, migrations } = require(path.join(dir, 'migrations.js'));
  const { entities } = require(path.join(dir, 'entities.js'));
  const orm = await kit.openDatabase({
    url: urls[name],
    schema: SCHEMA,
    entities,
    migrations,
    logger,
    poolMax: 2,
  });
  try {
    const applied = await kit.migrate(orm, SCHEMA);
    console.log(`${name}: ${applied.length ? `applied ${applied.join(', ')}` : 'up to date'}`);
  } finally {
    await orm.close(true);
  }
}
