// `npm run bench:retention`: what dropping a month of deliveries costs the dispatcher's work meanwhile.
// The retention job (jobs/history-retention.ts, keepHistory) drops the history tables' expired
// partitions whole: each detached concurrently, then dropped (db/partitions.ts). This bench checks that
// doing so under load stops no statement for long. It makes a database of its own, migrated with the
// dispatcher's migrations from its build, whose deliveries table holds a month partition of
// RETENTION_ROWS deliveries (10,000,000 by default, with their attempts: ../deliveries/load.mjs) past the
// 90-day retention (the last month that ends before it), the current month CURRENT_ROWS, and whose
// events table holds EVENTS_PAST events over the 30 days before the events' 30-day retention (30 daily
// partitions, all past it).
//
// Then the dispatcher's statements run in three loops, from its build, each waiting LOOP_PAUSE_MS
// between runs: the fan-out (db/delivery-writes.ts, storeFanOut: FANOUT_BATCH messages, each one event
// and its delivery to the measured webhook), the list (db/deliveries.ts, listDeliveries: the measured
// webhook's first page, after getWebhook), and the sender's claim and outcome
// (db/delivery-claims.ts, claimDeliveries then recordOutcomes of what it claimed, as delivered). After
// BASELINE_SECONDS of them, keepHistory runs once, on a connection of its own, at the present with the
// dispatcher's default retention (30 days of events, 90 of deliveries), and the loops go on
// AFTER_SECONDS more. Every 10 ms a sampler reads pg_stat_activity for the database's backends waiting
// on a lock (wait_event_type `Lock`), the retention's own left out, and pg_locks for the locks the
// retention holds that stop the workload's statements (SHARE or stronger on webhooks.webhooks and the
// history tables; deliveries have no foreign key to webhooks.webhooks, whose triggers a drop would
// otherwise remove under an ACCESS EXCLUSIVE lock).
//
// It prints the rows the run dropped, its duration and its statements' longest, each loop's p50 and p99
// before the run and its longest statement during it, the longest wait on a lock any backend of the
// workload was seen in, and the longest of those locks held. Target: the workload feels under 1 s of lock
// time (each loop's longest statement during the run, the longest wait, the longest lock held). The
// result is a report: exit code 0 either way.
// With the defaults it takes about 9 minutes on a 2-core VM, 7.5 of them loading.
//
// Environment: RETENTION_ROWS (default 10000000), CURRENT_ROWS (default 100000), EVENTS_PAST (default
// 1000000), BASELINE_SECONDS (default 30), AFTER_SECONDS (default 5), LOOP_PAUSE_MS (default 10),
// FANOUT_BATCH (default 20), BENCH_KEEP=1 (keep the database afterwards; drop it then). The plumbing is in
// ../lib.mjs.
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ROOT,
  dropDatabase,
  intFromEnv,
  percentile,
  printTable,
  runBench,
  exitUnlessBuilt,
} from '../lib.mjs';

const require = createRequire(import.meta.url);
const pg = require('pg');

const dist = (file) => path.join(ROOT, 'services/webhook-dispatcher/dist', file);
exitUnlessBuilt([dist('jobs/history-retention.js'), path.join(ROOT, 'packages/service-kit/dist/index.js')]);
const {
  SCHEMA,
  SCOPE,
  SELLER,
  WEBHOOK,
  entities,
  keepHistory,
  loadDeliveries,
  migrations,
  openDeliveriesDatabase,
} = await import('./../deliveries/load.mjs');
const kit = require(path.join(ROOT, 'packages/service-kit/dist/index.js'));
const { listDeliveries } = require(dist('db/deliveries.js'));
const { storeFanOut } = require(dist('db/delivery-writes.js'));
const { claimDeliveries, claimWindowSize, recordOutcomes } = require(dist('db/delivery-claims.js'));
const { periodStart, addPeriods, retentionHorizon } = require(dist('domain/partitions.js'));

const TARGET_MAX_LOCK_MS = 1000;
const RETENTION_ROWS = intFromEnv('RETENTION_ROWS', 10_000_000, 100_000_000);
const CURRENT_ROWS = intFromEnv('CURRENT_ROWS', 100_000, 100_000_000);
const EVENTS_PAST = intFromEnv('EVENTS_PAST', 1_000_000, 100_000_000);
const BASELINE_SECONDS = intFromEnv('BASELINE_SECONDS', 30, 3600);
const AFTER_SECONDS = intFromEnv('AFTER_SECONDS', 5, 3600);
const LOOP_PAUSE_MS = intFromEnv('LOOP_PAUSE_MS', 10, 10_000);
const FANOUT_BATCH = intFromEnv('FANOUT_BATCH', 20, 1000);
const KEEP = process.env.BENCH_KEEP === '1';
const WARMUP_SECONDS = 5;
const SAMPLE_MS = 10;
const CLAIM_LIMIT = 100;
/** The dispatcher's default retention, which the run applies. */
const RETENTION = { events: 30, deliveries: 90 };
/** Enough to make every partition loaded (the expired month's and the events' days) beforehand. */
const LOADING_RETENTION = { events: 62, deliveries: 160 };

const DATABASE = 'seller_api_bench_retention';

/** `count` events of other sellers, evenly over [start, end), small, LOAD_BATCH a statement. */
async function loadPastEvents(client, count, start, end) {
  const batch = 100_000;
  for (let from = 1; from <= count; from += batch) {
    const to = Math.min(count, from + batch - 1);
    process.stderr.write(`  events ${from} to ${to} of ${count}...\n`);
    await client.query(
      `insert into webhooks.events (id, seller_id, environment, event, order_id, occurred_at, data, delivery_ids)
       select 'evt_' || substr(md5('past' || n), 1, 24), md5('seller' || n % 99)::uuid,
              case when n % 2 = 0 then 'test' else 'live' end, 'order.paid', md5('order' || n / 4)::uuid,
              $3::timestamptz + ($4::timestamptz - $3::timestamptz) * (((n - 1)::float8 + 0.5) / $5::int),
              '{"filler":true}', '{}'
         from generate_series($1::int, $2::int) as n`,
      [from, to, start, end, count],
    );
  }
  await client.query('analyze webhooks.events');
}

/** A Sql whose statements are timed into `log` ({ text, ms }). */
function timed(sql, log) {
  return {
    ...sql,
    query: async (text, values, options) => {
      const from = performance.now();
      try {
        return await sql.query(text, values, options);
      } finally {
        log.push({ text: text.replace(/\s+/g, ' ').trim(), ms: performance.now() - from });
      }
    },
  };
}

/** One loop of the workload: `step` again and again until stopped, each run's start and duration kept. */
function loop(name, step) {
  const runs = [];
  let running = true;
  const done = (async () => {
    while (running) {
      const from = performance.now();
      await step((label, ms, start) => runs.push({ label, start, ms }));
      runs.push({ label: name, start: from, ms: performance.now() - from });
      await sleep(LOOP_PAUSE_MS);
    }
  })();
  return {
    runs,
    stop: async () => {
      running = false;
      await done;
    },
  };
}

/** Times one statement of a loop into its own series (`label`). */
async function timedStep(record, label, fn) {
  const from = performance.now();
  const value = await fn();
  record(label, performance.now() - from, from);
  return value;
}

/** The fan-out of FANOUT_BATCH messages, each an order.paid event with one delivery to WEBHOOK. */
async function fanOutOnce(sql, record) {
  const messages = [];
  const deliveries = [];
  const events = [];
  const now = new Date();
  for (let i = 0; i < FANOUT_BATCH; i += 1) {
    const messageId = randomUUID();
    const eventId = `evt_${randomUUID().replace(/-/g, '').slice(0, 24)}`;
    const deliveryId = randomUUID();
    const orderId = randomUUID();
    const payload = { order: { uuid: orderId, status: 'PAID', gross_amount: 15000 } };
    messages.push(messageId);
    deliveries.push({
      messageId,
      id: deliveryId,
      eventId,
      webhookId: WEBHOOK,
      orderId,
      sellerId: SELLER,
      environment: 'test',
      event: 'order.paid',
      url: 'https://hooks.example.com/measured',
      signed: true,
      payload,
      occurredAt: now,
      traceContext: null,
    });
    events.push({
      messageId,
      id: eventId,
      sellerId: SELLER,
      environment: 'test',
      event: 'order.paid',
      orderId,
      occurredAt: now,
      data: payload,
      deliveryIds: [deliveryId],
    });
  }
  await timedStep(record, 'fan-out', () =>
    storeFanOut(sql, 'bench.retention', RETENTION.events, messages, deliveries, events),
  );
}

/** The sender's claim, then the outcomes of what it claimed: each delivered at its first attempt. */
async function claimOnce(sql, record) {
  const { claimed } = await timedStep(record, 'claim', () =>
    claimDeliveries(sql, {
      saturated: [],
      windowSize: claimWindowSize(CLAIM_LIMIT),
      unlisted: CLAIM_LIMIT,
      budgets: new Map(),
      limit: CLAIM_LIMIT,
      since: '-infinity',
    }),
  );
  if (claimed.length === 0) return;
  const startedAt = new Date().toISOString();
  await timedStep(record, 'outcome', () =>
    recordOutcomes(
      sql,
      claimed.map((d) => ({
        id: d.id,
        created_at: d.created_at,
        attempt: d.attempts + 1,
        started_at: startedAt,
        duration_ms: 40,
        response_status: 200,
        response_body: 'ok',
        error: null,
        status: 'delivered',
        next_attempt_at: null,
        delivered: true,
      })),
    ),
  );
}

/**
 * Samples every SAMPLE_MS the database's backends waiting on a lock, the retention's own
 * (`retention.pid`, known once its run starts) left out; and the locks the retention holds on the
 * tables the workload uses that stop its statements (SHARE and stronger). A wait is known by its backend
 * and statement start, a lock held by its table and mode while samples in a row see it; its length is
 * from the first sample to the last that saw it, plus one interval.
 */
function lockSampler(url, retention) {
  const client = new pg.Client({ connectionString: url, application_name: 'bench_sampler' });
  const waits = new Map();
  const held = [];
  const holding = new Map(); // table and mode -> the episode seen in the last sample
  let running = true;
  let samples = 0;
  const done = (async () => {
    await client.connect();
    while (running) {
      const { rows } = await client.query(
        `select a.pid, a.query_start, a.wait_event, left(regexp_replace(a.query, '\\s+', ' ', 'g'), 80) as query,
                (select string_agg(distinct coalesce(l.relation::regclass::text, l.locktype), ', ')
                   from pg_locks l where l.pid = a.pid and not l.granted) as waiting_for
           from pg_stat_activity a
          where a.datname = current_database() and a.wait_event_type = 'Lock'
            and a.pid <> pg_backend_pid() and a.pid is distinct from $1::int`,
        [retention.pid],
      );
      const { rows: locks } =
        retention.pid === null
          ? { rows: [] }
          : await client.query(
              `select l.relation::regclass::text as rel, l.mode from pg_locks l
                where l.pid = $1 and l.granted and l.locktype = 'relation'
                  and l.relation in ('webhooks.webhooks'::regclass, 'webhooks.deliveries'::regclass,
                                     'webhooks.delivery_attempts'::regclass, 'webhooks.events'::regclass)
                  and l.mode in ('ShareLock', 'ShareRowExclusiveLock', 'ExclusiveLock', 'AccessExclusiveLock')`,
              [retention.pid],
            );
      samples += 1;
      const at = performance.now();
      for (const row of rows) {
        const key = `${row.pid} ${new Date(row.query_start).toISOString()}`;
        const wait = waits.get(key);
        if (wait) wait.last = at;
        else waits.set(key, { ...row, first: at, last: at });
      }
      const seen = new Set();
      for (const { rel, mode } of locks) {
        const key = `${rel} ${mode}`;
        seen.add(key);
        const episode = holding.get(key);
        if (episode) episode.last = at;
        else {
          const started = { rel, mode, first: at, last: at };
          holding.set(key, started);
          held.push(started);
        }
      }
      for (const key of [...holding.keys()]) if (!seen.has(key)) holding.delete(key);
      await sleep(SAMPLE_MS);
    }
    await client.end();
  })();
  const length = (e) => ({ ...e, ms: e.last - e.first + SAMPLE_MS });
  return {
    stop: async () => {
      running = false;
      await done;
      return { samples, waits: [...waits.values()].map(length), held: held.map(length) };
    },
  };
}

const stats = (runs) => {
  const sorted = Float64Array.from(runs.map((r) => r.ms)).sort();
  return {
    n: sorted.length,
    p50: percentile(sorted, 0.5),
    p99: percentile(sorted, 0.99),
    max: sorted.at(-1) ?? NaN,
  };
};

async function main() {
  const logger = kit.createLogger('bench-retention', 'warn');
  let db = null;
  let retentionOrm = null;
  const fmt = (n) => n.toLocaleString('en-US');
  try {
    db = await openDeliveriesDatabase(DATABASE, logger, LOADING_RETENTION, { dropDatabase, pg });
    const now = new Date();
    // The last month wholly older than the deliveries' retention: the one the run drops.
    const expiredTo = periodStart('month', retentionHorizon(now, RETENTION.deliveries));
    const expiredFrom = addPeriods('month', expiredTo, -1);
    const eventsTo = retentionHorizon(now, RETENTION.events + 1);
    const eventsFrom = new Date(eventsTo.getTime() - 30 * 86_400_000);
    console.error(
      `migrated ${DATABASE}; loading ${fmt(RETENTION_ROWS)} deliveries made from ${expiredFrom.toISOString()} ` +
        `to ${expiredTo.toISOString()}, ${fmt(CURRENT_ROWS)} this month, ${fmt(EVENTS_PAST)} events...`,
    );
    const loadStarted = performance.now();
    await loadDeliveries(db.client, {
      total: RETENTION_ROWS,
      start: expiredFrom,
      // The attempts of the month's last deliveries start a minute later, in the next month: keep them in.
      end: new Date(expiredTo.getTime() - 3_600_000),
      salt: 'expired',
      label: 'expired month',
    });
    await loadDeliveries(db.client, {
      total: CURRENT_ROWS,
      start: periodStart('month', now),
      end: now,
      salt: 'current',
      label: 'current month',
    });
    await loadPastEvents(db.client, EVENTS_PAST, eventsFrom, eventsTo);
    const loadSeconds = (performance.now() - loadStarted) / 1000;

    // Every partition's rows and size, counted before the workload starts.
    const { rows: names } = await db.client.query(
      `select c.relname as name, pg_total_relation_size(c.oid) as bytes
         from pg_inherits i join pg_class c on c.oid = i.inhrelid
        where i.inhparent in ('webhooks.deliveries'::regclass, 'webhooks.delivery_attempts'::regclass,
                              'webhooks.events'::regclass)`,
    );
    const partitions = [];
    for (const { name, bytes } of names) {
      const { rows } = await db.client.query(`select count(*)::bigint as n from webhooks."${name}"`);
      partitions.push({ name, bytes: Number(bytes), rows: Number(rows[0].n) });
    }

    // The retention's own connection, so that its waits (a concurrent detach waits for the workload's
    // transactions) are told apart from the workload's.
    retentionOrm = await kit.openDatabase({
      url: db.url,
      schema: SCHEMA,
      entities,
      migrations,
      logger,
      poolMax: 1,
    });
    const retentionLog = [];
    const retentionSql = timed(kit.sqlOf(retentionOrm), retentionLog);
    const retention = { pid: null };

    console.error(`workload: ${WARMUP_SECONDS} s warm-up, ${BASELINE_SECONDS} s before the retention run...`);
    const sampler = lockSampler(db.url, retention);
    const loops = {
      'fan-out': loop('fan-out loop', (record) => fanOutOnce(db.sql, record)),
      list: loop('list loop', (record) =>
        timedStep(record, 'list', () =>
          listDeliveries(db.orm.em.fork(), db.sql, SCOPE, WEBHOOK, { limit: 20 }, RETENTION.deliveries),
        ),
      ),
      claim: loop('claim loop', (record) => claimOnce(db.sql, record)),
    };
    await sleep(WARMUP_SECONDS * 1000);
    const baselineFrom = performance.now();
    await sleep(BASELINE_SECONDS * 1000);

    console.error('retention run...');
    // Its one connection, taken just now (an idle one is closed after 30 s), serves the whole run.
    [{ pid: retention.pid }] = await retentionSql.query('select pg_backend_pid() as pid');
    retentionLog.length = 0;
    const runFrom = performance.now();
    await keepHistory({ sql: retentionSql, logger }, RETENTION, new Date());
    const runTo = performance.now();
    await sleep(AFTER_SECONDS * 1000);
    for (const l of Object.values(loops)) await l.stop();
    const { samples, waits, held } = await sampler.stop();

    const { rows: after } = await db.client.query(
      `select c.relname as name from pg_inherits i join pg_class c on c.oid = i.inhrelid
        where i.inhparent in ('webhooks.deliveries'::regclass, 'webhooks.delivery_attempts'::regclass,
                              'webhooks.events'::regclass)`,
    );
    const left = new Set(after.map((r) => r.name));
    const dropped = partitions.filter((p) => !left.has(p.name));
    const droppedDeliveries = dropped.filter((p) => p.name.startsWith('deliveries_'));
    const droppedAttempts = dropped.filter((p) => p.name.startsWith('delivery_attempts_'));
    const droppedEvents = dropped.filter((p) => p.name.startsWith('events_'));
    const sum = (list, field) => list.reduce((a, p) => a + Number(p[field]), 0);

    console.log(
      `\nRetention run (keepHistory, ${RETENTION.events} days of events, ${RETENTION.deliveries} of deliveries) ` +
        `under the dispatcher's workload; ${os.availableParallelism()} CPU cores shared with the bench\n`,
    );
    console.log(
      `dropped: ${droppedDeliveries.map((p) => p.name).join(', ') || 'no deliveries partition'} ` +
        `(${fmt(sum(droppedDeliveries, 'rows'))} deliveries), ` +
        `${droppedAttempts.map((p) => p.name).join(', ') || 'no attempts partition'} ` +
        `(${fmt(sum(droppedAttempts, 'rows'))} attempts), ${droppedEvents.length} events partitions ` +
        `(${fmt(sum(droppedEvents, 'rows'))} events); ` +
        `${(sum(dropped, 'bytes') / 2 ** 30).toFixed(1)} GiB`,
    );
    console.log(
      `retention run: ${((runTo - runFrom) / 1000).toFixed(2)} s, ${retentionLog.length} statements`,
    );
    for (const kind of ['detach partition', 'drop table']) {
      const of = retentionLog.filter((l) => l.text.includes(kind));
      const total = of.reduce((sum, l) => sum + l.ms, 0);
      const longest = of.reduce((max, l) => Math.max(max, l.ms), 0);
      console.log(
        `  ${kind}: ${of.length}, ${total.toFixed(0)} ms in all, the longest ${longest.toFixed(0)} ms`,
      );
    }
    const slowest = [...retentionLog].sort((a, b) => b.ms - a.ms).slice(0, 5);
    printTable([
      ['its longest statements', 'ms'],
      ...slowest.map((s) => [s.text.slice(0, 100), s.ms.toFixed(1)]),
    ]);

    console.log('');
    const rows = [['statement', 'runs before', 'p50 before', 'p99 before', 'runs during', 'longest during']];
    const verdicts = [];
    const labels = ['fan-out', 'list', 'claim', 'outcome'];
    for (const label of labels) {
      const all = Object.values(loops).flatMap((l) => l.runs.filter((r) => r.label === label));
      const base = stats(all.filter((r) => r.start >= baselineFrom && r.start + r.ms <= runFrom));
      // Every statement that overlapped the run.
      const during = stats(all.filter((r) => r.start + r.ms >= runFrom && r.start <= runTo));
      verdicts.push([`longest ${label} statement during the run`, during.max]);
      rows.push([
        label,
        fmt(base.n),
        `${base.p50.toFixed(2)} ms`,
        `${base.p99.toFixed(2)} ms`,
        fmt(during.n),
        `${during.max.toFixed(2)} ms`,
      ]);
    }
    printTable(rows);

    // A wait seen during the run (the sampler may see it up to one interval late), and before it.
    const byLength = waits.sort((a, b) => b.ms - a.ms);
    const during = byLength.filter((w) => w.last >= runFrom && w.first <= runTo + SAMPLE_MS);
    const before = byLength.filter((w) => w.last < runFrom && w.first >= baselineFrom);
    console.log(
      `\nlock waits of the workload seen in ${fmt(samples)} samples every ${SAMPLE_MS} ms: ${during.length} ` +
        `during the run, ${before.length} in the ${BASELINE_SECONDS} s before it ` +
        `(longest ${(before[0]?.ms ?? 0).toFixed(0)} ms); the longest during it:`,
    );
    for (const w of during.slice(0, 8)) {
      console.log(`  ${w.ms.toFixed(0)} ms  ${w.wait_event} on ${w.waiting_for ?? '?'}: ${w.query}`);
    }
    const longestWait = during[0]?.ms ?? 0;
    const strong = held.sort((a, b) => b.ms - a.ms);
    console.log(
      `\nlocks the run was seen holding that stop the workload's statements: ${strong.length}` +
        `${strong.length ? '; the longest:' : ''}`,
    );
    for (const h of strong.slice(0, 5)) console.log(`  ${h.ms.toFixed(0)} ms  ${h.mode} on ${h.rel}`);
    verdicts.push(['longest lock it held that stops them', strong[0]?.ms ?? 0]);
    verdicts.push(['longest lock wait of the workload', longestWait]);
    console.log(`\nloading took ${loadSeconds.toFixed(0)} s\n`);
    for (const [name, ms] of verdicts) {
      console.log(
        `${name.padEnd(45)} ${ms.toFixed(1).padStart(8)} ms   target < ${TARGET_MAX_LOCK_MS} ms   ` +
          `${ms < TARGET_MAX_LOCK_MS ? 'PASS' : 'MISS'}`,
      );
    }
  } finally {
    await retentionOrm?.close(true).catch(() => undefined);
    if (db) {
      await db.client.end().catch(() => undefined);
      await db.orm.close(true).catch(() => undefined);
      if (!KEEP) await dropDatabase(DATABASE).catch(() => undefined);
    }
  }
}

await runBench(main);
