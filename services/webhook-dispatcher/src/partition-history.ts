// `node services/webhook-dispatcher/dist/partition-history.js`: partition the history tables of an
// installation that has them unpartitioned, without stopping it (db/history-upgrade.ts; docs/deploy.md,
// "Partitioned history"). Run it once every dispatcher replica runs this release or a later one. It
// reads only the database variables (DATABASE_URL, DATABASE_LOCK_URL, DATABASE_PREPARED_STATEMENTS) and
// LOG_LEVEL.
import {
  ConfigError,
  commonEnv,
  createLogger,
  databaseEnv,
  databaseOptionsOf,
  loadConfig,
  openDatabase,
  sqlOf,
  withReplicaLock,
} from '@seller-api/service-kit';
import { entities } from './db/entities';
import { partitionHistoryTable } from './db/history-upgrade';
import { SCHEMA, migrations } from './db/migrations';
import { databaseNow } from './db/partitions';
import { HISTORY_TABLES } from './domain/partitions';

async function main(): Promise<void> {
  const config = loadConfig({ ...databaseEnv, LOG_LEVEL: commonEnv.LOG_LEVEL }, process.env);
  const logger = createLogger('webhook-dispatcher-partition-history', config.LOG_LEVEL);
  const orm = await openDatabase({
    ...databaseOptionsOf(config),
    schema: SCHEMA,
    entities,
    migrations,
    logger,
    poolMax: 2,
  });
  try {
    // The retention job's lock: no replica deletes or drops history while a table changes shape.
    const done = await withReplicaLock(
      orm,
      { key: 'webhooks:history-retention', waitMs: 120_000 },
      async () => {
        for (const spec of HISTORY_TABLES) {
          const now = await databaseNow(sqlOf(orm));
          await partitionHistoryTable(orm, spec, now, (step) => logger.info(step, 'history upgrade'));
        }
      },
    );
    if (!done.locked)
      throw new Error('a dispatcher replica kept the history retention lock for 2 minutes: run it again');
    logger.info('history tables partitioned; the dispatcher makes and drops their partitions from now on');
  } finally {
    await orm.close(true);
  }
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err instanceof ConfigError ? err.message : err);
    process.exit(1);
  },
);
