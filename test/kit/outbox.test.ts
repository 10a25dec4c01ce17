import { randomUUID } from 'node:crypto';
import { EntitySchema } from '@mikro-orm/core';
import { Migration } from '@mikro-orm/migrations';
import amqp from 'amqplib';
import {
  type Broker,
  OutboxRelay,
  createLogger,
  createMetrics,
  enqueue,
  idempotentHandler,
  insertTogether,
  OutboxMessageSchema,
  outboxRow,
  rowsOf,
  sqlOf,
  kitMigrationSql,
  outboxTraceContextSql,
  queueNames,
  type MikroORM,
} from '@seller-api/service-kit';
import { openMigrated } from '../support/database';
import { testEnv } from '../support/env';
import { deleteQueues } from '../support/queues';
import { testBroker } from '../support/events';
import { TcpProxy, hostPort, viaProxy } from '../support/tcp-proxy';
import { waitFor } from '../support/wait';

const SCHEMA = 'kit_outbox_test';
const EXCHANGE = 'widgets.events';

class Init extends Migration {
  override async up(): Promise<void> {
    for (const sql of kitMigrationSql(SCHEMA)) this.addSql(sql);
    this.addSql(`create table if not exists ${SCHEMA}.widgets (id uuid primary key, name text not null)`);
    this.addSql(
      `create table if not exists ${SCHEMA}.effects (message_id text not null, widget_id uuid not null)`,
    );
  }
}

// A database made before the outbox had its trace_context column gets it this way.
class TraceContext extends Migration {
  override async up(): Promise<void> {
    for (const sql of outboxTraceContextSql(SCHEMA)) this.addSql(sql);
  }
}

interface Widget {
  id: string;
  name: string;
}
const WidgetSchema = new EntitySchema<Widget>({
  name: 'Widget',
  tableName: 'widgets',
  properties: { id: { type: 'uuid', primary: true }, name: { type: 'string' } },
});

const env = testEnv();
const logger = createLogger('outbox-test', 'silent');
const metrics = createMetrics('outbox-test');
const topology = {
  exchanges: [EXCHANGE],
  queues: [
    {
      name: 'widgets.consumer',
      bindings: [{ exchange: EXCHANGE, pattern: 'widget.*' }],
      retryDelayMs: 50,
      maxAttempts: 3,
    },
  ],
};

let orm: MikroORM;
let proxy: TcpProxy;
let producer: Broker;
let consumer: Broker;
let relay: OutboxRelay;
let rawDeliveries: Map<string, number>;
let rawBodies: Map<string, unknown>;
let rawConnection: amqp.ChannelModel;

async function createWidget(name: string, fail = false): Promise<string> {
  const id = randomUUID();
  await orm.em.fork().transactional(async (em) => {
    await em.execute(`insert into ${SCHEMA}.widgets (id, name) values (?, ?)`, [id, name]);
    enqueue(em, {
      exchange: EXCHANGE,
      routingKey: 'widget.created',
      payload: { id, name },
      headers: { 'x-seller-id': 's1' },
    });
    if (fail) throw new Error('rolled back on purpose');
  });
  return id;
}

async function effectsFor(widgetId: string): Promise<number> {
  const rows = await orm.em
    .fork()
    .execute<Array<{ n: string }>>(`select count(*) as n from ${SCHEMA}.effects where widget_id = ?`, [
      widgetId,
    ]);
  return Number(rows[0]?.n);
}

beforeAll(async () => {
  orm = await openMigrated(env, {
    schema: SCHEMA,
    entities: [WidgetSchema],
    migrations: [
      { name: 'Init', class: Init },
      { name: 'TraceContext', class: TraceContext },
    ],
    logger,
  });
  const { host, port } = hostPort(env.AMQP_URL as string, 5672);
  proxy = new TcpProxy(host, port);
  await proxy.start();
  producer = testBroker(env, logger, topology, {
    url: viaProxy(env.AMQP_URL as string, proxy.port),
    reconnectDelayMs: 50,
  });
  consumer = testBroker(env, logger, topology);
  await producer.start();
  await consumer.start();
  await consumer.consume(
    'widgets.consumer',
    idempotentHandler(orm, SCHEMA, 'widgets.consumer', async (em, message) => {
      const payload = message.payload as { id: string; name: string };
      if (payload.name === 'poison') throw new Error('cannot handle this widget');
      await em.execute(`insert into ${SCHEMA}.effects (message_id, widget_id) values (?, ?)`, [
        message.id,
        payload.id,
      ]);
    }),
  );
  // A second, plain queue counts every copy the broker receives, to show the relay sends each row once.
  rawDeliveries = new Map();
  rawBodies = new Map();
  rawConnection = await amqp.connect(env.AMQP_URL as string);
  const channel = await rawConnection.createChannel();
  const { queue } = await channel.assertQueue('', { exclusive: true });
  await channel.bindQueue(queue, `${env.AMQP_NAMESPACE}${EXCHANGE}`, '#');
  await channel.consume(queue, (m) => {
    if (!m) return;
    const id = m.properties.messageId as string;
    rawDeliveries.set(id, (rawDeliveries.get(id) ?? 0) + 1);
    rawBodies.set(id, JSON.parse(m.content.toString('utf8')));
    channel.ack(m);
  });
  relay = new OutboxRelay({ orm, schema: SCHEMA, broker: producer, logger, metrics, pollIntervalMs: 100 });
  relay.start();
});

afterAll(async () => {
  await relay.stop();
  await producer.close();
  await consumer.close();
  await rawConnection.close();
  await proxy.stop();
  await orm.close(true);
  await deleteQueues(env.AMQP_URL as string, env.AMQP_NAMESPACE as string, ['widgets.consumer']);
});

describe('transactional outbox', () => {
  it('publishes an event committed with its change, with its message id and headers', async () => {
    const id = await createWidget('first');
    await waitFor(() => effectsFor(id), { what: 'consumer effect' });
    expect(await effectsFor(id)).toBe(1);
  });

  it('stores a change and its event in one statement (insertTogether), every value kept exactly', async () => {
    // What the inlined SQL must survive: quotes, backslashes, placeholders, non-ASCII, nulls, arrays.
    const name = `it's a "quote" \\ back?slash ? $1 :name; -- ação ☃`;
    const widget = { id: randomUUID(), name };
    const payload = { id: widget.id, name, list: [1, null, 'x?'], nested: { empty: {}, none: null } };
    const event = outboxRow({ exchange: EXCHANGE, routingKey: 'widget.created', payload });
    await insertTogether(sqlOf(orm), [rowsOf(WidgetSchema, [widget]), rowsOf(OutboxMessageSchema, [event])]);
    relay.wake();
    const [stored] = await orm.em
      .fork()
      .execute<Widget[]>(`select id, name from ${SCHEMA}.widgets where id = ?`, [widget.id]);
    expect(stored).toEqual(widget);
    await waitFor(() => rawBodies.get(event.id), { what: 'the event published' });
    expect(rawBodies.get(event.id)).toEqual(payload);
  });

  it('stores nothing of a statement that fails', async () => {
    const widget = { id: randomUUID(), name: 'twice' };
    const event = outboxRow({ exchange: EXCHANGE, routingKey: 'widget.created', payload: { id: widget.id } });
    // The same widget twice: the primary key refuses the second, and the event goes with it.
    await expect(
      insertTogether(sqlOf(orm), [
        rowsOf(OutboxMessageSchema, [event]),
        rowsOf(WidgetSchema, [widget, widget]),
      ]),
    ).rejects.toMatchObject({ code: '23505' });
    const [row] = await orm.em
      .fork()
      .execute<Array<{ n: string }>>(`select count(*) as n from ${SCHEMA}.outbox where id = ?`, [event.id]);
    expect(Number(row?.n)).toBe(0);
  });

  it('publishes nothing when the transaction rolls back', async () => {
    const before = await relay.pending();
    await expect(createWidget('never', true)).rejects.toThrow('rolled back');
    expect(await relay.pending()).toBe(before);
    const rows = await orm.em.fork().execute(`select 1 from ${SCHEMA}.widgets where name = 'never'`);
    expect(rows).toHaveLength(0);
  });

  it('keeps events while RabbitMQ is away and delivers each exactly once when it is back', async () => {
    await proxy.cut();
    await waitFor(() => !producer.isConnected(), { what: 'producer to notice the outage' });
    const ids: string[] = [];
    for (let i = 0; i < 20; i += 1) ids.push(await createWidget(`outage-${i}`));
    expect(await relay.pending()).toBeGreaterThanOrEqual(20);

    await proxy.restore();
    await waitFor(async () => (await Promise.all(ids.map(effectsFor))).every((n) => n === 1), {
      timeoutMs: 20_000,
      what: 'all effects',
    });
    expect(await Promise.all(ids.map(effectsFor))).toEqual(ids.map(() => 1));
    await waitFor(async () => (await relay.pending()) === 0 || null, { what: 'outbox drained' });
  });

  it('lets several relays share one outbox without publishing a row twice', async () => {
    const second = new OutboxRelay({
      orm,
      schema: SCHEMA,
      broker: consumer,
      logger,
      metrics,
      pollIntervalMs: 20,
    });
    second.start();
    try {
      const ids = await Promise.all(Array.from({ length: 30 }, (_, i) => createWidget(`replica-${i}`)));
      await waitFor(async () => (await Promise.all(ids.map(effectsFor))).every((n) => n === 1), {
        what: 'effects',
      });
      await waitFor(async () => (await relay.pending()) === 0 || null, { what: 'outbox drained' });
      const rows = await orm.em
        .fork()
        .execute<Array<{ message_id: string }>>(
          `select message_id from ${SCHEMA}.effects where widget_id = any(?::uuid[])`,
          [`{${ids.join(',')}}`],
        );
      for (const { message_id } of rows) expect(rawDeliveries.get(message_id)).toBe(1);
    } finally {
      await second.stop();
    }
  });
});

describe('the relay under load', () => {
  it('drains at most once per interval, and publishes what waits out the interval when it stops', async () => {
    // The file's relay would publish the row at once: this one alone serves the outbox meanwhile.
    await relay.stop();
    const paced = new OutboxRelay({
      orm,
      schema: SCHEMA,
      broker: producer,
      logger,
      metrics,
      pollIntervalMs: 60_000,
      minIntervalMs: 60_000,
    });
    try {
      paced.start(); // its first drain runs at once
      const id = await createWidget('paced');
      const [row] = await orm.em
        .fork()
        .execute<Array<{ id: string }>>(`select id from ${SCHEMA}.outbox where payload->>'id' = ?`, [id]);
      // Nothing to await for an event that must not come: a bounded look, well past a drain's time.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(rawDeliveries.has(row?.id as string)).toBe(false);
      await paced.stop();
      await waitFor(() => rawDeliveries.get(row?.id as string), { what: 'the event published at stop' });
      expect(rawDeliveries.get(row?.id as string)).toBe(1);
    } finally {
      await paced.stop();
      relay = new OutboxRelay({
        orm,
        schema: SCHEMA,
        broker: producer,
        logger,
        metrics,
        pollIntervalMs: 100,
      });
      relay.start();
    }
  });
});

describe('waking the relay', () => {
  it('wakes it when the outermost transaction commits, not when a nested one does', async () => {
    // Without its fallback poll, this relay publishes a row only when a commit wakes it.
    await relay.stop();
    const woken = new OutboxRelay({
      orm,
      schema: SCHEMA,
      broker: producer,
      logger,
      metrics,
      pollIntervalMs: 60_000,
    });
    try {
      woken.start();
      const id = randomUUID();
      await orm.em.fork().transactional(async (outer) => {
        await outer.transactional(async (inner) => {
          await inner.execute(`insert into ${SCHEMA}.widgets (id, name) values (?, ?)`, [id, 'nested']);
          enqueue(inner, {
            exchange: EXCHANGE,
            routingKey: 'widget.created',
            payload: { id, name: 'nested' },
          });
        });
        // Released, the savepoint's rows are still invisible to the relay: a drain now finds nothing.
        expect(
          await sqlOf(orm).query(`select id from ${SCHEMA}.outbox where payload->>'id' = $1`, [id]),
        ).toEqual([]);
      });
      await waitFor(() => effectsFor(id), { what: 'the event published at the outer commit' });
      expect(await effectsFor(id)).toBe(1);
    } finally {
      await woken.stop();
      relay = new OutboxRelay({
        orm,
        schema: SCHEMA,
        broker: producer,
        logger,
        metrics,
        pollIntervalMs: 100,
      });
      relay.start();
    }
  });
});

describe('a transaction of plain statements (sqlOf)', () => {
  const countOf = async (name: string) =>
    Number(
      (
        await sqlOf(orm).query<{ n: string }>(`select count(*) as n from ${SCHEMA}.widgets where name = $1`, [
          name,
        ])
      )[0]?.n,
    );

  it('commits what its opening statement and its work wrote, and hands over the opening rows', async () => {
    const name = `tx-${randomUUID()}`;
    const sql = sqlOf(orm);
    const result = await sql.transaction<{ id: string }, string>(
      `insert into ${SCHEMA}.widgets (id, name) values ('${randomUUID()}', '${name}') returning id`,
      async (rows, query) => {
        await query(`insert into ${SCHEMA}.widgets (id, name) values ($1, $2)`, [randomUUID(), name]);
        return rows[0]?.id ?? 'none';
      },
    );
    expect(result).toMatch(/^[0-9a-f-]{36}$/);
    expect(await countOf(name)).toBe(2);
  });

  it('rolls back when its work throws, and leaves no connection inside a transaction', async () => {
    const name = `tx-${randomUUID()}`;
    const sql = sqlOf(orm);
    await expect(
      sql.transaction(
        `insert into ${SCHEMA}.widgets (id, name) values ('${randomUUID()}', '${name}')`,
        async () => {
          throw new Error('publish failed');
        },
      ),
    ).rejects.toThrow('publish failed');
    // A failing opening statement aborts the transaction it opened: rolled back the same way.
    await expect(
      sql.transaction(`select * from ${SCHEMA}.no_such_table`, async () => 0),
    ).rejects.toMatchObject({ code: '42P01' });
    expect(await countOf(name)).toBe(0);
    // Every pooled connection answers outside a transaction (one left aborted would refuse this).
    const states = await Promise.all(
      Array.from({ length: 10 }, () =>
        sql.query<{ tx: string | null }>(`select txid_current_if_assigned() as tx`),
      ),
    );
    for (const [row] of states) expect(row).toMatchObject({ tx: null });
  });
});

describe('idempotent consumer', () => {
  it('applies a message delivered twice only once', async () => {
    const widgetId = randomUUID();
    const messageId = randomUUID();
    const body = Buffer.from(JSON.stringify({ id: widgetId, name: 'dup' }));
    await producer.waitUntilConnected(5_000);
    await producer.publish(EXCHANGE, 'widget.created', body, { messageId });
    await producer.publish(EXCHANGE, 'widget.created', body, { messageId });
    await waitFor(() => (rawDeliveries.get(messageId) ?? 0) >= 2, { what: 'both copies delivered' });
    await waitFor(() => effectsFor(widgetId), { what: 'effect' });
    const processed = await orm.em
      .fork()
      .execute<Array<{ n: string }>>(
        `select count(*) as n from ${SCHEMA}.processed_messages where message_id = ?`,
        [messageId],
      );
    expect(Number(processed[0]?.n)).toBe(1);
    expect(await effectsFor(widgetId)).toBe(1);
  });

  it('retries a failing message and parks it in the dead-letter queue after the last attempt', async () => {
    const messageId = randomUUID();
    await producer.waitUntilConnected(5_000);
    await producer.publish(
      EXCHANGE,
      'widget.created',
      Buffer.from(JSON.stringify({ id: randomUUID(), name: 'poison' })),
      { messageId },
    );
    const connection = await amqp.connect(env.AMQP_URL as string);
    try {
      const channel = await connection.createChannel();
      const { main, dead } = queueNames(env.AMQP_NAMESPACE as string, 'widgets.consumer');
      const parked = await waitFor(async () => channel.get(dead, { noAck: true }), {
        what: 'parked message',
      });
      expect(parked.properties.messageId).toBe(messageId);
      // maxAttempts is 3: two rejections went through the retry queue, the third attempt parked it.
      const deaths = parked.properties.headers?.['x-death'] as Array<{
        count: number;
        queue: string;
        reason: string;
      }>;
      const rejected = deaths.find((d) => d.queue === main && d.reason === 'rejected');
      expect(Number(rejected?.count)).toBe(2);
    } finally {
      await connection.close();
    }
  });
});
