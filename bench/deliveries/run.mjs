// `npm run bench:deliveries`: what the number of stored deliveries costs a page of a webhook's
// deliveries (`GET /config/webhooks/{id}/deliveries/`) and of an order's postback deliveries
// (`GET /sellers/orders/{uuid}/postback-deliveries/`). The webhook dispatcher answers both from
// webhooks.deliveries, partitioned by month of created_at, each delivery with its attempts read from
// webhooks.delivery_attempts (db/deliveries.ts, listDeliveries and listPostbackDeliveries); their
// indexes are meant to keep a page's cost flat however many deliveries the table holds. It makes two
// databases of its own, both migrated with the dispatcher's migrations from its build, their partitions
// made by the retention job (keepHistory, as at the dispatcher's start) before loading: one holds
// DELIVERIES_SMALL deliveries in all, the other DELIVERIES_LARGE, made evenly over the last 89 days
// (four monthly partitions). A tenth are the measured webhook's (2 % of them dead), a tenth the
// measured seller's order postbacks (four to an order), the rest other sellers' webhooks' (1,000) and
// postbacks; every delivery has its attempts (one or two for the measured seller's, one for the rest:
// about 1.1 per delivery). Loading is server-side (./load.mjs); 10,000,000 deliveries take about
// 6.5 minutes on a 2-core VM (390 s), the whole bench about 9.
//
// It measures the dispatcher's own functions from its build, LIST_READS sequential reads per query,
// round and database after a warm-up, for four pages of 20: the webhook's first page (after its
// getWebhook, on a fresh EntityManager as a request has), its `status=dead` page, a page deep in its
// list (the cursor of the delivery 90 % of the way down), and one order's postback deliveries. The
// databases are read in alternating rounds (BENCH_ROUNDS; which one goes first alternates too), so that
// the machine's drift falls on both. It prints p50 and p99 of each query at both sizes and their ratio;
// the target is a p99 at DELIVERIES_LARGE within twice the p99 at DELIVERIES_SMALL, for every query. The
// result is a report: exit code 0 whether the target passes or not.
//
// Environment: DELIVERIES_SMALL (deliveries in the table, default 10000), DELIVERIES_LARGE (default
// 10000000), BENCH_ROUNDS (default 3), LIST_READS (per query, round and database, default 500),
// BENCH_KEEP=1 (keep the databases afterwards, to read a plan; drop them then: the large one takes
// about 11 GB). The plumbing is in ../lib.mjs.
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

const dist = (file) => path.join(ROOT, 'services/webhook-dispatcher/dist', file);
exitUnlessBuilt([dist('jobs/history-retention.js'), path.join(ROOT, 'packages/service-kit/dist/index.js')]);
const { SCOPE, WEBHOOK, loadDeliveries, openDeliveriesDatabase } = await import('./load.mjs');
const kit = require(path.join(ROOT, 'packages/service-kit/dist/index.js'));
const { listDeliveries, listPostbackDeliveries } = require(dist('db/deliveries.js'));

const TARGET_MAX_P99_RATIO = 2; // a page's p99 at DELIVERIES_LARGE at most twice its p99 at DELIVERIES_SMALL.
const SMALL = intFromEnv('DELIVERIES_SMALL', 10_000, 100_000_000);
const LARGE = intFromEnv('DELIVERIES_LARGE', 10_000_000, 100_000_000);
const ROUNDS = intFromEnv('BENCH_ROUNDS', 3, 99);
const READS = intFromEnv('LIST_READS', 500, 1_000_000);
const KEEP = process.env.BENCH_KEEP === '1';
const READ_WARMUP = 100;
const PAGE = 20;
/** Deliveries kept, in days: the dispatcher's default; the deliveries are made over SPREAD_DAYS. */
const RETENTION = { events: 30, deliveries: 90 };
const SPREAD_DAYS = 89;

const DATABASES = { small: 'seller_api_bench_deliveries_small', large: 'seller_api_bench_deliveries_large' };

/** The four pages, with what they need from the database: the measured webhook's deep cursor, an order. */
async function queriesOf(db) {
  const { rows: counted } = await db.client.query(
    `select count(*)::int as n from webhooks.deliveries where webhook_id = $1`,
    [WEBHOOK],
  );
  const { rows: deep } = await db.client.query(
    `select id, created_at from webhooks.deliveries where webhook_id = $1
      order by created_at desc, id desc offset $2 limit 1`,
    [WEBHOOK, Math.floor(counted[0].n * 0.9)],
  );
  // An order of the measured seller's from the middle of the period.
  const { rows: orders } = await db.client.query(
    `select order_id from webhooks.deliveries
      where webhook_id is null and seller_id = $1 and environment = 'test'
        and created_at >= now() - interval '45 days' order by created_at limit 1`,
    [SCOPE.sellerId],
  );
  const cursor = kit.encodeCursor({ createdAt: new Date(deep[0].created_at), id: deep[0].id });
  const webhookPage = (query) => () =>
    listDeliveries(db.orm.em.fork(), db.sql, SCOPE, WEBHOOK, query, RETENTION.deliveries);
  return {
    measured: counted[0].n,
    queries: [
      ['webhook, first page', webhookPage({ limit: PAGE })],
      ['webhook, status=dead', webhookPage({ limit: PAGE, status: 'dead' })],
      ['webhook, deep cursor (90 %)', webhookPage({ limit: PAGE, cursor })],
      [
        'order postbacks',
        () =>
          listPostbackDeliveries(db.sql, SCOPE, orders[0].order_id, { limit: PAGE }, RETENTION.deliveries),
      ],
    ],
  };
}

/** READS sequential pages, after READ_WARMUP unmeasured ones; every page must list deliveries with attempts. */
async function reads(name, page) {
  for (let i = 0; i < READ_WARMUP; i += 1) await page();
  const latencies = [];
  for (let i = 0; i < READS; i += 1) {
    const from = performance.now();
    const list = await page();
    latencies.push(performance.now() - from);
    if (list.results.length === 0 || !list.results.every((d) => d.attempts.length > 0)) {
      throw new Error(`${name}: an empty page, or a delivery without its attempts`);
    }
  }
  return latencies;
}

async function main() {
  const logger = kit.createLogger('bench-deliveries', 'warn');
  const dbs = {};
  const sizes = { small: SMALL, large: LARGE };
  try {
    const loadSeconds = {};
    for (const which of ['small', 'large']) {
      dbs[which] = await openDeliveriesDatabase(DATABASES[which], logger, RETENTION, { dropDatabase, pg });
      console.error(`migrated ${DATABASES[which]}; loading ${sizes[which]} deliveries...`);
      const started = performance.now();
      const end = new Date();
      await loadDeliveries(dbs[which].client, {
        total: sizes[which],
        start: new Date(end.getTime() - SPREAD_DAYS * 86_400_000),
        end,
        salt: which,
        label: which,
      });
      loadSeconds[which] = (performance.now() - started) / 1000;
    }
    const of = { small: await queriesOf(dbs.small), large: await queriesOf(dbs.large) };
    const names = of.small.queries.map(([name]) => name);
    const latencies = Object.fromEntries(names.map((n) => [n, { small: [], large: [] }]));
    for (let round = 0; round < ROUNDS; round += 1) {
      const order = round % 2 === 0 ? ['small', 'large'] : ['large', 'small'];
      for (const which of order) {
        console.error(`round ${round + 1}/${ROUNDS}: ${which}...`);
        for (const [name, page] of of[which].queries)
          latencies[name][which].push(...(await reads(name, page)));
      }
    }

    const fmt = (n) => n.toLocaleString('en-US');
    console.log(
      `\nDelivery pages of ${PAGE} (listDeliveries, listPostbackDeliveries) with ${fmt(SMALL)} and ` +
        `${fmt(LARGE)} deliveries in the table (the measured webhook's: ${fmt(of.small.measured)} and ` +
        `${fmt(of.large.measured)}), over ${SPREAD_DAYS} days in monthly partitions - ${ROUNDS} rounds of ` +
        `${READS} sequential reads per query; ${os.availableParallelism()} CPU cores shared with the bench\n`,
    );
    const verdicts = printSizeComparison(latencies, names, sizes);
    console.log(
      `\nloading took ${loadSeconds.small.toFixed(0)} s and ${loadSeconds.large.toFixed(0)} s ` +
        `(${fmt(SMALL)} and ${fmt(LARGE)} deliveries, with their attempts)\n`,
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
