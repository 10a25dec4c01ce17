// The Helm hook Job runs `node services/<name>/dist/migrate.js`, which is `migrateOnly` with the
// service's schema: it applies every migration once, and a second run (the next upgrade) is a no-op.
import { Client } from 'pg';
import { migrateOnly, type MigrateOnlyOptions } from '@seller-api/service-kit';
import * as gateway from '../../services/gateway/src/db/migrations';
import * as orders from '../../services/orders/src/db/migrations';
import * as payments from '../../services/payments/src/db/migrations';
import * as withdrawals from '../../services/withdrawals/src/db/migrations';
import * as webhooks from '../../services/webhook-dispatcher/src/db/migrations';
import { entities as gatewayEntities } from '../../services/gateway/src/db/entities';
import { entities as ordersEntities } from '../../services/orders/src/db/entities';
import { entities as paymentsEntities } from '../../services/payments/src/db/entities';
import { entities as withdrawalsEntities } from '../../services/withdrawals/src/db/entities';
import { entities as webhooksEntities } from '../../services/webhook-dispatcher/src/db/entities';
import { testEnv } from '../support/env';

const services: MigrateOnlyOptions[] = [
  { service: 'gateway', schema: gateway.SCHEMA, migrations: gateway.migrations, entities: gatewayEntities },
  { service: 'orders', schema: orders.SCHEMA, migrations: orders.migrations, entities: ordersEntities },
  {
    service: 'payments',
    schema: payments.SCHEMA,
    migrations: payments.migrations,
    entities: paymentsEntities,
  },
  {
    service: 'withdrawals',
    schema: withdrawals.SCHEMA,
    migrations: withdrawals.migrations,
    entities: withdrawalsEntities,
  },
  {
    service: 'webhook-dispatcher',
    schema: webhooks.SCHEMA,
    migrations: webhooks.migrations,
    entities: webhooksEntities,
  },
];

describe('migrate-only entry point (Helm pre-install/pre-upgrade Job)', () => {
  const env = testEnv();
  const client = new Client({ connectionString: env.DATABASE_URL });

  beforeAll(async () => {
    // A fresh database, as on a first install: the hook runs before any service.
    const admin = new Client({ connectionString: env.DATABASE_URL?.replace(/\/[^/]+$/, '/postgres') });
    await admin.connect();
    const name = new URL(env.DATABASE_URL as string).pathname.slice(1);
    await admin.query(`drop database if exists "${name}" with (force)`);
    await admin.end();
    await migrateOnly(services[0] as MigrateOnlyOptions, env); // creates the database
    await client.connect();
  });
  afterAll(() => client.end());

  it.each(services)('$service: applies every migration, then nothing on the next run', async (options) => {
    await client.query(`drop schema if exists "${options.schema}" cascade`);
    const first = await migrateOnly(options, env);
    expect(first).toEqual(options.migrations.map((m) => m.name));
    expect(await migrateOnly(options, env)).toEqual([]);
  });

  it('leaves the outbox table of each service in place', async () => {
    for (const options of services) await migrateOnly(options, env);
    const { rows } = await client.query<{ table_schema: string }>(
      `select table_schema from information_schema.tables where table_name = 'outbox' order by 1`,
    );
    expect(rows.map((r) => r.table_schema).sort()).toEqual(services.map((s) => s.schema).sort());
  });

  it('refuses a bad DATABASE_URL by name, without echoing it', async () => {
    await expect(
      migrateOnly(services[1] as MigrateOnlyOptions, { ...env, DATABASE_URL: 'not a url' }),
    ).rejects.toThrow(/DATABASE_URL/);
  });
});
