import { randomUUID } from 'node:crypto';
import { Migration } from '@mikro-orm/migrations';
import amqp from 'amqplib';
import {
  type Broker,
  OutboxRelay,
  createLogger,
  createMetrics,
  currentTraceContext,
  enqueue,
  kitMigrationSql,
  outboxTraceContextSql,
  tracingEnabled,
  type MikroORM,
} from '@seller-api/service-kit';
import { openMigrated } from '../support/database';
import { testEnv } from '../support/env';
import { testBroker } from '../support/events';
import { waitFor } from '../support/wait';

// No SDK in this file: what a service with OTEL_EXPORTER_OTLP_ENDPOINT unset does.
const SCHEMA = 'kit_untraced_test';
const EXCHANGE = 'gadgets.events';

class Init extends Migration {
  override async up(): Promise<void> {
    for (const sql of kitMigrationSql(SCHEMA)) this.addSql(sql);
  }
}
class TraceContext extends Migration {
  override async up(): Promise<void> {
    for (const sql of outboxTraceContextSql(SCHEMA)) this.addSql(sql);
  }
}

const env = testEnv();
const logger = createLogger('untraced-test', 'silent');
const metrics = createMetrics('untraced-test');

let orm: MikroORM;
let broker: Broker;
let relay: OutboxRelay;
let connection: amqp.ChannelModel;
const received = new Map<string, Record<string, unknown>>();

beforeAll(async () => {
  orm = await openMigrated(env, {
    schema: SCHEMA,
    entities: [],
    migrations: [
      { name: 'Init', class: Init },
      { name: 'TraceContext', class: TraceContext },
    ],
    logger,
  });
  broker = testBroker(env, logger, { exchanges: [EXCHANGE], queues: [] });
  await broker.start();
  connection = await amqp.connect(env.AMQP_URL as string);
  const channel = await connection.createChannel();
  const { queue } = await channel.assertQueue('', { exclusive: true });
  await channel.bindQueue(queue, broker.name(EXCHANGE), '#');
  await channel.consume(queue, (m) => {
    if (!m) return;
    received.set(m.properties.messageId as string, m.properties.headers ?? {});
    channel.ack(m);
  });
  relay = new OutboxRelay({ orm, schema: SCHEMA, broker, logger, metrics, pollIntervalMs: 50 });
  relay.start();
});

afterAll(async () => {
  await relay.stop();
  await broker.close();
  await connection.close();
  await orm.close(true);
});

describe('with tracing off', () => {
  it('stores no trace context and publishes no traceparent', async () => {
    expect(tracingEnabled()).toBe(false);
    expect(currentTraceContext()).toBeNull();
    const id = randomUUID();
    await orm.em.fork().transactional(async (em) => {
      const row = enqueue(em, { id, exchange: EXCHANGE, routingKey: 'gadget.made', payload: { id } });
      expect(row.traceContext).toBeNull();
    });
    const headers = await waitFor(() => received.get(id), { what: 'the message' });
    expect(headers['x-occurred-at']).toEqual(expect.any(String));
    expect(headers).not.toHaveProperty('traceparent');
  });

  it('passes on, unchanged, the trace context a traced replica stored with the row', async () => {
    const id = randomUUID();
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    await orm.em
      .fork()
      .execute(
        `insert into ${SCHEMA}.outbox (id, exchange, routing_key, payload, headers, trace_context) values (?, ?, ?, ?, ?, ?)`,
        [id, EXCHANGE, 'gadget.made', '{}', '{"x-seller-id":"s1"}', JSON.stringify({ traceparent })],
      );
    relay.wake();
    const headers = await waitFor(() => received.get(id), { what: 'the message' });
    expect(headers).toMatchObject({ 'x-seller-id': 's1', traceparent });
  });
});
