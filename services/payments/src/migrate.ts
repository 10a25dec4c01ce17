// `node services/payments/dist/migrate.js`: apply this service's migrations and exit (the Helm hook Job).
import { ConfigError, migrateOnly } from '@seller-api/service-kit';
import { entities } from './db/entities';
import { SCHEMA, migrations } from './db/migrations';

migrateOnly({ service: 'payments', schema: SCHEMA, entities, migrations }).then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err instanceof ConfigError ? err.message : err);
    process.exit(1);
  },
);
