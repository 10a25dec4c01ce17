import { randomUUID } from 'node:crypto';
import { Client, Pool } from 'pg';
import pino from 'pino';
import { sqlOf, type MikroORM, type QueryOptions, type Sql } from '@seller-api/service-kit';
import { entities } from '../../services/webhook-dispatcher/src/db/entities';
import { SCHEMA, migrations } from '../../services/webhook-dispatcher/src/db/migrations';
import {
  ACTIVE_SUBSCRIBERS_SQL,
  activeSubscribers,
} from '../../services/webhook-dispatcher/src/db/delivery-writes';
import {
  claimDeliveries,
  claimQuery,
  handBackDeliveries,
  outcomeQuery,
  recordOutcomes,
} from '../../services/webhook-dispatcher/src/db/delivery-claims';
import { openMigrated } from '../support/database';
import { testEnv } from '../support/env';

/*
 * The plans of the dispatcher's hot statements as its tables grow from nothing, as they do after a new
 * deployment. A plan kept from the first runs on a small table read the whole table at every claim
 * once it had grown (db/delivery-claims.ts, CLAIM_SQL).
 */
const env = testEnv();
let orm: MikroORM;
let pool: Pool;

const claimRequest = {
  saturated: [],
  windowSize: 100,
  unlisted: 8,
  budgets: new Map<string, number>(),
  limit: 50,
  since: '-infinity',
};
const claim = () => claimQuery(claimRequest);

beforeAll(async () => {
  // A new database each run: deliveries are never deleted, and the table must start empty.
  const admin = new URL(env.DATABASE_URL as string);
  const name = decodeURIComponent(admin.pathname.slice(1));
  admin.pathname = '/postgres';
  const client = new Client({ connectionString: admin.toString() });
  await client.connect();
  await client.query(`drop database if exists "${name}" with (force)`);
  await client.end();
  orm = await openMigrated(env, { schema: SCHEMA, entities, migrations, logger: pino({ level: 'silent' }) });
  pool = new Pool({ connectionString: env.DATABASE_URL as string, max: 3 });
});
afterAll(async () => {
  await pool?.end();
  await orm?.close();
});

/** Grows webhooks.deliveries by `count` delivered postbacks. */
async function grow(count: number) {
  await pool.query(
    `insert into webhooks.deliveries (id, event_id, webhook_id, order_id, seller_id, environment, event, url,
       signed, payload, occurred_at, status, attempts, created_at, delivered_at)
     select gen_random_uuid(), 'evt_' || md5(random()::text || n), null, gen_random_uuid(), $1, 'test',
       'order.created', 'http://127.0.0.1:1/postback', false, '{}', now(), 'delivered', 1, now(), now()
       from generate_series(1, $2::int) n`,
    [randomUUID(), count],
  );
}

/** The plan of `query` as it would run now on one of the sender's connections. */
async function planOf(query: { text: string; values?: unknown[] }) {
  const { rows } = await pool.query<{ 'QUERY PLAN': string }>({ ...query, text: `explain ${query.text}` });
  return rows.map((r) => r['QUERY PLAN']).join('\n');
}

test('the claim and the outcome batch are planned at every run: once the table has grown, by its primary key', async () => {
  // The sender asks for them to be planned at every run: a prepared statement would keep its first
  // plans. Here they are sent unnamed, which is the same.
  const asked: Array<QueryOptions | undefined> = [];
  const recording = {
    query: (_text: string, _values?: unknown[], options?: QueryOptions) => {
      asked.push(options);
      return Promise.resolve([]);
    },
  } as unknown as Sql;
  await claimDeliveries(recording, claimRequest);
  await recordOutcomes(recording, []);
  expect(asked).toEqual([{ planEachRun: true }, { planEachRun: true }]);
  // Their first runs, on an empty table, as after a deployment.
  for (let i = 0; i < 6; i += 1) {
    await pool.query(claim());
    await pool.query(outcomeQuery([]));
  }
  await grow(30_000);
  const claimPlan = await planOf(claim());
  expect(claimPlan).toMatch(/Index Cond: \(id = picked\.id\)/);
  expect(claimPlan).toMatch(/Index Cond: \(id = ranked\.id\)/);
  expect(claimPlan).not.toMatch(/Seq Scan on deliveries/);
  const outcomePlan = await planOf(outcomeQuery([]));
  expect(outcomePlan).toMatch(
    /Index Scan using deliveries_p\d+_pkey on deliveries_p\d+ d(_\d+)? .*\n\s+Index Cond: \(id = v(_\d+)?\.id\)/,
  );
  expect(outcomePlan).not.toMatch(/Seq Scan on deliveries/);
});

test('a burst after an analysis that saw no pending delivery: the claim locks each row by its primary key', async () => {
  // Autovacuum analyzes the table while everything is delivered; then a backlog builds up (a burst of
  // orders, a destination that was down). Planned from those statistics, the claim's lock of each
  // candidate once read the due index from its start (it expected one pending row) and filtered on
  // the id: a whole backlog read per row claimed, seconds per claim. (One host per delivery: a host's
  // URLs share its budget.)
  await grow(5_000);
  await pool.query('analyze webhooks.deliveries');
  await pool.query(
    `insert into webhooks.deliveries (id, event_id, webhook_id, order_id, seller_id, environment, event, url,
       signed, payload, occurred_at, status, next_attempt_at, created_at)
     select gen_random_uuid(), 'evt_' || md5(random()::text || n), null, gen_random_uuid(), gen_random_uuid(),
       'test', 'order.created', 'http://burst-' || n || '.example:1/burst', false, '{}', now(), 'pending', now(), now()
       from generate_series(1, 5000) n`,
  );
  const plan = await planOf(claim());
  expect(plan).toMatch(
    /Index Scan using deliveries_p\d+_pkey on deliveries_p\d+ d(_\d+)? .*\n\s+Index Cond: \(id = ranked\.id\)/,
  );
  expect(plan).not.toMatch(/deliveries_p\d+_next_attempt_at_idx/);
  const { rows } = await pool.query<{ id: string }>(claim());
  expect(rows).toHaveLength(50);
});

test.each(['due_window', 'due_window_by_destination'])(
  "%s's kept plan, made on a table never analyzed, reads the due index in order",
  async (fn) => {
    // Its statements keep their plan for the connection (Migration20261212DueWindowCachedPlan): the
    // generic one, forced here, is the plan shown (auto_explain, as notices) for the statement inside.
    const client = new Client({ connectionString: env.DATABASE_URL });
    const notices: string[] = [];
    client.on('notice', (notice) => notices.push(notice.message ?? ''));
    await client.connect();
    try {
      await client.query(`load 'auto_explain'`);
      await client.query(`set auto_explain.log_min_duration = 0`);
      await client.query(`set auto_explain.log_nested_statements = on`);
      await client.query(`set auto_explain.log_level = notice`);
      await client.query(`set plan_cache_mode = force_generic_plan`);
      await client.query(`select count(*) from webhooks.${fn}('{}', 100, '-infinity')`);
      // With a saturated destination too: its test must not turn the read into another plan.
      await client.query(`select count(*) from webhooks.${fn}('{http://x:80}', 100, '-infinity')`);
    } finally {
      await client.end();
    }
    const inner = notices.filter((n) => n.includes('from webhooks.deliveries d'));
    expect(inner).toHaveLength(2);
    for (const plan of inner) {
      expect(plan).toMatch(/Index Scan using deliveries_p\d+_next_attempt_at_idx on deliveries_p\d+ d/);
      expect(plan).not.toMatch(/Seq Scan on deliveries/);
    }
  },
);

test("the intake's lookup of subscribers, planned at every run, finds a key's webhooks by index once there are many", async () => {
  // Sent as planned at every run.
  const asked: Array<QueryOptions | undefined> = [];
  const recording = {
    query: (_text: string, _values?: unknown[], options?: QueryOptions) => {
      asked.push(options);
      return Promise.resolve([]);
    },
  } as unknown as Sql;
  await activeSubscribers(recording, [
    { sellerId: randomUUID(), environment: 'test', event: 'order.created' },
  ]);
  expect(asked).toEqual([{ planEachRun: true }]);
  await pool.query(
    `insert into webhooks.webhooks (id, seller_id, environment, url, event, status, secret, created_at, updated_at)
     select gen_random_uuid(), gen_random_uuid(), 'test', 'https://example.com/hooks/' || n, 'order.created',
       'ACTIVE', 'whsec_test', now(), now()
       from generate_series(1, 20000) n`,
  );
  const plan = await planOf({
    text: ACTIVE_SUBSCRIBERS_SQL,
    values: [[randomUUID()], ['test'], ['order.created']],
  });
  expect(plan).toMatch(/Index Scan using webhooks_subscribers_idx on webhooks w/);
  expect(plan).toMatch(/Index Cond: \(\(seller_id = k\.seller_id\)/);
  expect(plan).not.toMatch(/Hash Join/);
});

test("a late hand-back clears its own claim's lease only, never a later claim's", async () => {
  const sql = sqlOf(orm);
  const id = randomUUID();
  await pool.query(
    `insert into webhooks.deliveries (id, event_id, webhook_id, order_id, seller_id, environment, event, url,
       signed, payload, occurred_at, status, attempts, created_at, next_attempt_at)
     values ($1::uuid, 'evt_' || md5($1::text), null, gen_random_uuid(), gen_random_uuid(), 'test', 'order.created',
       'http://127.0.0.1:1/lease', false, '{}', now(), 'pending', 0, now(), now() - interval '1 second')`,
    [id],
  );
  const claimedBy = async () => {
    const { claimed } = await claimDeliveries(sql, { ...claimRequest, since: '-infinity' });
    const mine = claimed.find((d) => d.id === id);
    if (!mine) throw new Error('the delivery was not claimed');
    return mine;
  };
  const leaseNow = async () =>
    (
      await pool.query<{ lease: string | null }>(
        `select lease_until::text as lease from webhooks.deliveries where id = $1`,
        [id],
      )
    ).rows[0]?.lease;
  const first = await claimedBy();
  // Its process stalls past the lease; another replica claims the delivery again.
  await pool.query(`update webhooks.deliveries set lease_until = now() - interval '1 second' where id = $1`, [
    id,
  ]);
  const second = await claimedBy();
  expect(second.lease).not.toBe(first.lease);
  // The first process comes back and hands its claim back: the second claim's lease stays.
  await handBackDeliveries(sql, [first]);
  expect(await leaseNow()).toBe(second.lease);
  // The second's own hand-back clears it: due again now.
  await handBackDeliveries(sql, [second]);
  expect(await leaseNow()).toBeNull();
});
