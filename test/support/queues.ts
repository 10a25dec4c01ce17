import amqp from 'amqplib';
// From source, not the package: jest's global setup resolves modules without the test mapping, and
// runs before anything is built.
import { classicQueueNames, queueNames } from '../../packages/service-kit/src/queue-names';

/**
 * Deletes the queues of `logical` names in `namespace` (quorum, retry and dead, and the classic names of
 * earlier builds) and their dead-letter exchanges. Each quorum queue holds three of RabbitMQ's file handles for as long as it exists;
 * with the default limit of 1,024 open files about 300 of them leave none for new connections, so a
 * test file removes its queues when it is done.
 */
export async function deleteQueues(amqpUrl: string, namespace: string, logical: string[]): Promise<void> {
  const connection = await amqp.connect(amqpUrl);
  try {
    // Deleting a queue that does not exist is no error: one channel, every delete in flight at once.
    const channel = await connection.createChannel();
    const queues = logical.flatMap((name) => [
      ...Object.values(queueNames(namespace, name)),
      ...Object.values(classicQueueNames(namespace, name)),
    ]);
    await Promise.all(queues.map((queue) => channel.deleteQueue(queue)));
    // And each queue's own dead-letter exchange (the kit's broker.ts), which nothing else removes.
    await Promise.all(logical.map((name) => channel.deleteExchange(`${namespace}${name}.dlx`)));
  } finally {
    await connection.close();
  }
}
