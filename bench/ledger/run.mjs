// `npm run bench:ledger`: what a seller's journal length costs the ledger. The withdrawals service
// reads a seller's balance from its balance rows (withdrawals.ledger_balances, kept by a trigger in the
// transaction of every line) on every `GET /finance/balance/` and under the seller's lock in every
// posting; this bench checks that neither slows down as the journal grows. It makes two databases of its
// own, both migrated with the withdrawals service's migrations from its build: in one the journal is
// empty, in the other the measured seller has LEDGER_LINES lines. It measures in each:
//
// - postings/s for one seller: what the ledger consumer does for one `payment.approved` of a new order
//   (one transaction: the processed-message insert, then recordOrderMessage from the build), from
//   BENCH_CONNECTIONS connections at once, all for the measured seller (they take turns on its lock);
// - postings/s for 100 sellers: the same, the orders spread over 100 sellers (the measured one among them);
// - the balance read (balanceOf, what `GET /finance/balance/` runs) for the measured seller, LEDGER_READS
//   sequential reads per round after a warm-up: p50 and p99. For reference, what the same read costs as
//   a sum over the seller's lines.
//
// The two databases are measured in alternating rounds (BENCH_ROUNDS; which one goes first alternates
// too), and each ratio is the median of the rounds' ratios: the machine's speed drifts by more than the
// effect measured here when other work shares its two cores, and back-to-back runs see the same drift.
// The lines are loaded with set-based SQL, entries and their balanced lines in a few statements, through
// the journal's own rules (the commit-time balance check, the foreign key, the balance rows' trigger).
// At the end the bench checks in both databases that every balance row equals the sum of its lines, and
// stops with an error if one does not. The result is a report: exit code 0 whether the targets pass or not.
//
// Environment: LEDGER_LINES (default 2000000), BENCH_DURATION (s per posting run, default 10),
// BENCH_WARMUP (s of unmeasured postings before each run, default 2), BENCH_ROUNDS (default 3),
// BENCH_CONNECTIONS (default 8), LEDGER_READS (per round and database, default 2000). The plumbing is in
// ../lib.mjs.
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import {
  ROOT,
  dropDatabase,
  intFromEnv,
  percentile,
  printCpuTable,
  printTable,
  runBench,
  withCpu,
  exitUnlessBuilt,
} from '../lib.mjs';

const require = createRequire(import.meta.url);
const pg = require('pg');

const TARGET_MIN_RATIO = 0.8; // postings/s at LEDGER_LINES lines keep at least 80 % of the figure at 0...
const TARGET_MAX_READ_P99_MS = 5; // ...and the balance read's p99 stays under 5 ms there.
const MAX_RUN_SECONDS = 600;
const LINES = intFromEnv('LEDGER_LINES', 2_000_000, 100_000_000);
const DURATION = intFromEnv('BENCH_DURATION', 10, MAX_RUN_SECONDS);
const WARMUP = intFromEnv('BENCH_WARMUP', 2, MAX_RUN_SECONDS);
const CONNECTIONS = intFromEnv('BENCH_CONNECTIONS', 8, 100);
const ROUNDS = intFromEnv('BENCH_ROUNDS', 3, 99);
const READS = intFromEnv('LEDGER_READS', 2000, 1_000_000);
const SELLERS = 100;
const READ_WARMUP = 200;
const SUM_READS = 3;
/** Entries per loading transaction: each is checked at commit, line by line, by the journal's trigger. */
const LOAD_BATCH = 100_000;

const DATABASES = { empty: 'seller_api_bench_ledger_empty', loaded: 'seller_api_bench_ledger' };
const urlOf = (name) => `postgres://postgres@127.0.0.1:5432/${name}`;

const dist = (file) => path.join(ROOT, 'services/withdrawals/dist', file);
exitUnlessBuilt([dist('db/order-funds.js'), path.join(ROOT, 'packages/service-kit/dist/index.js')]);
const kit = require(path.join(ROOT, 'packages/service-kit/dist/index.js'));
const { SCHEMA, migrations } = require(dist('db/migrations.js'));
const { entities } = require(dist('db/entities.js'));
const { recordOrderMessage } = require(dist('db/order-funds.js'));
const { balanceOf } = require(dist('db/balances.js'));
const { LEDGER_QUEUE } = require(dist('events/topology.js'));

/** One kit `Sql` per database, as a service has one per process. */
const sqls = new WeakMap();
const sqlOf = (orm) => {
  if (!sqls.has(orm)) sqls.set(orm, kit.sqlOf(orm));
  return sqls.get(orm);
};

/** A sale at the default fee (399 bps), as payments' `payment.approved` carries it. */
const SALE = { gross: 15000, fee: 599, net: 14401 };

/**
 * One `payment.approved` of a new order, as the ledger consumer applies it (the kit's idempotentHandler
 * around events/payments.ts): the message id and the order's credit commit together.
 */
async function post(orm, owner) {
  const messageId = randomUUID();
  await orm.em.fork().transactional(async (em) => {
    await em.execute(
      `insert into "${SCHEMA}".processed_messages (consumer, message_id) values (?, ?) on conflict do nothing`,
      [LEDGER_QUEUE, messageId],
      'run',
    );
    await recordOrderMessage(
      em,
      sqlOf(orm),
      owner,
      randomUUID(),
      { kind: 'payment', status: 'PAID', amounts: SALE },
      `payment.approved ${messageId}`,
    );
  });
}

/** Postings for `seconds` from CONNECTIONS connections, the orders going round `owners`. */
async function postFor(orm, owners, seconds) {
  const latencies = [];
  let next = 0;
  const started = performance.now();
  const deadline = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: CONNECTIONS }, async () => {
      while (performance.now() < deadline) {
        const owner = owners[next % owners.length];
        next += 1;
        const from = performance.now();
        await post(orm, owner);
        latencies.push(performance.now() - from);
      }
    }),
  );
  return { rate: latencies.length / ((performance.now() - started) / 1000), latencies };
}

/** A warm-up, then the measured run with the CPU used meanwhile. */
async function postings(orm, owners) {
  await postFor(orm, owners, WARMUP);
  const { value, cpu } = await withCpu(() => postFor(orm, owners, DURATION));
  return { ...value, cpu };
}

/** `GET /finance/balance/`'s read, one after the other. */
async function balanceReads(orm, owner) {
  for (let i = 0; i < READ_WARMUP; i += 1) await balanceOf(sqlOf(orm), owner);
  const latencies = [];
  for (let i = 0; i < READS; i += 1) {
    const from = performance.now();
    await balanceOf(sqlOf(orm), owner);
    latencies.push(performance.now() - from);
  }
  return latencies;
}

/** For reference: the same balance as a sum over the seller's lines (median of a few reads). */
async function sumOfLines(client, owner) {
  const sql = `select account, sum(amount) as total from withdrawals.ledger_lines
                where seller_id = $1 and environment = $2 group by account`;
  await client.query(sql, [owner.sellerId, owner.environment]);
  const times = [];
  for (let i = 0; i < SUM_READS; i += 1) {
    const from = performance.now();
    await client.query(sql, [owner.sellerId, owner.environment]);
    times.push(performance.now() - from);
  }
  return times.sort((a, b) => a - b)[Math.floor(times.length / 2)];
}

async function linesOf(client, owner) {
  const { rows } = await client.query(
    `select count(*)::int as n from withdrawals.ledger_lines where seller_id = $1 and environment = $2`,
    [owner.sellerId, owner.environment],
  );
  return rows[0].n;
}

/**
 * Credits for `owner` until it has about `lines` more lines: entries of three balanced lines each (a
 * `payment_credited` of a varying gross), LOAD_BATCH entries per transaction.
 */
async function loadLines(client, owner, lines) {
  const entries = Math.ceil(lines / 3);
  let loaded = 0;
  for (let done = 0; done < entries; done += LOAD_BATCH) {
    const n = Math.min(LOAD_BATCH, entries - done);
    process.stderr.write(`  entries ${done + 1} to ${done + n} of ${entries}...\n`);
    await client.query('begin');
    await client.query(
      `with sale as (
         select gen_random_uuid() as id, 1000 + (g % 50000) as gross from generate_series(1, $3::int) g
       ), entry as (
         insert into withdrawals.ledger_entries (id, seller_id, environment, kind, order_id, cause)
         select id, $1, $2, 'payment_credited', gen_random_uuid(), 'bench load' from sale
       )
       insert into withdrawals.ledger_lines (entry_id, seller_id, environment, account, amount)
       select sale.id, $1, $2, line.account, line.amount
         from sale cross join lateral (values
           ('psp_settlement', -sale.gross),
           ('platform_fees', sale.gross * 399 / 10000),
           ('seller_available', sale.gross - sale.gross * 399 / 10000)) as line(account, amount)`,
      [owner.sellerId, owner.environment, n],
    );
    await client.query('commit');
    loaded += 3 * n;
  }
  return loaded;
}

/**
 * Production's autovacuum analyses tables as they grow, and the new statistics replace the plans that
 * connections keep (the journal triggers' lookups among them). This machine's PostgreSQL runs without
 * it, so the bench analyses before each run: otherwise the empty database's tables, growing with every
 * run, would be read with plans made when they were empty.
 */
async function analyse(client) {
  await client.query(`analyze withdrawals.ledger_lines, withdrawals.ledger_entries, withdrawals.ledger_balances,
    withdrawals.order_funds, withdrawals.processed_messages`);
}

/** Balance rows that differ from the sums of their lines (either side missing too); empty when right. */
async function drift(client) {
  const { rows } = await client.query(
    `with l as (select seller_id, environment, account, sum(amount)::bigint as amount
                  from withdrawals.ledger_lines group by seller_id, environment, account)
     select seller_id, environment, account, b.amount as row_amount, l.amount as lines_amount
       from withdrawals.ledger_balances b full join l using (seller_id, environment, account)
      where b.amount is distinct from l.amount`,
  );
  return rows;
}

/** A database of the bench's own, new, migrated; `orm` posts and reads, `client` loads and checks. */
async function openBenchDatabase(name, logger) {
  await dropDatabase(name);
  await kit.ensureDatabase(urlOf(name));
  const orm = await kit.openDatabase({
    url: urlOf(name),
    schema: SCHEMA,
    entities,
    migrations,
    logger,
    poolMax: CONNECTIONS + 1,
  });
  const client = new pg.Client({ connectionString: urlOf(name), application_name: 'bench' });
  try {
    await kit.migrate(orm, SCHEMA);
    await client.connect();
  } catch (err) {
    await orm.close(true);
    throw err;
  }
  return { name, orm, client };
}

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor((values.length - 1) / 2)];
const sortedOf = (runs) => Float64Array.from(runs.flat()).sort();

/**
 * ROUNDS rounds; in each, both kinds of posting run then the reads, in one database right after the
 * other (the first of the two alternating from one round to the next).
 */
async function rounds(dbs, big, sellers) {
  const runs = { one: { empty: [], loaded: [] }, many: { empty: [], loaded: [] } };
  const reads = { empty: [], loaded: [] };
  for (let round = 0; round < ROUNDS; round += 1) {
    const order = round % 2 === 0 ? ['empty', 'loaded'] : ['loaded', 'empty'];
    for (const [kind, owners] of [
      ['one', [big]],
      ['many', sellers],
    ]) {
      for (const which of order) {
        await analyse(dbs[which].client);
        console.error(
          `round ${round + 1}/${ROUNDS}: ${kind === 'one' ? 'one seller' : `${SELLERS} sellers`}, ${which}...`,
        );
        runs[kind][which].push(await postings(dbs[which].orm, owners));
      }
    }
    for (const which of order) {
      await analyse(dbs[which].client);
      reads[which].push(await balanceReads(dbs[which].orm, big));
    }
  }
  return { runs, reads };
}

/** Per kind: the rate of each round, the median rate, latency percentiles, the median ratio, mean CPU. */
function summarise(runs) {
  const of = (list) => {
    const sorted = sortedOf(list.map((r) => r.latencies));
    return {
      rates: list.map((r) => r.rate),
      rate: median(list.map((r) => r.rate)),
      p50: percentile(sorted, 0.5),
      p99: percentile(sorted, 0.99),
      cpu: meanCpu(list.map((r) => r.cpu)),
    };
  };
  const empty = of(runs.empty);
  const loaded = of(runs.loaded);
  const ratio = median(runs.loaded.map((r, i) => r.rate / runs.empty[i].rate));
  return { empty, loaded, ratio };
}

/** The CPU use of runs of the same length, averaged (null when /proc could not be read). */
function meanCpu(cpus) {
  if (cpus.some((cpu) => !cpu)) return null;
  const mean = {};
  for (const name of Object.keys(cpus[cpus.length - 1])) {
    mean[name] = cpus.reduce((sum, cpu) => sum + (cpu[name] ?? 0), 0) / cpus.length;
  }
  return mean;
}

function report({ lines, load, one, many, reads, sums }) {
  const verdict = (ok) => (ok ? 'PASS' : 'MISS');
  const fmt = (n) => n.toLocaleString('en-US');
  const at = (which) => `at ${fmt(lines[which])} lines`;
  console.log(
    `\nthe ledger at two journal lengths for the measured seller - ${CONNECTIONS} connections, ` +
      `${ROUNDS} rounds of ${DURATION} s per posting run (after ${WARMUP} s warm-up), ${READS} balance ` +
      `reads per round; ${os.availableParallelism()} CPU cores shared with the bench\n`,
  );
  const rates = (k) => k.rates.map((r) => r.toFixed(0)).join(', ');
  printTable([
    ['', at('empty'), at('loaded'), 'ratio'],
    [
      'postings/s, one seller (median)',
      one.empty.rate.toFixed(0),
      one.loaded.rate.toFixed(0),
      one.ratio.toFixed(2),
    ],
    [
      `postings/s, ${SELLERS} sellers (median)`,
      many.empty.rate.toFixed(0),
      many.loaded.rate.toFixed(0),
      many.ratio.toFixed(2),
    ],
    ['  one seller, each round', rates(one.empty), rates(one.loaded), ''],
    [`  ${SELLERS} sellers, each round`, rates(many.empty), rates(many.loaded), ''],
    [
      'posting p50 / p99 ms, one seller',
      `${one.empty.p50.toFixed(1)} / ${one.empty.p99.toFixed(1)}`,
      `${one.loaded.p50.toFixed(1)} / ${one.loaded.p99.toFixed(1)}`,
      '',
    ],
    [
      `posting p50 / p99 ms, ${SELLERS} sellers`,
      `${many.empty.p50.toFixed(1)} / ${many.empty.p99.toFixed(1)}`,
      `${many.loaded.p50.toFixed(1)} / ${many.loaded.p99.toFixed(1)}`,
      '',
    ],
    ['balance read p50 ms', reads.empty.p50.toFixed(3), reads.loaded.p50.toFixed(3), ''],
    ['balance read p99 ms', reads.empty.p99.toFixed(3), reads.loaded.p99.toFixed(3), ''],
    ['(the same as a sum of lines, ms)', sums.empty.toFixed(1), sums.loaded.toFixed(1), ''],
  ]);
  console.log(
    `\nloading ${fmt(load.lines)} lines took ${load.seconds.toFixed(0)} s; ` +
      "in both databases every balance row equals the sum of its lines; a ratio is the median of the rounds' ratios",
  );
  console.log('');
  const target = `target >= ${100 * TARGET_MIN_RATIO} %`;
  console.log(
    `postings/s loaded over empty, one seller      ${(100 * one.ratio).toFixed(1).padStart(6)} %   ${target}   ${verdict(one.ratio >= TARGET_MIN_RATIO)}`,
  );
  console.log(
    `postings/s loaded over empty, ${SELLERS} sellers    ${(100 * many.ratio).toFixed(1).padStart(6)} %   ${target}   ${verdict(many.ratio >= TARGET_MIN_RATIO)}`,
  );
  console.log(
    `balance read p99, loaded                    ${reads.loaded.p99.toFixed(2).padStart(6)} ms  ` +
      `target < ${TARGET_MAX_READ_P99_MS} ms      ${verdict(reads.loaded.p99 < TARGET_MAX_READ_P99_MS)}`,
  );
  // Not a target: where the CPU went, to tell a saturated machine from slow statements.
  printCpuTable([
    ['one seller, empty', one.empty.cpu],
    ['one seller, loaded', one.loaded.cpu],
    [`${SELLERS} sellers, empty`, many.empty.cpu],
    [`${SELLERS} sellers, loaded`, many.loaded.cpu],
  ]);
}

async function main() {
  const logger = kit.createLogger('bench-ledger', 'warn');
  const dbs = {};
  try {
    // New databases every run: the journal of an earlier run would be part of the "empty" figures.
    for (const which of ['empty', 'loaded']) {
      dbs[which] = await openBenchDatabase(DATABASES[which], logger);
      console.error(`migrated ${DATABASES[which]}`);
    }
    // The same sellers in both databases; the measured one is first.
    const seller = () => ({ sellerId: randomUUID(), environment: 'test' });
    const big = seller();
    const sellers = [big, ...Array.from({ length: SELLERS - 1 }, seller)];

    console.error(`loading ${LINES} lines for the measured seller in ${DATABASES.loaded}...`);
    const loadStarted = performance.now();
    const loaded = await loadLines(dbs.loaded.client, big, LINES);
    const load = { lines: loaded, seconds: (performance.now() - loadStarted) / 1000 };
    const lines = {
      empty: await linesOf(dbs.empty.client, big),
      loaded: await linesOf(dbs.loaded.client, big),
    };
    // JIT, connection pools and caches, before anything is counted.
    for (const which of ['empty', 'loaded']) {
      await analyse(dbs[which].client);
      for (const owners of [[big], sellers]) await postFor(dbs[which].orm, owners, WARMUP);
    }

    const measured = await rounds(dbs, big, sellers);
    const readsOf = (which) => {
      const sorted = sortedOf(measured.reads[which]);
      return { p50: percentile(sorted, 0.5), p99: percentile(sorted, 0.99) };
    };
    const sums = {
      empty: await sumOfLines(dbs.empty.client, big),
      loaded: await sumOfLines(dbs.loaded.client, big),
    };
    console.error('checking every balance row against its lines...');
    for (const which of ['empty', 'loaded']) {
      const wrong = await drift(dbs[which].client);
      if (wrong.length > 0) {
        throw new Error(
          `${DATABASES[which]}: balance rows differ from their lines: ${JSON.stringify(wrong.slice(0, 5))}`,
        );
      }
    }
    report({
      lines,
      load,
      one: summarise(measured.runs.one),
      many: summarise(measured.runs.many),
      reads: { empty: readsOf('empty'), loaded: readsOf('loaded') },
      sums,
    });
  } finally {
    for (const { name, orm, client } of Object.values(dbs)) {
      await client.end().catch(() => undefined);
      await orm.close(true).catch(() => undefined);
      await dropDatabase(name).catch(() => undefined);
    }
  }
}

await runBench(main);
