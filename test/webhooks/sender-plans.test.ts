import { Client, type ClientBase, type Pool } from 'pg';
import pino from 'pino';
import type { MikroORM } from '@seller-api/service-kit';
import { entities } from '../../services/webhook-dispatcher/src/db/entities';
import { SCHEMA, migrations } from '../../services/webhook-dispatcher/src/db/migrations';
import { createSenderPool } from '../../services/webhook-dispatcher/src/db/sender-pool';
import { CLAIM_SQL, OUTCOME_SQL } from '../../services/webhook-dispatcher/src/events/sender';
import { openMigrated } from '../support/database';
import { testEnv } from '../support/env';

/*
 * The sender's statements are prepared once per connection and keep the plan PostgreSQL settles on after
 * five runs. A plan made while webhooks.deliveries is small (a new deployment) must not scan the table:
 * it would scan it whole at every claim as the table grows. The generic plans are checked here on a
 * table that was never analyzed, the state in which the claim's plan joined its rows by a sequential
 * scan before the sender's connections ruled it out.
 */
const env = testEnv();
let orm: MikroORM;
let pool: Pool;

const CLAIM_TYPES = 'text[], int, int, jsonb, int, timestamptz';
const OUTCOME_TYPES = 'json';

beforeAll(async () => {
  // A new database each run: deliveries are never deleted, and the table must be as a new deployment has it.
  const admin = new URL(env.DATABASE_URL as string);
  const name = decodeURIComponent(admin.pathname.slice(1));
  admin.pathname = '/postgres';
  const client = new Client({ connectionString: admin.toString() });
  await client.connect();
  await client.query(`drop database if exists "${name}" with (force)`);
  await client.end();
  orm = await openMigrated(env, { schema: SCHEMA, entities, migrations, logger: pino({ level: 'silent' }) });
  pool = createSenderPool(env.DATABASE_URL as string);
});
afterAll(async () => {
  await pool?.end();
  await orm?.close();
});

/** The generic plan of `sql` (its parameters of `types`) on `connection`, as text. */
async function genericPlan(connection: ClientBase, sql: string, types: string, args: string) {
  const name = `plan_${Math.random().toString(36).slice(2)}`;
  await connection.query(`set plan_cache_mode = force_generic_plan`);
  await connection.query(`prepare ${name}(${types}) as ${sql}`);
  const { rows } = await connection.query<{ 'QUERY PLAN': string }>(`explain execute ${name}(${args})`);
  await connection.query(`deallocate ${name}`);
  await connection.query(`reset plan_cache_mode`);
  return rows.map((r) => r['QUERY PLAN']).join('\n');
}

const CLAIM_ARGS = `'{}', 100, 8, '{}', 50, '-infinity'`;
const OUTCOME_ARGS = `'[]'`;

test('on a new, never analyzed table, a generic plan of the claim would scan webhooks.deliveries', async () => {
  // The premise: on a plain connection, the planner picks the scan the sender's connections rule out.
  const client = new Client({ connectionString: env.DATABASE_URL });
  await client.connect();
  try {
    expect(await genericPlan(client, CLAIM_SQL, CLAIM_TYPES, CLAIM_ARGS)).toMatch(/Seq Scan on deliveries/);
  } finally {
    await client.end();
  }
});

test("on the sender's connections, neither the claim nor the outcome batch scans webhooks.deliveries", async () => {
  const connection = await pool.connect();
  try {
    const claim = await genericPlan(connection, CLAIM_SQL, CLAIM_TYPES, CLAIM_ARGS);
    expect(claim).toMatch(/Index Scan using deliveries_pkey on deliveries/);
    expect(claim).not.toMatch(/Seq Scan on deliveries/);
    const outcome = await genericPlan(connection, OUTCOME_SQL, OUTCOME_TYPES, OUTCOME_ARGS);
    expect(outcome).toMatch(/Index Scan using deliveries_pkey on deliveries/);
    expect(outcome).not.toMatch(/Seq Scan on deliveries/);
  } finally {
    connection.release();
  }
});
