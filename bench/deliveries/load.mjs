// The deliveries the deliveries-list and retention benches load into a migrated dispatcher database,
// server-side (generate_series, LOAD_BATCH deliveries and their attempts a statement): the measured
// seller's webhook (WEBHOOK) with a tenth of them, the seller's order postbacks with another tenth, four
// to an order, and the rest other sellers' webhooks (FILLER_WEBHOOKS of them) and postbacks.
// Ids of the filler rows are ordered (their indexes are appended to, which keeps loading fast); the
// measured ones are random, as the dispatcher's are.
import { createRequire } from 'node:module';
import path from 'node:path';
import { ROOT } from '../lib.mjs';

const require = createRequire(import.meta.url);
const kit = require(path.join(ROOT, 'packages/service-kit/dist/index.js'));
const dist = (file) => path.join(ROOT, 'services/webhook-dispatcher/dist', file);
export const { SCHEMA, migrations } = require(dist('db/migrations.js'));
export const { entities } = require(dist('db/entities.js'));
export const { keepHistory } = require(dist('jobs/history-retention.js'));
const { EVENT_NAMES } = require(path.join(ROOT, 'packages/contracts/dist/index.js'));

/** Deliveries per loading statement (and transaction). */
export const LOAD_BATCH = 100_000;
export const FILLER_WEBHOOKS = 1000;
const OTHER_SELLERS = 99;

/** The measured seller and its webhook, the same in every database. */
export const SELLER = '5e11e400-0000-4000-8000-000000000001';
export const WEBHOOK = '5e11e400-0000-4000-8000-0000000000aa';
export const SCOPE = { sellerId: SELLER, environment: 'test', sellerName: null };

/** A webhook payload of the measured seller's (an order.paid's data), about 450 bytes as JSON. */
const PAYLOAD = {
  order: {
    uuid: '00000000-0000-0000-0000-000000000000',
    status: 'PAID',
    method: 'PIX',
    gross_amount: 15000,
    shipping_amount: 1500,
    net_amount: 14401,
    created_at: '2026-11-20T12:00:00.000Z',
    paid_at: '2026-11-20T12:01:10.000Z',
  },
  customer: { name: 'Maria da Silva', tax_id: '529.***.***-25', email: 'mar********@example.com' },
  items: [{ product_uuid: '3f1c7a52-1d2e-4b8a-9c61-2f4d5e6a7b8c', quantity: 1, unit_amount: 13500 }],
};

const urlOf = (name) => `postgres://postgres@127.0.0.1:5432/${name}`;

/**
 * Drops and creates `name`, migrated with the dispatcher's migrations; `retention` (days, as
 * keepHistory takes it) sets which past partitions are made before loading. Answers the ORM, its
 * `Sql` and a plain client for loading.
 */
export async function openDeliveriesDatabase(name, logger, retention, { dropDatabase, pg }) {
  await dropDatabase(name);
  await kit.ensureDatabase(urlOf(name));
  const orm = await kit.openDatabase({ url: urlOf(name), schema: SCHEMA, entities, migrations, logger });
  const client = new pg.Client({ connectionString: urlOf(name), application_name: 'bench' });
  try {
    await kit.migrate(orm, SCHEMA);
    // A new database has the current period's partitions only: the retention job makes the rest.
    await keepHistory({ sql: kit.sqlOf(orm), logger }, retention, new Date());
    await client.connect();
    await makeWebhooks(client);
  } catch (err) {
    await orm.close(true);
    throw err;
  }
  return { name, url: urlOf(name), orm, sql: kit.sqlOf(orm), client };
}

/** The measured webhook and the filler ones, all active. */
async function makeWebhooks(client) {
  await client.query(
    `insert into webhooks.webhooks (id, seller_id, environment, url, event, status, secret, created_at, updated_at)
     values ($1, $2, 'test', 'https://hooks.example.com/measured', 'order.paid', 'ACTIVE', 'whsec_bench', now(), now())`,
    [WEBHOOK, SELLER],
  );
  await client.query(
    `insert into webhooks.webhooks (id, seller_id, environment, url, event, status, secret, created_at, updated_at)
     select ('f0000000-0000-4000-8000-' || lpad(to_hex(w), 12, '0'))::uuid, md5('seller' || w % $1)::uuid,
            case when w % 2 = 0 then 'test' else 'live' end, 'https://hooks.example.com/' || w, 'order.paid',
            'ACTIVE', 'whsec_bench', now(), now()
       from generate_series(0, $2 - 1) as w`,
    [OTHER_SELLERS, FILLER_WEBHOOKS],
  );
}

/**
 * Deliveries `from` to `to` of a series of `total`, the n-th made n / total of the way from `start` to
 * `end` (so a batch fills one partition at a time). Every tenth (n % 10 = 0) is the measured webhook's,
 * 2 % of those dead, the rest delivered (the last `pending` of them pending, due in an hour); n % 10 = 1
 * are the measured seller's postbacks, four to an order; the rest filler. Every delivery not pending has
 * its attempts: one or two for the measured seller's, one for the filler.
 */
async function loadBatch(client, { from, to, total, start, end, salt, pending }) {
  await client.query('begin');
  await client.query(
    `with g as (
       select n, k,
              case when k = 0 then md5($3 || 'd' || n)::uuid
                   else (lpad(to_hex($4::int), 8, '0') || '-0000-4000-8000-' || lpad(to_hex(n), 12, '0'))::uuid
                   end as id,
              case when k = 0 then $6::uuid
                   when k in (1, 2, 3) then null
                   else ('f0000000-0000-4000-8000-' || lpad(to_hex(w), 12, '0'))::uuid end as webhook_id,
              case when k in (0, 1) then $5::uuid else md5('seller' || w % $8)::uuid end as seller_id,
              case when k in (0, 1) then 'test' when w % 2 = 0 then 'test' else 'live' end as environment,
              case when k in (1, 2, 3) then md5($3 || 'order' || k || (n / 40))::uuid end as order_id,
              ($9::text[])[1 + n % 11] as event,
              case when k = 0 and n > $2::bigint - $12::bigint * 10 then 'pending'
                   when k = 0 and (n / 10) % 50 = 0 then 'dead'
                   else 'delivered' end as status,
              case when k in (0, 1) then 1 + (n / 10) % 2 else 1 end as tries,
              $10::timestamptz + ($11::timestamptz - $10::timestamptz)
                * ((((n - 1) + (hashint4(n::int) & 1023) / 1024.0) / $2::bigint)::float8) as created_at
         from generate_series($1::bigint, $13::bigint) as n,
              lateral (select (n % 10)::int as k, (hashint4(n::int) & 2147483647) % $7 as w) as kind),
     attempts as (
       insert into webhooks.delivery_attempts
         (delivery_id, attempt, started_at, duration_ms, response_status, response_body, error)
       select g.id, a, g.created_at + make_interval(secs => 60 * (a - 1) + 0.05), 40,
              case when g.status = 'dead' or a < g.tries then 500 else 200 end,
              case when g.status = 'dead' or a < g.tries then 'internal error' else 'ok' end, null
         from g cross join lateral generate_series(1, g.tries) as a
        where g.status <> 'pending')
     insert into webhooks.deliveries
       (id, event_id, webhook_id, order_id, seller_id, environment, event, url, signed, payload, occurred_at,
        status, attempts, max_attempts, next_attempt_at, created_at, delivered_at)
     select id, 'evt_' || substr(md5($3 || 'e' || n), 1, 24), webhook_id, order_id, seller_id, environment,
            event, 'https://hooks.example.com/' || coalesce(webhook_id::text, 'postback'), webhook_id is not null,
            case when k in (0, 1) then $14::jsonb else '{"filler":true}'::jsonb end, created_at, status,
            case when status = 'pending' then 0 else tries end,
            case when status = 'dead' then tries else 8 end,
            case when status = 'pending' then now() + interval '1 hour' end, created_at,
            case when status = 'delivered' then created_at + interval '1 second' end
       from g`,
    [
      from,
      total,
      salt,
      hashOf(salt),
      SELLER,
      WEBHOOK,
      FILLER_WEBHOOKS,
      OTHER_SELLERS,
      EVENT_NAMES,
      start,
      end,
      pending,
      to,
      JSON.stringify(PAYLOAD),
    ],
  );
  await client.query('commit');
}

/** A small number out of a text, for the filler ids' prefix. */
function hashOf(text) {
  let h = 0;
  for (const c of text) h = (h * 31 + c.charCodeAt(0)) % 0x7fffffff;
  return h;
}

/**
 * `total` deliveries made between `start` and `end` (Dates), as loadBatch describes, LOAD_BATCH at a
 * time; then analysed (autovacuum may be off, as on the bench VMs). `pending` of the measured webhook's
 * latest are pending (none by default).
 */
export async function loadDeliveries(client, { total, start, end, salt, label, pending = 0 }) {
  // Loaded rows are lost with the database if the server stops: no need to wait for their WAL.
  await client.query('set synchronous_commit = off');
  for (let from = 1; from <= total; from += LOAD_BATCH) {
    const to = Math.min(total, from + LOAD_BATCH - 1);
    process.stderr.write(`  ${label}: deliveries ${from} to ${to} of ${total}...\n`);
    await loadBatch(client, { from, to, total, start, end, salt, pending });
  }
  await client.query('analyze webhooks.deliveries, webhooks.delivery_attempts, webhooks.webhooks');
}
