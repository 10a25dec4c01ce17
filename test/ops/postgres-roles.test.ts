// One PostgreSQL role per service (docs/deploy.md, "One role and one broker user per service"), created
// as `npm start` creates them (serviceRolesSql through the superuser): migrations succeed as the
// schema's owner, including on a schema an earlier version created as the shared role, and a
// service's role cannot read or write another service's schema. In this file's own database, with
// uniquely named roles that are dropped afterwards.
import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { createLogger, migrate, openDatabase, type MigrationClass } from '@seller-api/service-kit';
import type { EntitySchema } from '@mikro-orm/postgresql';
import { serviceRolesSql } from '../../packages/service-kit/src/service-access';
import * as ordersDb from '../../services/orders/src/db/migrations';
import * as paymentsDb from '../../services/payments/src/db/migrations';
import { entities as ordersEntities } from '../../services/orders/src/db/entities';
import { entities as paymentsEntities } from '../../services/payments/src/db/entities';
import { testEnv } from '../support/env';

const env = testEnv();
const databaseUrl = env.DATABASE_URL as string;
const database = new URL(databaseUrl).pathname.slice(1);
const run = randomBytes(4).toString('hex');
const roles = { orders: `sa_test_${run}_orders`, payments: `sa_test_${run}_payments` };
const password = randomBytes(12).toString('hex');

const urlAs = (role: string) => {
  const url = new URL(databaseUrl);
  url.username = role;
  url.password = password;
  return url.toString();
};

async function withClient<T>(url: string, work: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await work(client);
  } finally {
    await client.end();
  }
}

async function migrateAs(
  url: string,
  schema: string,
  migrations: Array<{ name: string; class: MigrationClass }>,
  entities: EntitySchema[],
): Promise<string[]> {
  const orm = await openDatabase({
    url,
    schema,
    migrations,
    entities,
    logger: createLogger('roles', 'silent'),
    poolMax: 2,
  });
  try {
    return await migrate(orm, schema);
  } finally {
    await orm.close(true);
  }
}

/** The SQLSTATE a statement fails with, or null when it succeeds. */
const failure = (client: Client, sql: string) =>
  client.query(sql).then(
    () => null,
    (err: { code?: string }) => err.code ?? 'unknown',
  );

const admin = (sql: string) => withClient(databaseUrl.replace(/\/[^/]+$/, '/postgres'), (c) => c.query(sql));

beforeAll(async () => {
  await admin(`drop database if exists "${database}" with (force)`);
  await admin(`create database "${database}"`);
  // A deployment from before the roles: orders' schema exists, created and migrated by the shared
  // (here: super) user.
  const legacy = await migrateAs(databaseUrl, ordersDb.SCHEMA, ordersDb.migrations, ordersEntities);
  expect(legacy.length).toBeGreaterThan(0);
  await withClient(databaseUrl, async (client) => {
    await client.query(
      serviceRolesSql([
        { schema: ordersDb.SCHEMA, role: roles.orders },
        { schema: paymentsDb.SCHEMA, role: roles.payments },
      ]),
    );
    for (const role of Object.values(roles))
      await client.query(`alter role "${role}" password '${password}'`);
  });
});

afterAll(async () => {
  await admin(`drop database if exists "${database}" with (force)`);
  for (const role of Object.values(roles)) await admin(`drop role if exists "${role}"`);
});

it("hands the shared role's schema and tables to the service's role", async () => {
  const owners = await withClient(databaseUrl, (client) =>
    client.query<{ owner: string }>(
      `select distinct pg_get_userbyid(relowner) as owner from pg_class
       where relnamespace = $1::text::regnamespace and relkind in ('r', 'p', 'S', 'v', 'i')
       union select pg_get_userbyid(nspowner) from pg_namespace where nspname = $1::text`,
      [ordersDb.SCHEMA],
    ),
  );
  expect(owners.rows.map((r) => r.owner)).toEqual([roles.orders]);
});

it('migrates as the owner: a fresh schema, and one handed over', async () => {
  const fresh = await migrateAs(
    urlAs(roles.payments),
    paymentsDb.SCHEMA,
    paymentsDb.migrations,
    paymentsEntities,
  );
  expect(fresh).toEqual(paymentsDb.migrations.map((m) => m.name));
  expect(await migrateAs(urlAs(roles.orders), ordersDb.SCHEMA, ordersDb.migrations, ordersEntities)).toEqual(
    [],
  );
});

it('lets each role into its own schema only', async () => {
  await migrateAs(urlAs(roles.payments), paymentsDb.SCHEMA, paymentsDb.migrations, paymentsEntities);
  await withClient(urlAs(roles.payments), async (client) => {
    expect(await failure(client, 'select count(*) from payments.outbox')).toBeNull();
    expect(await failure(client, 'select count(*) from orders.outbox')).toBe('42501');
  });
  await withClient(urlAs(roles.orders), async (client) => {
    // 42501 insufficient_privilege: for the schema, before the table is even looked at.
    expect(await failure(client, 'select count(*) from payments.outbox')).toBe('42501');
    expect(await failure(client, 'select count(*) from payments.transactions')).toBe('42501');
    expect(
      await failure(
        client,
        `insert into payments.outbox (id, exchange, routing_key, payload) values (gen_random_uuid(), 'x', 'y', '{}')`,
      ),
    ).toBe('42501');
    expect(await failure(client, 'create table payments.intruder (id int)')).toBe('42501');
    // Nor can it make itself another schema.
    expect(await failure(client, 'create schema intruder')).toBe('42501');
    expect(await failure(client, 'select count(*) from orders.outbox')).toBeNull();
  });
});
