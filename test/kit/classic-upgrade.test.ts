import { randomUUID } from 'node:crypto';
import amqp, { type Channel, type ChannelModel } from 'amqplib';
import {
  classicQueueNames,
  createLogger,
  queueNames,
  type Broker,
  type Topology,
} from '@seller-api/service-kit';
import { testEnv } from '../support/env';
import { deleteQueues } from '../support/queues';
import { testBroker } from '../support/events';
import { waitFor } from '../support/wait';

/**
 * A deployment whose queues are classic queues (what earlier builds declared) moves to the quorum
 * queues without losing a message: what waits in the classic queue, its retry queue and its dead
 * queue all reach the new consumer or the new dead queue, and the classic queues go away once empty
 * and no old replica consumes them.
 */
const env = testEnv();
const ns = env.AMQP_NAMESPACE as string;
const logger = createLogger('classic-upgrade-test', 'silent');
const EXCHANGE = 'things.events';
const QUEUE = 'things.consumer';
const topology: Topology = {
  exchanges: [EXCHANGE],
  queues: [{ name: QUEUE, bindings: [{ exchange: EXCHANGE, pattern: 'thing.*' }], retryDelayMs: 200 }],
};
const classic = classicQueueNames(ns, QUEUE);
const quorum = queueNames(ns, QUEUE);

let connection: ChannelModel;
let channel: Channel;
// Two replicas of the new build, both draining the classic queue.
const brokers: Broker[] = [];
const handled: string[] = [];

async function publish(exchange: string, routingKey: string, messageId: string): Promise<void> {
  const confirm = await connection.createConfirmChannel();
  await new Promise<void>((resolve, reject) =>
    confirm.publish(exchange, routingKey, Buffer.from('{}'), { messageId, type: 'thing.made' }, (err) =>
      err ? reject(err) : resolve(),
    ),
  );
  await confirm.close();
}

/** Whether a queue exists (a passive declare on a channel of its own: a miss closes the channel). */
async function exists(queue: string): Promise<boolean> {
  const probe = await connection.createChannel();
  probe.on('error', () => undefined);
  try {
    await probe.checkQueue(queue);
    await probe.close();
    return true;
  } catch {
    return false;
  }
}

beforeAll(async () => {
  connection = await amqp.connect(env.AMQP_URL as string);
  channel = await connection.createChannel();
  // Left by an earlier run of this file.
  for (const queue of [...Object.values(classic), ...Object.values(quorum)]) await channel.deleteQueue(queue);
});
afterAll(async () => {
  await Promise.all(brokers.map((b) => b.close()));
  await connection.close();
  await deleteQueues(env.AMQP_URL as string, ns, [QUEUE]);
});

describe('upgrade from classic queues', () => {
  it('drains the classic queues into the quorum ones, then removes them', async () => {
    // What an earlier build declared: classic queues with the plain names.
    const dlx = `${ns}dlx`;
    const events = `${ns}${EXCHANGE}`;
    await channel.assertExchange(dlx, 'direct', { durable: true });
    await channel.assertExchange(events, 'topic', { durable: true });
    await channel.assertQueue(classic.main, {
      durable: true,
      arguments: { 'x-dead-letter-exchange': dlx, 'x-dead-letter-routing-key': classic.retry },
    });
    await channel.assertQueue(classic.retry, {
      durable: true,
      arguments: {
        'x-message-ttl': 300,
        'x-dead-letter-exchange': '',
        'x-dead-letter-routing-key': classic.main,
      },
    });
    await channel.bindQueue(classic.retry, dlx, classic.retry);
    await channel.assertQueue(classic.dead, { durable: true });
    await channel.bindQueue(classic.dead, dlx, classic.dead);
    await channel.bindQueue(classic.main, events, 'thing.*');
    const waiting = Array.from({ length: 5 }, () => randomUUID());
    for (const id of waiting) await publish(events, 'thing.made', id);
    const retrying = randomUUID();
    await publish(dlx, classic.retry, retrying);
    const parked = randomUUID();
    await publish(dlx, classic.dead, parked);
    // An old replica still consumes the classic queue, holding one message it has not acked.
    const oldReplica = await connection.createChannel();
    await oldReplica.prefetch(1);
    const held = new Promise<string>((resolve) => {
      void oldReplica.consume(classic.main, (m) => {
        if (m) resolve(String(m.properties.messageId));
      });
    });
    const heldId = await held;

    for (let i = 0; i < 2; i += 1) {
      const broker = testBroker(env, logger, topology, { classicUpgradeIntervalMs: 100 });
      brokers.push(broker);
      await broker.start();
      await broker.consume(QUEUE, async (message) => {
        handled.push(String(message.properties.messageId));
      });
    }
    const others = [...waiting, retrying].filter((id) => id !== heldId);
    await waitFor(() => others.every((id) => handled.includes(id)), { what: 'the classic messages handled' });
    // Unbound: a message published now reaches the quorum queue only.
    const fresh = randomUUID();
    await publish(events, 'thing.made', fresh);
    await waitFor(() => handled.includes(fresh), { what: 'a new message handled' });
    expect(handled.filter((id) => id === fresh)).toHaveLength(1);
    // The parked message moved to the new dead queue, saying from where.
    const moved = await waitFor(async () => channel.get(quorum.dead, { noAck: true }), {
      what: 'the moved parked message',
    });
    expect(moved.properties.messageId).toBe(parked);
    expect(moved.properties.headers?.['x-moved-from']).toBe(classic.dead);
    // The old replica still consumes the classic queue: it stays.
    expect(await exists(classic.main)).toBe(true);
    // Once it leaves, its unacked message goes back to the classic queue, is handled, and the classic
    // queues are removed.
    await oldReplica.close();
    await waitFor(() => handled.includes(heldId), { what: 'the old replica’s message handled' });
    await waitFor(
      async () =>
        !(await exists(classic.main)) && !(await exists(classic.retry)) && !(await exists(classic.dead)),
      { what: 'the classic queues removed' },
    );
    // The queues in use are quorum queues: declaring them as classic ones is refused.
    for (const [queue, args] of [
      [quorum.dead, {}],
      [
        quorum.main,
        {
          // The queue's own dead-letter exchange (broker.ts): only the queue type differs.
          'x-dead-letter-exchange': `${ns}${QUEUE}.dlx`,
          'x-dead-letter-routing-key': quorum.retry,
          'x-dead-letter-strategy': 'at-least-once',
          'x-overflow': 'reject-publish',
        },
      ],
    ] as const) {
      const probe = await connection.createChannel();
      probe.on('error', () => undefined);
      await expect(
        probe.assertQueue(queue, { durable: true, arguments: { ...args, 'x-queue-type': 'classic' } }),
      ).rejects.toThrow(/inequivalent arg 'x-queue-type'/);
    }
  });
});
