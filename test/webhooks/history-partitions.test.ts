import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import pino from 'pino';
import {
  ensureDatabase,
  migrate,
  openDatabase,
  sqlOf,
  type MikroORM,
  type Sql,
} from '@seller-api/service-kit';
import { entities } from '../../services/webhook-dispatcher/src/db/entities';
import { getEvent, listEvents } from '../../services/webhook-dispatcher/src/db/events';
import { outcomeQuery } from '../../services/webhook-dispatcher/src/db/delivery-claims';
import { resendPostbackDelivery } from '../../services/webhook-dispatcher/src/db/deliveries';
import { storeFanOut } from '../../services/webhook-dispatcher/src/db/delivery-writes';
import { partitionHistoryTable } from '../../services/webhook-dispatcher/src/db/history-upgrade';
import { SCHEMA, migrations } from '../../services/webhook-dispatcher/src/db/migrations';
import { listPartitions } from '../../services/webhook-dispatcher/src/db/partitions';
import { newEventId } from '../../services/webhook-dispatcher/src/domain/deliveries';
import { eventIdOf } from '../../services/webhook-dispatcher/src/domain/events';
import { HISTORY_TABLES } from '../../services/webhook-dispatcher/src/domain/partitions';
import { keepHistory } from '../../services/webhook-dispatcher/src/jobs/history-retention';
import { testEnv } from '../support/env';

/*
 * The history tables partitioned by time (docs/webhooks.md, "History and retention"): a new
 * installation's from its first migration, an existing one's by the upgrade in place while the
 * dispatcher writes, and the retention that drops whole periods.
 */
const env = testEnv();
const url = env.DATABASE_URL as string;
const logger = pino({ level: 'silent' });
const DAY = 86_400_000;
const RETENTION = { events: 30, deliveries: 90 };
const SELLER = randomUUID();
const SCOPE = { sellerId: SELLER, environment: 'test' as const, sellerName: null };
const BEFORE_PARTITIONING = migrations.slice(
  0,
  migrations.findIndex((m) => m.name === 'Migration20261220PartitionedHistory'),
);

let admin: Client;
let orm: MikroORM | undefined;

beforeAll(async () => {
  await ensureDatabase(url);
  admin = new Client({ connectionString: url });
  await admin.connect();
});
afterEach(async () => {
  await orm?.close();
  orm = undefined;
});
afterAll(() => admin?.end());

/** The schema from scratch, migrated with `list`; the ORM stays open for the test. */
async function freshSchema(list: typeof migrations): Promise<{ orm: MikroORM; sql: Sql }> {
  await admin.query(`drop schema if exists ${SCHEMA} cascade`);
  orm = await openDatabase({ url, schema: SCHEMA, entities, migrations: list, logger, poolMax: 6 });
  await migrate(orm, SCHEMA);
  return { orm, sql: sqlOf(orm) };
}

async function kind(table: string): Promise<string> {
  const { rows } = await admin.query<{ kind: string }>(
    `select c.relkind::text as kind from pg_class c where c.oid = to_regclass($1)`,
    [`${SCHEMA}.${table}`],
  );
  return rows[0]?.kind ?? 'missing';
}

async function count(table: string): Promise<number> {
  const { rows } = await admin.query<{ n: number }>(`select count(*)::int as n from ${SCHEMA}.${table}`);
  return rows[0]?.n ?? -1;
}

/** One event with one postback delivery, stored as the intake stores them (db/delivery-writes.ts). */
async function storeEvent(
  sql: Sql,
  occurredAt: Date,
): Promise<{ eventId: string; deliveryId: string; orderId: string }> {
  const messageId = randomUUID();
  const deliveryId = randomUUID();
  const orderId = randomUUID();
  const eventId = eventIdOf(messageId);
  await storeFanOut(
    sql,
    'history-test',
    RETENTION.events,
    [messageId],
    [
      {
        messageId,
        id: deliveryId,
        eventId: newEventId(),
        webhookId: null,
        orderId,
        sellerId: SELLER,
        environment: 'test',
        event: 'withdrawal.paid',
        url: 'https://receiver.example/postback',
        signed: false,
        payload: { id: messageId },
        occurredAt,
        traceContext: null,
      },
    ],
    [
      {
        messageId,
        id: eventId,
        sellerId: SELLER,
        environment: 'test',
        event: 'withdrawal.paid',
        orderId: null,
        occurredAt,
        data: { id: messageId },
        deliveryIds: [deliveryId],
      },
    ],
  );
  return { eventId, deliveryId, orderId };
}

describe('a new installation', () => {
  it('has its history tables partitioned, with the periods its retention and the coming days need', async () => {
    const { sql } = await freshSchema(migrations);
    for (const table of ['events', 'deliveries', 'delivery_attempts']) expect(await kind(table)).toBe('p');
    // Nothing from before: the empty tables the earlier migrations made are gone, not attached.
    expect(await kind('events_legacy')).toBe('missing');

    const now = new Date();
    await keepHistory({ sql, logger }, RETENTION, now);
    const events = await listPartitions(sql, 'events');
    expect(events.every((p) => p.from !== null && p.to.getTime() - p.from.getTime() === DAY)).toBe(true);
    expect(events[0]?.from?.getTime()).toBeLessThanOrEqual(now.getTime() - RETENTION.events * DAY);
    expect(events.at(-1)?.to.getTime()).toBeGreaterThanOrEqual(now.getTime() + 7 * DAY);
    const deliveries = await listPartitions(sql, 'deliveries');
    expect(deliveries[0]?.from?.getTime()).toBeLessThanOrEqual(now.getTime() - RETENTION.deliveries * DAY);
    expect(deliveries.map((p) => p.name)).toEqual(
      (await listPartitions(sql, 'delivery_attempts')).map((p) =>
        p.name.replace('delivery_attempts', 'deliveries'),
      ),
    );
    // A second run finds nothing to do.
    await keepHistory({ sql, logger }, RETENTION, now);
    expect((await listPartitions(sql, 'events')).map((p) => p.name)).toEqual(events.map((p) => p.name));
  });

  it('records an event within the retention, leaves an older one out, and shows none past it', async () => {
    const { sql } = await freshSchema(migrations);
    await keepHistory({ sql, logger }, RETENTION, new Date());
    const recent = await storeEvent(sql, new Date(Date.now() - 29 * DAY));
    const old = await storeEvent(sql, new Date(Date.now() - 31 * DAY));
    // The delivery of the old one is made all the same: only the Events API's record is left out.
    expect(await count('deliveries')).toBe(2);
    expect(await count('events')).toBe(1);
    const page = await listEvents(sql, SCOPE, { limit: 10 }, RETENTION.events);
    expect(page.results.map((e) => e.id)).toEqual([recent.eventId]);
    // Read with a shorter retention, the 29-day-old event is past it.
    expect((await listEvents(sql, SCOPE, { limit: 10 }, 20)).results).toEqual([]);
    await expect(getEvent(sql, SCOPE, recent.eventId, 20)).rejects.toMatchObject({ status: 404 });
    await expect(getEvent(sql, SCOPE, old.eventId, RETENTION.events)).rejects.toMatchObject({ status: 404 });
  });
});

describe('the sender on partitions', () => {
  it("records an outcome in its delivery's own month only", async () => {
    const { sql } = await freshSchema(migrations);
    await keepHistory({ sql, logger }, RETENTION, new Date());
    const claimed = [];
    for (const age of [0, 35, 70]) {
      const { deliveryId } = await storeEvent(sql, new Date());
      const { rows } = await admin.query<{ created_at: string }>(
        `update ${SCHEMA}.deliveries set created_at = now() - make_interval(days => $2) where id = $1
         returning created_at::text`,
        [deliveryId, age],
      );
      claimed.push({ id: deliveryId, created_at: rows[0]?.created_at as string });
    }
    expect((await listPartitions(sql, 'deliveries')).length).toBeGreaterThanOrEqual(4);
    const { text, values } = outcomeQuery(
      claimed.map((c) => ({
        ...c,
        attempt: 1,
        started_at: new Date().toISOString(),
        duration_ms: 4,
        response_status: 200,
        response_body: '',
        error: null,
        status: 'delivered' as const,
        next_attempt_at: null,
        delivered: true,
      })),
    );
    await admin.query('begin');
    try {
      // The plan the sender gets once the table has grown (test/webhooks/sender-plans.test.ts): the
      // deliveries looked up by key one by one, which these few rows would not make worth it.
      await admin.query('set local enable_hashjoin = off');
      await admin.query('set local enable_mergejoin = off');
      const { rows } = await admin.query<{ 'QUERY PLAN': string }>(
        `explain (analyze, costs off, timing off) ${text}`,
        values,
      );
      const plan = rows.map((r) => r['QUERY PLAN']).join('\n');
      // One read per outcome in all: each finds its own month's partition, the other months pruned.
      const loops = [
        ...plan.matchAll(/Scan .*on deliveries_p\d+ d_\d+ \(actual rows=\d+ loops=(\d+)\)/g),
      ].map((m) => Number(m[1]));
      expect(loops.reduce((a, b) => a + b, 0)).toBe(claimed.length);
      expect(plan).toMatch(/never executed/);
    } finally {
      await admin.query('rollback');
    }
  });
});

describe('retention', () => {
  it('drops whole expired periods and keeps a month that still holds a pending delivery', async () => {
    const { sql } = await freshSchema(migrations);
    // The dispatcher as it ran 200 days ago made the periods of that time.
    const then = new Date(Date.now() - 200 * DAY);
    await keepHistory({ sql, logger }, RETENTION, then);
    const { eventId, deliveryId, orderId } = await storeEvent(sql, then);
    await admin.query(`update ${SCHEMA}.deliveries set created_at = $1 where id = $2`, [then, deliveryId]);
    await admin.query(
      `insert into ${SCHEMA}.delivery_attempts (delivery_id, attempt, started_at, duration_ms) values ($1, 1, $2, 5)`,
      [deliveryId, then],
    );
    const oldMonth = `deliveries_p${then.toISOString().slice(0, 7).replace('-', '')}`;
    const oldDay = `events_p${then.toISOString().slice(0, 10).replace(/-/g, '')}`;
    expect((await listPartitions(sql, 'events')).map((p) => p.name)).toContain(oldDay);

    // Still pending (a paused webhook's, say): its month stays, the rest of that time goes.
    await keepHistory({ sql, logger }, RETENTION, new Date());
    expect((await listPartitions(sql, 'deliveries')).map((p) => p.name)).toContain(oldMonth);
    expect((await listPartitions(sql, 'events')).map((p) => p.name)).not.toContain(oldDay);
    expect(await kind(oldDay)).toBe('missing');
    expect(await kind(`delivery_attempts_p${oldMonth.slice(-6)}`)).toBe('missing');
    const { rows } = await admin.query(`select 1 from ${SCHEMA}.events where id = $1`, [eventId]);
    expect(rows).toEqual([]);
    // Past the retention it is not re-sent either: made pending again, it would keep its month.
    await expect(
      resendPostbackDelivery(sql, SCOPE, orderId, deliveryId, RETENTION.deliveries),
    ).rejects.toMatchObject({ status: 404 });

    // Delivered: the month goes at the next run. A period a run detached and died before dropping
    // goes too.
    await admin.query(`update ${SCHEMA}.deliveries set status = 'delivered' where id = $1`, [deliveryId]);
    await admin.query(`create table ${SCHEMA}.events_p20000101 (like ${SCHEMA}.events)`);
    await keepHistory({ sql, logger }, RETENTION, new Date());
    expect(await kind('events_p20000101')).toBe('missing');
    expect((await listPartitions(sql, 'deliveries')).map((p) => p.name)).not.toContain(oldMonth);
    expect(await count('deliveries')).toBe(0);
    // What remains is what the retention keeps: no period wholly past it.
    for (const spec of HISTORY_TABLES) {
      const horizon = Date.now() - RETENTION[spec.retention] * DAY;
      for (const p of await listPartitions(sql, spec.table)) expect(p.to.getTime()).toBeGreaterThan(horizon);
    }
  });
});

describe('an existing installation', () => {
  it('with no history yet is partitioned from the current period on, writes going on at once', async () => {
    await freshSchema(BEFORE_PARTITIONING);
    await orm?.close();
    orm = await openDatabase({ url, schema: SCHEMA, entities, migrations, logger, poolMax: 4 });
    await migrate(orm, SCHEMA);
    const live = sqlOf(orm);
    for (const spec of HISTORY_TABLES) await partitionHistoryTable(orm, spec, new Date(), () => undefined);
    expect(await kind('events_legacy')).toBe('missing');
    // No retention run yet: the upgrade made the current and coming periods itself.
    const { deliveryId } = await storeEvent(live, new Date());
    await admin.query(
      `insert into ${SCHEMA}.delivery_attempts (delivery_id, attempt, started_at, duration_ms) values ($1, 1, now(), 5)`,
      [deliveryId],
    );
    expect(await count('events')).toBe(1);
    expect((await listPartitions(live, 'deliveries')).length).toBeGreaterThanOrEqual(3);
  });

  it('has a bound an unfinished upgrade left dropped before it refuses new rows', async () => {
    const { sql } = await freshSchema(BEFORE_PARTITIONING);
    const tomorrow = new Date(Date.now() + DAY).toISOString().slice(0, 10);
    await admin.query(
      `alter table ${SCHEMA}.events add constraint events_before_partitioning check (occurred_at < '${tomorrow}') not valid`,
    );
    await keepHistory({ sql, logger }, RETENTION, new Date());
    const { rows } = await admin.query(
      `select 1 from pg_constraint where conname = 'events_before_partitioning'`,
    );
    expect(rows).toEqual([]);
  });

  it('is partitioned in place while the dispatcher writes, no write failing or waiting long', async () => {
    await freshSchema(BEFORE_PARTITIONING);
    // Today's tables with history in them, older than the events' retention too.
    const ages = [45, 31, 20, 1];
    const old = [];
    for (const age of ages) {
      const at = new Date(Date.now() - age * DAY);
      await admin.query(
        `insert into ${SCHEMA}.events (id, seller_id, environment, event, occurred_at, data)
         values ($1, $2, 'test', 'withdrawal.paid', $3, '{}')`,
        [eventIdOf(randomUUID()), SELLER, at],
      );
      const delivery = randomUUID();
      old.push(delivery);
      await admin.query(
        `insert into ${SCHEMA}.deliveries (id, event_id, seller_id, environment, event, url, signed, payload,
           occurred_at, status, created_at) values ($1, $2, $3, 'test', 'withdrawal.paid', 'https://r.example/', false,
           '{}', $4, 'delivered', $4)`,
        [delivery, newEventId(), SELLER, at],
      );
      await admin.query(
        `insert into ${SCHEMA}.delivery_attempts (delivery_id, attempt, started_at, duration_ms) values ($1, 1, $2, 5)`,
        [delivery, at],
      );
    }
    // This release's migration on an installation in use leaves the tables as they are.
    await orm?.close();
    orm = await openDatabase({ url, schema: SCHEMA, entities, migrations, logger, poolMax: 6 });
    expect(await migrate(orm, SCHEMA)).toEqual(
      migrations.slice(BEFORE_PARTITIONING.length).map((m) => m.name),
    );
    expect(await kind('events')).toBe('r');
    const live = sqlOf(orm);

    // The dispatcher writes all along the upgrade, one fan-out after another.
    let writing = true;
    let written = 0;
    let slowest = 0;
    const errors: unknown[] = [];
    const writer = (async () => {
      while (writing) {
        const started = performance.now();
        try {
          await storeEvent(live, new Date());
          written += 1;
        } catch (err) {
          errors.push(err);
        }
        slowest = Math.max(slowest, performance.now() - started);
      }
    })();
    const steps: string[] = [];
    // A reader's transaction holds the deliveries table for 1.5 s: the swap's lock wait runs out once
    // and is tried again, and no write waits behind it for longer than that wait.
    const reader = new Client({ connectionString: url });
    await reader.connect();
    await reader.query('begin');
    await reader.query(`select count(*) from ${SCHEMA}.deliveries`);
    const released = new Promise((resolve) => setTimeout(resolve, 1_500)).then(async () => {
      await reader.query('commit');
      await reader.end();
    });
    try {
      for (const spec of HISTORY_TABLES) {
        await partitionHistoryTable(orm, spec, new Date(), (s) => steps.push(`${s.table}: ${s.step}`));
      }
      // Let writes go on into the partitioned tables for a moment.
      const after = written;
      while (written < after + 20 && errors.length === 0) await new Promise((r) => setImmediate(r));
    } finally {
      writing = false;
      await writer;
      await released;
    }
    expect(errors).toEqual([]);
    expect(slowest).toBeLessThan(2_000);
    expect(steps).toEqual(
      HISTORY_TABLES.flatMap((s) => [
        `${s.table}: bound added`,
        `${s.table}: bound validated`,
        `${s.table}: swapped`,
      ]),
    );
    for (const spec of HISTORY_TABLES) {
      expect(await kind(spec.table)).toBe('p');
      const [legacy] = await listPartitions(live, spec.table);
      expect(legacy?.name).toBe(`${spec.table}_legacy`);
      expect(legacy?.from).toBeNull();
    }
    // Every row is there, old and new, none copied twice.
    expect(await count('events')).toBe(ages.length + written);
    expect(await count('deliveries')).toBe(ages.length + written);
    expect(await count('delivery_attempts')).toBe(ages.length);
    expect(await count('deliveries_legacy')).toBe(ages.length + written);

    // Run again, the upgrade finds it done; the retention then deletes the expired events of the old
    // rows and keeps the deliveries, within theirs.
    const again: string[] = [];
    for (const spec of HISTORY_TABLES) {
      await partitionHistoryTable(orm, spec, new Date(), (s) => again.push(s.step));
    }
    expect(again).toEqual(HISTORY_TABLES.map(() => 'partitioned already'));
    await keepHistory({ sql: live, logger }, RETENTION, new Date());
    expect(await count('events')).toBe(2 + written);
    expect(await count('deliveries')).toBe(ages.length + written);
    const page = await listEvents(live, SCOPE, { limit: 100 }, RETENTION.events);
    expect(page.results).toHaveLength(2 + written);
  });
});
