import { randomUUID } from 'node:crypto';
import { Migration } from '@mikro-orm/migrations';
import amqp from 'amqplib';
import {
  batchedIdempotentHandler,
  type Broker,
  createLogger,
  kitMigrationSql,
  queueNames,
  UnprocessableMessageError,
  type IncomingMessage,
  processedMessagesCte,
  sqlOf,
  type BatchWrite,
  type MikroORM,
} from '@seller-api/service-kit';
import { openMigrated } from '../support/database';
import { testEnv } from '../support/env';
import { deleteQueues } from '../support/queues';
import { testBroker } from '../support/events';
import { waitFor } from '../support/wait';

const SCHEMA = 'kit_batched_test';
const EXCHANGE = 'gadgets.events';
const QUEUE = 'gadgets.consumer';

class Init extends Migration {
  override async up(): Promise<void> {
    for (const sql of kitMigrationSql(SCHEMA)) this.addSql(sql);
    this.addSql(
      `create table if not exists ${SCHEMA}.effects (message_id text not null, gadget_id uuid not null)`,
    );
  }
}

const env = testEnv();
const logger = createLogger('batched-consumer-test', 'silent');
const topology = {
  exchanges: [EXCHANGE],
  queues: [
    {
      name: QUEUE,
      bindings: [{ exchange: EXCHANGE, pattern: 'gadget.*' }],
      prefetch: 64,
      retryDelayMs: 50,
      maxAttempts: 3,
    },
  ],
};

let orm: MikroORM;
let producer: Broker;
let consumer: Broker;
/** How many messages each call of the write got. */
const batchSizes: number[] = [];

// The burst published before the consumer starts: it finds them all waiting in its queue.
const burst = Array.from({ length: 30 }, () => ({ messageId: randomUUID(), gadgetId: randomUUID() }));
const poisonId = randomUUID();
const twiceId = randomUUID();
const twiceGadget = randomUUID();
const unnamedId = randomUUID();

/** The consumer knows one message name; any other is parked at once, before it joins a batch. */
function readGadget(message: IncomingMessage): { id: string } {
  if (message.name !== 'gadget.made') throw new UnprocessableMessageError(`unknown ${message.name}`);
  return message.payload as { id: string };
}

/** The test's effects: one row per new message, written with the recording of the batch's ids. */
const write: BatchWrite<{ id: string }> = async (messages) => {
  batchSizes.push(messages.length);
  const rows = await sqlOf(orm).query<{ message_id: string }>(
    `with ${processedMessagesCte(SCHEMA)},
       stored as (
         insert into ${SCHEMA}.effects (message_id, gadget_id)
         select e.message_id, e.gadget_id from json_to_recordset($3::json) as e(message_id text, gadget_id uuid)
          where e.message_id in (select message_id from fresh))
     select message_id from fresh`,
    [
      QUEUE,
      messages.map((m) => m.message.id),
      JSON.stringify(
        messages.map((m) => ({
          message_id: m.message.id,
          gadget_id: m.value.id,
        })),
      ),
    ],
  );
  return new Set(rows.map((r) => r.message_id));
};

async function effects(where: string, values: unknown[]): Promise<number> {
  const rows = await sqlOf(orm).query<{ n: number }>(
    `select count(*)::int as n from ${SCHEMA}.effects where ${where}`,
    values,
  );
  return rows[0]?.n ?? 0;
}

const publish = (messageId: string, id: string) =>
  producer.publish(EXCHANGE, 'gadget.made', Buffer.from(JSON.stringify({ id })), { messageId });

beforeAll(async () => {
  orm = await openMigrated(env, {
    schema: SCHEMA,
    entities: [],
    migrations: [{ name: 'Init', class: Init }],
    logger,
  });
  producer = testBroker(env, logger, topology);
  consumer = testBroker(env, logger, topology);
  await producer.start();
  await producer.waitUntilConnected(5_000);
  // Messages of an earlier run of this file would be counted in the batches: start from an empty queue.
  const connection = await amqp.connect(env.AMQP_URL as string);
  const channel = await connection.createChannel();
  for (const queue of Object.values(queueNames(env.AMQP_NAMESPACE as string, QUEUE)))
    await channel.purgeQueue(queue);
  await connection.close();
  // The poison message sits in the middle of the burst: its gadget id is no uuid, so any statement
  // that holds it fails. The duplicate comes twice in the same burst.
  for (const [i, { messageId, gadgetId }] of burst.entries()) {
    await publish(messageId, gadgetId);
    if (i === 10) await publish(poisonId, 'not-a-uuid');
    if (i === 20 || i === 21) await publish(twiceId, twiceGadget);
    if (i === 25)
      await producer.publish(EXCHANGE, 'gadget.unheard_of', Buffer.from('{}'), { messageId: unnamedId });
  }
  await consumer.start();
  await consumer.consume(QUEUE, batchedIdempotentHandler(QUEUE, readGadget, write));
});

afterAll(async () => {
  await producer.close();
  await consumer.close();
  await orm.close(true);
  await deleteQueues(env.AMQP_URL as string, env.AMQP_NAMESPACE as string, [QUEUE]);
});

describe('batched idempotent consumer', () => {
  it('writes a burst in batches, each message once, a bad one failing alone', async () => {
    const ids = burst.map((m) => m.messageId);
    await waitFor(async () => (await effects('message_id = any($1::text[])', [ids])) === ids.length, {
      what: 'every good message of the burst applied',
    });
    for (const { messageId, gadgetId } of burst)
      expect(await effects('message_id = $1 and gadget_id = $2', [messageId, gadgetId])).toBe(1);
    // Messages waiting together went out together: fewer writes than messages.
    expect(Math.max(...batchSizes)).toBeGreaterThan(1);
    expect(await effects('gadget_id = $1', [twiceGadget])).toBe(1);
  });

  it('parks a message it cannot name at once, and retries the bad one alone before parking it', async () => {
    const connection = await amqp.connect(env.AMQP_URL as string);
    const dead = queueNames(env.AMQP_NAMESPACE as string, QUEUE).dead;
    try {
      const channel = await connection.createChannel();
      const parked: amqp.GetMessage[] = [];
      await waitFor(
        async () => {
          const message = await channel.get(dead, { noAck: true });
          if (message) parked.push(message);
          return parked.length === 2;
        },
        { what: 'the two parked messages' },
      );
      const byId = new Map(parked.map((m) => [m.properties.messageId as string, m]));
      // The unnamed one was never retried: no x-death, and the reason is on it.
      const unnamed = byId.get(unnamedId);
      expect(unnamed?.properties.headers?.['x-death']).toBeUndefined();
      expect(unnamed?.properties.headers?.['x-parked-reason']).toBe('unknown gadget.unheard_of');
      expect(unnamed?.properties.type).toBe('gadget.unheard_of');
      // The poison one failed its three attempts, the last two after a trip through the retry queue.
      const poison = byId.get(poisonId);
      const deaths = poison?.properties.headers?.['x-death'] as Array<{ reason: string; count: number }>;
      expect(deaths.find((d) => d.reason === 'rejected')?.count).toBe(2);
      expect(poison?.properties.type).toBe('gadget.made');
      // Nothing else was parked: the good messages of its batch were written when it was retried alone.
      expect(await channel.get(dead, { noAck: true })).toBe(false);
      const processed = await orm.em
        .fork()
        .execute<Array<{ n: string }>>(
          `select count(*) as n from ${SCHEMA}.processed_messages where message_id = ?`,
          [poisonId],
        );
      expect(Number(processed[0]?.n)).toBe(0);
    } finally {
      await connection.close();
    }
  });
});
