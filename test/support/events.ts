import amqp from 'amqplib';
import { Broker, type BrokerOptions, type Logger, type Topology } from '@seller-api/service-kit';
import { waitFor } from './wait';

export interface CapturedMessage {
  routingKey: string;
  messageId: string;
  headers: Record<string, unknown>;
  payload: Record<string, unknown>;
}

/**
 * Reads what a service publishes: an exclusive queue bound to its exchange, created before the test
 * acts, so no message can be missed.
 */
export async function captureEvents(amqpUrl: string, namespace: string, exchange: string, pattern = '#') {
  const connection = await amqp.connect(amqpUrl);
  const channel = await connection.createChannel();
  await channel.assertExchange(`${namespace}${exchange}`, 'topic', { durable: true });
  const { queue } = await channel.assertQueue('', { exclusive: true });
  await channel.bindQueue(queue, `${namespace}${exchange}`, pattern);
  const messages: CapturedMessage[] = [];
  await channel.consume(
    queue,
    (m) => {
      if (!m) return;
      messages.push({
        routingKey: m.fields.routingKey,
        messageId: String(m.properties.messageId),
        headers: (m.properties.headers ?? {}) as Record<string, unknown>,
        payload: JSON.parse(m.content.toString('utf8')) as Record<string, unknown>,
      });
    },
    { noAck: true },
  );
  return {
    messages,
    /** Messages matching `predicate`, once at least `count` have arrived. */
    async waitFor(
      predicate: (m: CapturedMessage) => boolean,
      count = 1,
      what = 'events',
    ): Promise<CapturedMessage[]> {
      return waitFor(
        () => {
          const found = messages.filter(predicate);
          return found.length >= count ? found : null;
        },
        { what },
      );
    },
    close: () => connection.close(),
  };
}

/** A kit Broker on the test file's own RabbitMQ namespace (testEnv), for `topology`. */
export function testBroker(
  env: NodeJS.ProcessEnv,
  logger: Logger,
  topology: Topology,
  options: Partial<BrokerOptions> = {},
): Broker {
  return new Broker({
    url: env.AMQP_URL as string,
    namespace: env.AMQP_NAMESPACE as string,
    logger,
    topology,
    ...options,
  });
}
