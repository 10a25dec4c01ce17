// `npm run bench:webhooks:pg`: what PostgreSQL spends per delivery on the dispatcher's own statements,
// without the rest of the system. The whole-system bench (run.mjs) shares two cores between the
// dispatcher, PostgreSQL, the receivers and the load generator, and its figures move by a tenth from one
// run to the next; this one runs the sender's claim and outcome statements (claimQuery, outcomeQuery,
// claimWindowSize, imported from the dispatcher's build) back to back on a database of its own, migrated
// by the dispatcher's migrate.js, and reads each backend's time on CPU from /proc/<pid>/schedstat
// (PostgreSQL must run on this machine). Its rounds agree within about 5 %; the machine's speed still
// moves it between runs, so compare two ways of writing the sender's SQL in alternation.
//
// Each round writes a backlog of due deliveries over 16 webhooks (interleaved as fan-out writes them, an
// order.created payload each), then claims them as a drain does: claims of PGCOSTS_LIMIT, outcomes
// (all delivered) in batches of PGCOSTS_BATCH, written PGCOSTS_IN_FLIGHT deliveries behind the claims
// (in a drain, the attempts in flight and the deliveries waiting for a slot are leased rows at the head
// of the due index that every claim reads past). A history of delivered rows is written first, so that
// the indexes have the size of a table in use.
//
// Environment: PGCOSTS_BACKLOG (due deliveries per round, default 20000), PGCOSTS_HISTORY (delivered
// rows first, default 100000), PGCOSTS_IN_FLIGHT (default five times the dispatcher's default
// WEBHOOK_CONCURRENCY: its slots in flight and four times as many waiting), PGCOSTS_LIMIT (default 300) and PGCOSTS_BATCH (default
// 150), the claims' and outcome batches' average sizes counted in the dispatcher during a drain, and
// PGCOSTS_ROUNDS (default 3; the median round is reported). Only the two backends are counted, not
// PostgreSQL's background processes (the WAL writer, the checkpointer).
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { ROOT, dropDatabase, intFromEnv, printTable } from '../lib.mjs';
import { dispatcherDefaults, writeDeliveries } from './backlog.mjs';

const require = createRequire(import.meta.url);
const pg = require('pg');

const BACKLOG = intFromEnv('PGCOSTS_BACKLOG', 20_000, 1_000_000);
const HISTORY = intFromEnv('PGCOSTS_HISTORY', 100_000, 10_000_000);
// A drain's leased deliveries: the dispatcher's slots in flight and four times as many waiting.
const IN_FLIGHT = intFromEnv('PGCOSTS_IN_FLIGHT', (await dispatcherDefaults()).concurrency * 5, 100_000);
const LIMIT = intFromEnv('PGCOSTS_LIMIT', 300, 10_000);
const BATCH = intFromEnv('PGCOSTS_BATCH', 150, 10_000);
const ROUNDS = intFromEnv('PGCOSTS_ROUNDS', 3, 99);
const WEBHOOKS = 16;

const DATABASE = 'seller_api_bench_pgcosts';
const DATABASE_URL = `postgres://postgres@127.0.0.1:5432/${DATABASE}`;

const claimsModule = path.join(ROOT, 'services/webhook-dispatcher/dist/db/delivery-claims.js');
const migrate = path.join(ROOT, 'services/webhook-dispatcher/dist/migrate.js');
if (!existsSync(claimsModule) || !existsSync(migrate)) {
  console.error('the dispatcher is not built: run `npm run build` first');
  process.exit(1);
}
const { claimQuery, claimWindowSize, outcomeQuery } = await import(claimsModule);

// An order.created event's data as the latency bench's orders make it (masked), about 600 bytes.
const PAYLOAD = {
  order: {
    uuid: '7cb2750d-0439-417b-b3a2-4d0fcfcb9c12',
    status: 'PENDING',
    method: 'PIX',
    gross_amount: 6500,
    shipping_amount: 1500,
    discount_amount: 0,
    fee_amount: 259,
    net_amount: 6241,
    created_at: '2026-11-25T05:29:01.707Z',
    paid_at: null,
  },
  seller: { name: 'bench@example.com' },
  customer: {
    name: 'Maria Silva',
    tax_id: '100.***.***-19',
    tax_id_type: 'CPF',
    email: 'mar********@example.com',
  },
  items: [
    {
      product_uuid: '67fb3134-6616-4894-9967-d506b2d66cf0',
      product_name: 'Camiseta',
      quantity: 1,
      unit_amount: 5000,
      line_total_amount: 5000,
    },
  ],
};

/** Nanoseconds on CPU of a PostgreSQL backend so far. */
const cpuNs = (pid) => Number(readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[0]);

async function migrated() {
  await dropDatabase(DATABASE);
  // NODE_ENV other than production: the service creates its database.
  const child = spawn(process.execPath, [migrate], {
    cwd: ROOT,
    env: { ...process.env, NODE_ENV: 'development', LOG_LEVEL: 'warn', DATABASE_URL },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const code = await new Promise((resolve) => child.on('exit', resolve));
  if (code !== 0) throw new Error(`migrate.js exited with ${code}`);
}

async function connect() {
  const client = new pg.Client({ connectionString: DATABASE_URL, application_name: 'bench' });
  await client.connect();
  const { rows } = await client.query('select pg_backend_pid() as pid');
  const pid = rows[0].pid;
  // The backend's pid is read in this machine's /proc: PostgreSQL elsewhere (another host, a
  // container's namespace) would be another process or none.
  let name = null;
  try {
    name = readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    // No such process here.
  }
  if (name !== 'postgres') {
    throw new Error(`backend ${pid} is not a postgres process of this machine: PostgreSQL must run here`);
  }
  return { client, pid };
}

/** One drain of the backlog: claims ahead, outcomes IN_FLIGHT behind. */
async function round(claimer, recorder, admin, hooks) {
  await writeDeliveries(admin, {
    perWebhook: Math.ceil(BACKLOG / hooks.length),
    payload: JSON.stringify(PAYLOAD),
    webhookIds: hooks,
  });
  const walStart = (await admin.query('select pg_current_wal_lsn() as lsn')).rows[0].lsn;
  let claimNs = 0;
  let outcomeNs = 0;
  let claims = 0;
  let batches = 0;
  let recorded = 0;
  let leased = [];
  const record = async (keep) => {
    while (leased.length > keep) {
      const batch = leased.slice(0, Math.min(BATCH, leased.length - keep));
      leased = leased.slice(batch.length);
      const now = new Date().toISOString();
      const outcomes = batch.map((d) => ({
        id: d.id,
        attempt: d.attempts + 1,
        started_at: now,
        duration_ms: 1,
        response_status: 200,
        response_body: '',
        error: null,
        status: 'delivered',
        next_attempt_at: null,
        delivered: true,
      }));
      const before = cpuNs(recorder.pid);
      await recorder.client.query(outcomeQuery(outcomes));
      outcomeNs += cpuNs(recorder.pid) - before;
      batches += 1;
      recorded += batch.length;
    }
  };
  for (;;) {
    const before = cpuNs(claimer.pid);
    const { rows } = await claimer.client.query(
      claimQuery({
        saturated: [],
        windowSize: claimWindowSize(LIMIT),
        unlisted: LIMIT,
        budgets: new Map(),
        limit: LIMIT,
        since: '-infinity',
      }),
    );
    claimNs += cpuNs(claimer.pid) - before;
    claims += 1;
    if (rows.length === 0) break;
    leased.push(...rows);
    await record(IN_FLIGHT);
  }
  await record(0);
  const wal = (
    await admin.query('select pg_wal_lsn_diff(pg_current_wal_lsn(), $1)::float8 as bytes', [walStart])
  ).rows[0].bytes;
  const { rows: left } = await admin.query(
    `select count(*)::int as n from webhooks.deliveries where status = 'pending'`,
  );
  if (left[0].n !== 0) throw new Error(`${left[0].n} deliveries were left pending`);
  return {
    recorded,
    claims,
    batches,
    claimUs: claimNs / 1000 / recorded,
    outcomeUs: outcomeNs / 1000 / recorded,
    walBytes: wal / recorded,
  };
}

async function main() {
  console.error(`migrating ${DATABASE}...`);
  await migrated();
  const admin = await connect();
  const claimer = await connect();
  const recorder = await connect();
  try {
    const { rows: hooks } = await admin.client.query(
      `insert into webhooks.webhooks (id, seller_id, environment, url, event, status, secret, created_at, updated_at)
       select gen_random_uuid(), gen_random_uuid(), 'test', 'http://127.0.0.1:' || (20000 + g) || '/hook',
              'order.created', 'ACTIVE', 'whsec_' || md5(g::text), now(), now()
         from generate_series(1, $1::int) g
       returning id`,
      [WEBHOOKS],
    );
    const hookIds = hooks.map((h) => h.id);
    console.error(`writing a history of ${HISTORY} delivered deliveries...`);
    await writeDeliveries(admin.client, {
      perWebhook: Math.ceil(HISTORY / hookIds.length),
      payload: JSON.stringify(PAYLOAD),
      webhookIds: hookIds,
      delivered: true,
    });
    const rounds = [];
    for (let i = 0; i < ROUNDS; i += 1) {
      console.error(`round ${i + 1}/${ROUNDS}: ${BACKLOG} due deliveries...`);
      rounds.push(await round(claimer, recorder, admin.client, hookIds));
    }
    console.log(
      `\nPostgreSQL CPU per delivery, the dispatcher's statements alone: backlogs of ${BACKLOG} over ${WEBHOOKS} ` +
        `webhooks after ${HISTORY} delivered; claims of ${LIMIT} (a window of ${claimWindowSize(LIMIT)}), ` +
        `outcomes in batches of ${BATCH}, ${IN_FLIGHT} leased ahead of them\n`,
    );
    const cells = (label, r) => [
      label,
      r.claimUs.toFixed(1),
      r.outcomeUs.toFixed(1),
      (r.claimUs + r.outcomeUs).toFixed(1),
      r.walBytes.toFixed(0),
      String(r.claims),
      String(r.batches),
    ];
    const median = [...rounds].sort((a, b) => a.claimUs + a.outcomeUs - (b.claimUs + b.outcomeUs))[
      Math.floor((rounds.length - 1) / 2)
    ];
    printTable([
      ['round', 'claim µs', 'outcome µs', 'total µs', 'WAL bytes', 'claims', 'batches'],
      ...rounds.map((r, i) => cells(String(i + 1), r)),
      cells('median', median),
    ]);
  } finally {
    for (const { client } of [admin, claimer, recorder]) await client.end().catch(() => undefined);
    await dropDatabase(DATABASE).catch(() => undefined);
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
