// `npm run bench:events`: what the number of stored events costs a page of the Events API. The webhook
// dispatcher answers `GET /events/` from webhooks.events (db/events.ts, listEvents), partitioned by day
// of occurred_at, whose indexes are meant to keep a page's cost flat however many events the table and
// a seller have; this bench checks it. It makes two databases of its own, both migrated with the
// dispatcher's migrations from its build, their partitions made by the retention job (keepHistory, as at
// the dispatcher's start) before loading: one holds EVENTS_SMALL events in all, the other EVENTS_LARGE.
// In each, EVENTS_SHARE % of them (10 % by default) are the measured seller's in the `test`
// environment, each with one delivery (the page looks each up by its id); the rest belong to 99 other
// sellers and to the measured seller's `live` environment, with a small `data` (no page reads them).
// Events are spread evenly over the last 29 days (29 daily partitions), in the order they are loaded,
// over the 17 names, four to an order for the order and payment events. Loading is server-side
// (generate_series, LOAD_BATCH events a statement); 10,000,000 events took 6.5 minutes on a 2-core
// VM, the whole bench about 9.
//
// It measures listEvents from the build, LIST_READS sequential reads per query, round and database
// after a warm-up, for five queries of 20 events: the first page; two names
// (`type=order.paid,payment.approved`); a one-day window (`created_gte`/`created_lte`); one order
// (`order_uuid`); and a page deep in the list (the cursor of the event 90 % of the way down). The two
// databases are read in alternating rounds (BENCH_ROUNDS; which one goes first alternates too), so that
// the machine's drift falls on both. It prints p50 and p99 of each query at both sizes and their ratio;
// the target is a p99 at EVENTS_LARGE within twice the p99 at EVENTS_SMALL, for every query. The result
// is a report: exit code 0 whether the target passes or not.
//
// Environment: EVENTS_SMALL (events in the table, default 10000), EVENTS_LARGE (default 10000000),
// EVENTS_SHARE (the measured seller's percentage, default 10), BENCH_ROUNDS (default 3), LIST_READS
// (per query, round and database, default 500), BENCH_KEEP=1 (keep the databases afterwards, to read a
// plan; drop them then: the large one takes about 5 GB). The plumbing is in ../lib.mjs.
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  ROOT,
  dropDatabase,
  intFromEnv,
  runBench,
  printSizeComparison,
  printSizeVerdicts,
  exitUnlessBuilt,
} from '../lib.mjs';

const require = createRequire(import.meta.url);
const pg = require('pg');

const TARGET_MAX_P99_RATIO = 2; // a page's p99 at EVENTS_LARGE at most twice its p99 at EVENTS_SMALL.
const SMALL = intFromEnv('EVENTS_SMALL', 10_000, 100_000_000);
const LARGE = intFromEnv('EVENTS_LARGE', 10_000_000, 100_000_000);
const SHARE = intFromEnv('EVENTS_SHARE', 10, 100);
/** BENCH_KEEP=1 leaves the databases in place, to look at a plan (drop them afterwards: they are large). */
const KEEP = process.env.BENCH_KEEP === '1';
const ROUNDS = intFromEnv('BENCH_ROUNDS', 3, 99);
const READS = intFromEnv('LIST_READS', 500, 1_000_000);
const READ_WARMUP = 100;
const PAGE = 20;
/** Events per loading statement (and transaction). */
const LOAD_BATCH = 100_000;
const OTHER_SELLERS = 99;
/** Events and deliveries kept, in days: the dispatcher's defaults. */
const RETENTION = { events: 30, deliveries: 90 };
/** The days the events are spread over, up to now: within the events' retention. */
const SPREAD_DAYS = 29;

const DATABASES = { small: 'seller_api_bench_events_small', large: 'seller_api_bench_events_large' };
const urlOf = (name) => `postgres://postgres@127.0.0.1:5432/${name}`;

const dist = (file) => path.join(ROOT, 'services/webhook-dispatcher/dist', file);
exitUnlessBuilt([dist('domain/events.js'), path.join(ROOT, 'packages/service-kit/dist/index.js')]);
const kit = require(path.join(ROOT, 'packages/service-kit/dist/index.js'));
const { EVENT_NAMES, EVENT_ID_PATTERN } = require(path.join(ROOT, 'packages/contracts/dist/index.js'));
const { SCHEMA, migrations } = require(dist('db/migrations.js'));
const { entities } = require(dist('db/entities.js'));
const { listEvents } = require(dist('db/events.js'));
const { keepHistory } = require(dist('jobs/history-retention.js'));

/** The measured seller, the same in both databases. */
const SELLER = '5e11e400-0000-4000-8000-000000000001';
const SCOPE = { sellerId: SELLER, environment: 'test', sellerName: null };

/** An order.paid `data` as the orders service writes it (masked), about 600 bytes as JSON. */
const ORDER_DATA = {
  order: {
    uuid: '00000000-0000-0000-0000-000000000000',
    status: 'PAID',
    method: 'PIX',
    gross_amount: 15000,
    shipping_amount: 1500,
    discount_amount: 0,
    fee_amount: 599,
    net_amount: 14401,
    created_at: '2026-11-20T12:00:00.000Z',
    paid_at: '2026-11-20T12:01:10.000Z',
  },
  seller: { name: 'Loja Exemplo Ltda' },
  customer: {
    name: 'Maria da Silva',
    tax_id: '529.***.***-25',
    tax_id_type: 'CPF',
    email: 'mar********@example.com',
  },
  items: [
    {
      product_uuid: '3f1c7a52-1d2e-4b8a-9c61-2f4d5e6a7b8c',
      product_name: 'Curso de fotografia',
      quantity: 1,
      unit_amount: 13500,
      line_total_amount: 13500,
    },
  ],
};
const WITHDRAWAL_DATA = {
  withdrawal: {
    uuid: '00000000-0000-0000-0000-000000000000',
    status: 'PAID',
    gross_amount: 50000,
    requested_at: '2026-11-20T12:00:00.000Z',
    decided_at: '2026-11-20T12:05:00.000Z',
  },
  bank_data: { pix_key: 'joh*****@example.com', pix_key_type: 'email' },
  seller: { name: 'Loja Exemplo Ltda' },
};
/** Names 1 to 11 of the catalogue carry an order; the 6 withdrawal events do not. */
const ORDER_EVENTS = 11;

/**
 * Events `from` to `to` (numbers of a series of `count`) for `who`: `measured` (the seller's `test`
 * events, each with one delivery) or `others` (99 other sellers, both environments, and the measured
 * seller's `live` events). Ids and orders are derived from the number and `salt`, so a run is
 * repeatable; the n-th event occurred n / count of the way from SPREAD_DAYS ago to now (a batch
 * fills one or two daily partitions, whose indexes stay in memory while it does).
 */
async function loadEvents(client, who, from, to, count, salt) {
  const measured = who === 'measured';
  await client.query('begin');
  await client.query(
    `with g as (
       select n,
              ($4::text[])[1 + n % 17] as event,
              n % 17 < ${ORDER_EVENTS} as of_order,
              md5($3 || 'order' || (n / 4))::uuid as order_id,
              md5($3 || 'delivery' || n)::uuid as delivery_id,
              'evt_' || substr(md5($3 || 'event' || n), 1, 24) as id,
              now() - make_interval(secs => ${SPREAD_DAYS * 86400}.0 * ($8::int - n) / $8::int
                                            + (hashint4(n) & 1023) / 1000.0) as occurred_at,
              case when ${measured} then $5::uuid
                   when n % 10 = 0 then $5::uuid
                   else md5($3 || 'seller' || n % ${OTHER_SELLERS})::uuid end as seller_id,
              case when ${measured} then 'test'
                   when n % 10 = 0 then 'live'
                   when n % 2 = 0 then 'test' else 'live' end as environment
         from generate_series($1::int, $2::int) as n),
     delivered as (
       insert into webhooks.deliveries
         (id, event_id, webhook_id, order_id, seller_id, environment, event, url, signed, payload,
          occurred_at, status, attempts, created_at, delivered_at)
       select delivery_id, 'evt_' || substr(md5($3 || 'header' || n), 1, 24), null, order_id, seller_id,
              environment, event, 'https://example.com/postback', false, '{}', occurred_at, 'delivered', 1,
              occurred_at, occurred_at
         from g where ${measured})
     insert into webhooks.events (id, seller_id, environment, event, order_id, occurred_at, data, delivery_ids)
     select id, seller_id, environment, event, case when of_order then order_id end, occurred_at,
            case when not ${measured} then '{"filler":true}'::jsonb
                 when of_order then jsonb_set($6::jsonb, '{order,uuid}', to_jsonb(order_id::text))
                 else jsonb_set($7::jsonb, '{withdrawal,uuid}', to_jsonb(md5($3 || 'w' || n)::uuid::text)) end,
            case when ${measured} then array[delivery_id] else '{}' end
       from g`,
    [from, to, salt, EVENT_NAMES, SELLER, JSON.stringify(ORDER_DATA), JSON.stringify(WITHDRAWAL_DATA), count],
  );
  await client.query('commit');
}

/** The measured seller's share of `total` events (at least one). */
const measuredOf = (total) => Math.max(1, Math.round((total * SHARE) / 100));

/** `total` events: the measured seller's share, then the others', LOAD_BATCH at a time. */
async function load(client, total, label) {
  // Loaded rows are lost with the database if the server stops: no need to wait for their WAL.
  await client.query('set synchronous_commit = off');
  const counts = { measured: measuredOf(total), others: total - measuredOf(total) };
  for (const who of ['measured', 'others']) {
    const count = counts[who];
    for (let from = 1; from <= count; from += LOAD_BATCH) {
      const to = Math.min(count, from + LOAD_BATCH - 1);
      process.stderr.write(`  ${label}: ${who} events ${from} to ${to} of ${count}...\n`);
      await loadEvents(client, who, from, to, count, `${label}-${who}`);
    }
  }
  // Autovacuum may be off (it is on the bench VMs): analysed as production's autovacuum would.
  await client.query('analyze webhooks.events, webhooks.deliveries');
}

/** The five queries, with what they need from the database: an order of the seller, a deep cursor. */
async function queriesOf(client, count) {
  const { rows: orders } = await client.query(
    `select order_id from webhooks.events
      where seller_id = $1 and environment = 'test' and order_id is not null limit 1`,
    [SELLER],
  );
  const { rows: deep } = await client.query(
    `select id, occurred_at from webhooks.events where seller_id = $1 and environment = 'test'
      order by occurred_at desc, id desc offset $2 limit 1`,
    [SELLER, Math.floor(count * 0.9)],
  );
  const { rows: day } = await client.query(
    `select min(occurred_at) + interval '14 days' as gte from webhooks.events where seller_id = $1`,
    [SELLER],
  );
  const gte = new Date(day[0].gte);
  return [
    ['first page', { limit: PAGE }],
    ['two names', { limit: PAGE, type: ['order.paid', 'payment.approved'] }],
    [
      'one-day window',
      {
        limit: PAGE,
        created_gte: gte.toISOString(),
        created_lte: new Date(gte.getTime() + 86_400_000).toISOString(),
      },
    ],
    ['one order', { limit: PAGE, order_uuid: orders[0].order_id }],
    [
      'deep cursor (90 %)',
      {
        limit: PAGE,
        cursor: kit.encodeCursor({ createdAt: new Date(deep[0].occurred_at), id: deep[0].id }),
      },
    ],
  ];
}

/** READS sequential pages of `query`, after READ_WARMUP unmeasured ones; every page must be full. */
async function reads(sql, name, query) {
  for (let i = 0; i < READ_WARMUP; i += 1) await listEvents(sql, SCOPE, query, RETENTION.events);
  const latencies = [];
  for (let i = 0; i < READS; i += 1) {
    const from = performance.now();
    const page = await listEvents(sql, SCOPE, query, RETENTION.events);
    latencies.push(performance.now() - from);
    if (page.results.length === 0 || !page.results.every((e) => EVENT_ID_PATTERN.test(e.id))) {
      throw new Error(`${name}: an empty or malformed page`);
    }
  }
  return latencies;
}

async function openBenchDatabase(name, logger) {
  await dropDatabase(name);
  await kit.ensureDatabase(urlOf(name));
  const orm = await kit.openDatabase({ url: urlOf(name), schema: SCHEMA, entities, migrations, logger });
  const client = new pg.Client({ connectionString: urlOf(name), application_name: 'bench' });
  try {
    await kit.migrate(orm, SCHEMA);
    // A new database has the current period's partitions only: the retention job makes the rest.
    await keepHistory({ sql: kit.sqlOf(orm), logger }, RETENTION, new Date());
    await client.connect();
  } catch (err) {
    await orm.close(true);
    throw err;
  }
  return { name, orm, sql: kit.sqlOf(orm), client };
}

async function main() {
  const logger = kit.createLogger('bench-events', 'warn');
  const dbs = {};
  const sizes = { small: SMALL, large: LARGE };
  try {
    const loadSeconds = {};
    for (const which of ['small', 'large']) {
      dbs[which] = await openBenchDatabase(DATABASES[which], logger);
      console.error(`migrated ${DATABASES[which]}; loading ${sizes[which]} events...`);
      const started = performance.now();
      await load(dbs[which].client, sizes[which], which);
      loadSeconds[which] = (performance.now() - started) / 1000;
    }
    const queries = {
      small: await queriesOf(dbs.small.client, measuredOf(SMALL)),
      large: await queriesOf(dbs.large.client, measuredOf(LARGE)),
    };
    const names = queries.small.map(([name]) => name);
    const latencies = Object.fromEntries(names.map((n) => [n, { small: [], large: [] }]));
    for (let round = 0; round < ROUNDS; round += 1) {
      const order = round % 2 === 0 ? ['small', 'large'] : ['large', 'small'];
      for (const which of order) {
        console.error(`round ${round + 1}/${ROUNDS}: ${which}...`);
        for (const [name, query] of queries[which]) {
          latencies[name][which].push(...(await reads(dbs[which].sql, name, query)));
        }
      }
    }

    const fmt = (n) => n.toLocaleString('en-US');
    console.log(
      `\nGET /events/ pages of ${PAGE} (listEvents) with ${fmt(SMALL)} and ${fmt(LARGE)} events in the table ` +
        `(the measured seller's: ${fmt(measuredOf(SMALL))} and ${fmt(measuredOf(LARGE))}; the rest other ` +
        `sellers' and its live environment's), over ${SPREAD_DAYS} daily partitions - ${ROUNDS} rounds of ` +
        `${READS} sequential reads per query; ${os.availableParallelism()} CPU cores shared with the bench\n`,
    );
    const verdicts = printSizeComparison(latencies, names, sizes);
    console.log(
      `\nloading took ${loadSeconds.small.toFixed(0)} s and ${loadSeconds.large.toFixed(0)} s ` +
        `(${fmt(SMALL)} and ${fmt(LARGE)} events)\n`,
    );
    printSizeVerdicts(verdicts, sizes, TARGET_MAX_P99_RATIO);
  } finally {
    for (const { name, orm, client } of Object.values(dbs)) {
      await client.end().catch(() => undefined);
      await orm.close(true).catch(() => undefined);
      if (!KEEP) await dropDatabase(name).catch(() => undefined);
    }
  }
}

await runBench(main);
