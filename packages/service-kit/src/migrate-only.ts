import type { EntitySchema } from '@mikro-orm/postgresql';
import { commonEnv, databaseEnv, loadConfig } from './config';
import { databaseOptionsOf, ensureDatabase, migrate, openDatabase, type MigrationClass } from './db';
import { createLogger } from './logger';

export interface MigrateOnlyOptions {
  service: string;
  schema: string;
  entities: EntitySchema[];
  migrations: Array<{ name: string; class: MigrationClass }>;
}

/**
 * `node services/<name>/dist/migrate.js`: apply the service's pending migrations, then return. Helm runs
 * it as a pre-install/pre-upgrade Job, so the Deployment can start with MIGRATE_ON_START=false. It reads
 * only the database variables (DATABASE_URL, DATABASE_LOCK_URL), NODE_ENV and LOG_LEVEL: the Job needs
 * no broker, Redis or other secret.
 */
export async function migrateOnly(
  options: MigrateOnlyOptions,
  source: NodeJS.ProcessEnv = process.env,
): Promise<string[]> {
  const config = loadConfig(
    { ...databaseEnv, NODE_ENV: commonEnv.NODE_ENV, LOG_LEVEL: commonEnv.LOG_LEVEL },
    source,
  );
  const logger = createLogger(`${options.service}-migrate`, config.LOG_LEVEL);
  if (config.NODE_ENV !== 'production') await ensureDatabase(config.DATABASE_URL);
  const orm = await openDatabase({
    ...databaseOptionsOf(config),
    schema: options.schema,
    entities: options.entities,
    migrations: options.migrations,
    logger,
    poolMax: 2,
  });
  try {
    const applied = await migrate(orm, options.schema);
    logger.info({ applied }, applied.length ? 'migrations applied' : 'schema up to date');
    return applied;
  } finally {
    await orm.close(true);
  }
}
