import { Migration } from '@mikro-orm/migrations';
import {
  createLogger,
  ensureDatabase,
  migrate,
  openDatabase,
  type DatabaseOptions,
  type MikroORM,
} from '@seller-api/service-kit';
import { Client } from 'pg';
import { testEnv } from './env';

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

/**
 * The file's database with a schema of its own, for a test of the kit's database code: migrated
 * (`migrations`, else one that creates the schema), then opened on a pool of `poolMax` connections in
 * a beforeAll, closed in an afterAll. Migrating takes a connection of its own, so it runs on a pool
 * that is closed first: a pool of one then holds only what the tests run. `fresh`: the schema is
 * dropped first, so every run starts empty and migrates from the beginning.
 */
export function useDatabase(options: {
  schema: string;
  poolMax?: number;
  fresh?: boolean;
  entities?: DatabaseOptions['entities'];
  migrations?: DatabaseOptions['migrations'];
}): { env: NodeJS.ProcessEnv; readonly orm: MikroORM } {
  const env = testEnv();
  const { schema } = options;
  class CreateSchema extends Migration {
    override async up(): Promise<void> {
      this.addSql(`create schema if not exists ${schema}`);
    }
  }
  const database = {
    schema,
    entities: options.entities ?? [],
    migrations: options.migrations ?? [{ name: 'Init', class: CreateSchema }],
    logger: createLogger(`test-${schema}`, 'silent'),
  };
  let orm: MikroORM | undefined;
  beforeAll(async () => {
    if (options.fresh) await dropSchema(env.DATABASE_URL as string, schema);
    await (await openMigrated(env, database)).close();
    orm = await openDatabase({ ...database, url: env.DATABASE_URL as string, poolMax: options.poolMax });
  });
  afterAll(async () => {
    await orm?.close();
  });
  return {
    env,
    get orm() {
      if (!orm)
        throw new Error('useDatabase: the database is opened in a beforeAll; read it in a test or a hook');
      return orm;
    },
  };
}

async function dropSchema(url: string, schema: string): Promise<void> {
  await ensureDatabase(url);
  await withClient(url, (client) =>
    client.query(`drop schema if exists "${schema.replace(/"/g, '""')}" cascade`),
  );
}

/** Runs `work` on a connection of its own to `url` (outside any pool), closed after. */
export async function withClient<T>(url: string, work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}
