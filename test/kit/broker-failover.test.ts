import { randomUUID } from 'node:crypto';
import { brokerAddresses, createLogger, type Broker } from '@seller-api/service-kit';
import { testEnv } from '../support/env';
import { testBroker } from '../support/events';
import { deleteQueues } from '../support/queues';
import { TcpProxy, hostPort, viaProxy } from '../support/tcp-proxy';
import { waitFor } from '../support/wait';

/**
 * A broker given a cluster's nodes (docs/messaging.md, "A cluster"): it connects to the first that
 * answers and, when that node goes away, moves to the next one, where publishing with confirms and its
 * consumers resume. Each "node" here is a TCP hop in front of the machine's RabbitMQ, cut as a stopped
 * node would be.
 */

const env = testEnv();
const logger = createLogger('broker-failover-test', 'silent');
const EXCHANGE = 'failover.events';
const QUEUE = 'failover.consumer';
const topology = {
  exchanges: [EXCHANGE],
  queues: [{ name: QUEUE, bindings: [{ exchange: EXCHANGE, pattern: 'thing.*' }], retryDelayMs: 50 }],
};

const { host, port } = hostPort(env.AMQP_URL as string, 5672);
const nodes = [new TcpProxy(host, port), new TcpProxy(host, port)];
const brokers: Broker[] = [];
const received: string[] = [];

/** A port nothing listens on: a node that is down from the start. */
async function deadPort(): Promise<number> {
  const probe = new TcpProxy(host, port);
  const free = await probe.start();
  await probe.stop();
  return free;
}

function brokerOn(url: string | string[]): Broker {
  const broker = testBroker(env, logger, topology, { url, reconnectDelayMs: 20 });
  brokers.push(broker);
  return broker;
}

const publish = (broker: Broker, id: string) =>
  broker.publish(EXCHANGE, 'thing.happened', Buffer.from(JSON.stringify({ id })), { messageId: id });

beforeAll(async () => {
  for (const node of nodes) await node.start();
});

afterAll(async () => {
  for (const broker of brokers) await broker.close();
  for (const node of nodes) await node.stop();
  await deleteQueues(env.AMQP_URL as string, env.AMQP_NAMESPACE as string, [QUEUE]);
});

describe('a broker with several addresses', () => {
  it('reads a list, or URLs separated by commas', () => {
    expect(brokerAddresses('amqp://a:1, amqp://b:2,,')).toEqual(['amqp://a:1', 'amqp://b:2']);
    expect(brokerAddresses(['amqp://a:1'])).toEqual(['amqp://a:1']);
  });

  it('skips a node that is down and connects to the next', async () => {
    const dead = viaProxy(env.AMQP_URL as string, await deadPort());
    const broker = brokerOn(`${dead},${viaProxy(env.AMQP_URL as string, nodes[1]!.port)}`);
    await broker.start();
    await broker.waitUntilConnected(10_000);
    expect(broker.connectedTo()).toBe(`127.0.0.1:${nodes[1]!.port}`);
  });

  it('moves to a surviving node when its node stops: confirms and consumers resume there', async () => {
    const urls = nodes.map((node) => viaProxy(env.AMQP_URL as string, node.port));
    const broker = brokerOn(urls);
    await broker.start();
    await broker.waitUntilConnected(10_000);
    expect(broker.connectedTo()).toBe(`127.0.0.1:${nodes[0]!.port}`);
    await broker.consume(QUEUE, async (message) => {
      received.push(String(message.properties.messageId));
    });
    const before = randomUUID();
    await publish(broker, before);
    await waitFor(() => received.includes(before), { what: 'the message sent before the stop' });

    await nodes[0]!.cut();
    await waitFor(() => broker.connectedTo() === `127.0.0.1:${nodes[1]!.port}`, {
      what: 'the move to the second node',
    });
    // A publish confirmed on the new node, and the consumer, started again there, gets it.
    const after = randomUUID();
    await publish(broker, after);
    await waitFor(() => received.includes(after), { what: 'the message sent after the move' });
    await nodes[0]!.restore();
  });
});
