import {
  ensureDatabase,
  migrate,
  openDatabase,
  type DatabaseOptions,
  type MikroORM,
} from '@seller-api/service-kit';

/** The test database (created if missing) opened on `schema`, with its migrations run. */
export async function openMigrated(
  env: NodeJS.ProcessEnv,
  options: Omit<DatabaseOptions, 'url'>,
): Promise<MikroORM> {
  const url = env.DATABASE_URL as string;
  await ensureDatabase(url);
  const orm = await openDatabase({ url, ...options });
  await migrate(orm, options.schema);
  return orm;
}
