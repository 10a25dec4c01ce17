import { randomUUID } from 'node:crypto';
import type { Duplex } from 'node:stream';
import amqp, { type ChannelModel } from 'amqplib';
import { type Broker, createLogger } from '@seller-api/service-kit';
import { testEnv } from '../support/env';
import { testBroker } from '../support/events';

/**
 * The broker corks the socket around each pass of amqplib's multiplexer (coalesceWrites in broker.ts),
 * which reaches into amqplib's internals. This proves, against the amqplib that is installed, that a
 * burst of publishes still leaves in a few socket writes, and that without it each publish is its own.
 */
const EXCHANGE = 'coalesce.events';
const BURST = 50;

const env = testEnv();
const logger = createLogger('coalesced-writes-test', 'silent');

/** Counts the calls that reach the socket (each one system call) while `act` runs. */
async function socketWrites(model: ChannelModel, act: () => Promise<unknown>): Promise<number> {
  const stream = (model as unknown as { connection: { stream: Duplex } }).connection.stream;
  const socket = stream as unknown as {
    _write: (...args: unknown[]) => void;
    _writev?: (...args: unknown[]) => void;
  };
  const write = socket._write;
  const writev = socket._writev;
  let calls = 0;
  socket._write = function (this: unknown, ...args: unknown[]) {
    calls += 1;
    return write.apply(this, args);
  };
  if (writev) {
    socket._writev = function (this: unknown, ...args: unknown[]) {
      calls += 1;
      return writev.apply(this, args);
    };
  }
  try {
    await act();
  } finally {
    socket._write = write;
    socket._writev = writev;
  }
  return calls;
}

let broker: Broker;

beforeAll(async () => {
  broker = testBroker(env, logger, { exchanges: [EXCHANGE], queues: [] });
  await broker.start();
  await broker.waitUntilConnected(10_000);
});

afterAll(async () => {
  await broker.close();
});

test('a burst of publishes through the broker leaves in a few socket writes', async () => {
  const model = (broker as unknown as { connection: ChannelModel }).connection;
  const calls = await socketWrites(model, () =>
    Promise.all(
      Array.from({ length: BURST }, (_, i) =>
        broker.publish(EXCHANGE, 'thing.happened', Buffer.from(`{"i":${i}}`), {
          messageId: randomUUID(),
        }),
      ),
    ),
  );
  // One pass of the multiplexer, one writev; a second if a publish lands after the first pass.
  expect(calls).toBeGreaterThan(0);
  expect(calls).toBeLessThanOrEqual(3);
});

test('without the cork each publish of the burst is its own socket write (control)', async () => {
  const model = await amqp.connect(env.AMQP_URL as string);
  try {
    const channel = await model.createConfirmChannel();
    const exchange = `${env.AMQP_NAMESPACE}${EXCHANGE}`;
    await channel.assertExchange(exchange, 'topic', { durable: true });
    const calls = await socketWrites(model, async () => {
      for (let i = 0; i < BURST; i++) {
        channel.publish(exchange, 'thing.happened', Buffer.from(`{"i":${i}}`), { messageId: randomUUID() });
      }
      await channel.waitForConfirms();
    });
    expect(calls).toBeGreaterThanOrEqual(BURST / 2);
  } finally {
    await model.close();
  }
});
