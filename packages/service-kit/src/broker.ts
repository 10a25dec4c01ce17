import { EventEmitter } from 'node:events';
import amqp, {
  type Channel,
  type ChannelModel,
  type ConfirmChannel,
  type ConsumeMessage,
  type Message,
  type Options,
} from 'amqplib';
import { ClassicQueueUpgrade } from './classic-upgrade';
import { UnprocessableMessageError, deathCount, messageName } from './dead-lettering';
import type { Logger } from './logger';
import { queueNames, type QueueNames } from './queue-names';

export interface QueueSpec {
  /** Logical name; the broker prefixes it with the namespace. */
  name: string;
  bindings: Array<{ exchange: string; pattern: string }>;
  prefetch?: number;
  /** Delay before a failed message is tried again (a TTL queue dead-letters it back). */
  retryDelayMs?: number;
  /** After this many failures the message is parked in the dead queue for an operator. */
  maxAttempts?: number;
}

export interface Topology {
  exchanges: string[];
  queues: QueueSpec[];
}

export interface PublishOptions {
  messageId: string;
  headers?: Record<string, unknown>;
  timestamp?: number;
  type?: string;
}

export type MessageHandler = (message: ConsumeMessage) => Promise<void>;

/** The three queues of one topology queue: where it is consumed, where failures wait, where they park. */
export interface BrokerOptions {
  /**
   * The broker's address, or the addresses of a cluster's nodes (a list, or one string with the URLs
   * separated by commas, as AMQP_URL takes them): each connection goes to the next one after the
   * address that failed or closed, so a node's loss moves the service to a surviving node.
   */
  url: string | readonly string[];
  namespace: string;
  logger: Logger;
  topology: Topology;
  /** Base delay between reconnection attempts, doubled up to 10 s. */
  reconnectDelayMs?: number;
  /** How often classic queues of an earlier build are looked for and emptied (classic-upgrade.ts). */
  classicUpgradeIntervalMs?: number;
}

/** The addresses of `url`: a list, or URLs separated by commas; blanks dropped. */
export function brokerAddresses(url: string | readonly string[]): string[] {
  const list = typeof url === 'string' ? url.split(',') : [...url];
  return list.map((one) => one.trim()).filter((one) => one.length > 0);
}

/** host:port of a broker URL, for logs (the URL carries credentials). */
function nodeOf(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname}:${parsed.port || (parsed.protocol === 'amqps:' ? '5671' : '5672')}`;
  } catch {
    return 'unparsable address';
  }
}

/**
 * The dead-letter exchange all queues shared before each queue had its own. A queue created then keeps
 * dead-lettering through it (its arguments cannot change), without our writing to it (see declare).
 */
const SHARED_DLX = 'dlx';

/**
 * One AMQP connection with a confirm channel for publishing and one channel per consumer. It reconnects
 * by itself, redeclares the topology and resumes its consumers, so callers never hold a dead channel.
 * Events: `consuming` (queue, active) and `handled` (queue, outcome, message id) for the metrics.
 */
export class Broker extends EventEmitter {
  private connection: ChannelModel | null = null;
  private publisher: ConfirmChannel | null = null;
  private readonly consumers = new Map<string, MessageHandler>();
  private closing = false;
  private connecting: Promise<void> | null = null;
  private retryTimer: NodeJS.Timeout | null = null;
  private attempt = 0;
  private readonly inFlight = new Set<Promise<unknown>>();
  private upgrade: ClassicQueueUpgrade | null = null;
  private readonly addresses: readonly string[];
  /** Index in `addresses` of the node to connect to next. */
  private nextAddress = 0;
  /** Connections whose failure has moved nextAddress on: each moves it once, whoever sees it first. */
  private readonly steppedFrom = new WeakSet<ChannelModel>();

  constructor(private readonly options: BrokerOptions) {
    super();
    this.addresses = brokerAddresses(options.url);
    if (this.addresses.length === 0) throw new Error('Broker: no address to connect to');
  }

  /** The node connected to (host:port, never the credentials), or null. */
  connectedTo(): string | null {
    return this.connection ? this.current : null;
  }

  private current = '';

  name(logical: string): string {
    return `${this.options.namespace}${logical}`;
  }

  isConnected(): boolean {
    return this.publisher !== null;
  }

  /** Starts connecting; resolves once connected or after the first failure (it keeps trying). */
  async start(): Promise<void> {
    await this.connect().catch(() => undefined);
  }

  /** Resolves when connected, or rejects after `timeoutMs`. */
  async waitUntilConnected(timeoutMs: number): Promise<void> {
    if (this.isConnected()) return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.off('connected', onConnected);
        reject(new Error('broker not connected'));
      }, timeoutMs);
      const onConnected = () => {
        clearTimeout(timer);
        resolve();
      };
      this.once('connected', onConnected);
    });
  }

  private connect(): Promise<void> {
    if (this.connecting) return this.connecting;
    this.connecting = this.doConnect().finally(() => {
      this.connecting = null;
    });
    return this.connecting;
  }

  private async doConnect(): Promise<void> {
    if (this.closing) return;
    let connection: ChannelModel | null = null;
    const url = this.addresses[this.nextAddress % this.addresses.length] as string;
    const node = nodeOf(url);
    try {
      connection = await amqp.connect(url, { timeout: 5_000 });
      connection.on('error', (err: Error) =>
        this.options.logger.warn({ err: err.message }, 'amqp connection error'),
      );
      connection.on('close', () => this.onClosed(connection));
      coalesceWrites(connection);
      const publisher = await connection.createConfirmChannel();
      publisher.on('error', (err: Error) =>
        this.options.logger.warn({ err: err.message }, 'amqp channel error'),
      );
      await this.declare(publisher, connection);
      this.connection = connection;
      this.current = node;
      this.publisher = publisher;
      this.upgrade?.stop();
      this.upgrade = new ClassicQueueUpgrade(this, connection, {
        namespace: this.options.namespace,
        logger: this.options.logger,
        intervalMs: this.options.classicUpgradeIntervalMs ?? 60_000,
      });
      for (const [queue, handler] of this.consumers) await this.startConsumer(queue, handler);
      this.attempt = 0;
      this.options.logger.info({ broker: node }, 'connected to RabbitMQ');
      this.emit('connected');
    } catch (err) {
      this.options.logger.warn(
        { err: (err as Error).message, broker: node },
        'cannot connect to RabbitMQ, will retry',
      );
      // An adopted connection's close may have moved on already (amqplib emits it during the failed
      // call): one step per connection, not two.
      this.stepFrom(connection);
      if (connection) await connection.close().catch(() => undefined);
      this.scheduleReconnect();
      throw err;
    }
  }

  private onClosed(connection: ChannelModel | null): void {
    if (connection !== this.connection) return;
    this.connection = null;
    this.publisher = null;
    this.upgrade?.stop();
    this.upgrade = null;
    // The node went away (stopped, partitioned, restarted): the next connection tries another first.
    this.stepFrom(connection);
    this.emit('disconnected');
    if (!this.closing) {
      this.options.logger.warn('RabbitMQ connection closed, reconnecting');
      this.scheduleReconnect();
    }
  }

  /** Moves to the next address, once for a given connection (null: one that never opened). */
  private stepFrom(connection: ChannelModel | null): void {
    if (connection) {
      if (this.steppedFrom.has(connection)) return;
      this.steppedFrom.add(connection);
    }
    this.nextAddress += 1;
  }

  private scheduleReconnect(): void {
    if (this.closing || this.retryTimer) return;
    const base = this.options.reconnectDelayMs ?? 250;
    const delay = Math.min(10_000, base * 2 ** Math.min(this.attempt, 6));
    this.attempt += 1;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.connect().catch(() => undefined);
    }, delay);
    this.retryTimer.unref();
  }

  /**
   * Each queue has a dead-letter exchange of its own, `<namespace><name>.dlx`, which routes by queue name
   * to its retry queue (failures), back to the main queue (a retry's TTL ran out) and to its dead queue
   * (parked). Nothing is shared between services, so a service's broker user needs rights on its own
   * names only (docs/messaging.md, "Permissions"). Queues created before keep their arguments, which
   * cannot change in place: a main queue dead-letters through the shared `dlx`, a retry queue through
   * the default exchange, both set up then; declaring them again as they are needs no right on either.
   */
  private async declare(channel: ConfirmChannel, connection: ChannelModel): Promise<void> {
    const { topology } = this.options;
    for (const exchange of topology.exchanges)
      await this.assertExchangeIfAllowed(connection, this.name(exchange));
    for (const queue of topology.queues) {
      const names = this.queueNames(queue.name);
      const dlx = this.deadLetterExchange(queue.name);
      await channel.assertExchange(dlx, 'direct', { durable: true });
      // Quorum queues, so a RabbitMQ cluster replicates them. Dead-lettering "at least once" keeps a
      // failed message in its queue until the retry queue has confirmed it (and an expired retry until
      // the main queue has); it needs the reject-publish overflow (docs/messaging.md). The dead queue
      // is reached by a confirmed publish, not by dead-lettering (parkMessage).
      const quorum = {
        'x-queue-type': 'quorum',
        'x-dead-letter-strategy': 'at-least-once',
        'x-overflow': 'reject-publish',
      };
      const ttl = { 'x-message-ttl': queue.retryDelayMs ?? 1_000 };
      await this.assertQueueAsItIs(
        connection,
        names.main,
        { ...quorum, 'x-dead-letter-exchange': dlx, 'x-dead-letter-routing-key': names.retry },
        {
          ...quorum,
          'x-dead-letter-exchange': this.name(SHARED_DLX),
          'x-dead-letter-routing-key': names.retry,
        },
      );
      await this.assertQueueAsItIs(
        connection,
        names.retry,
        { ...quorum, ...ttl, 'x-dead-letter-exchange': dlx, 'x-dead-letter-routing-key': names.main },
        { ...quorum, ...ttl, 'x-dead-letter-exchange': '', 'x-dead-letter-routing-key': names.main },
      );
      await channel.assertQueue(names.dead, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
      for (const name of [names.main, names.retry, names.dead]) await channel.bindQueue(name, dlx, name);
      for (const binding of queue.bindings) {
        await channel.bindQueue(names.main, this.name(binding.exchange), binding.pattern);
      }
    }
  }

  /**
   * Declares a topic exchange; where our user may not (403: another service's exchange, which it only
   * reads from, docs/messaging.md "Permissions"), requires it to exist: until its producer has declared
   * it, this fails and the broker connects again later. Each attempt on a channel of its own, since a
   * refusal closes the channel.
   */
  private async assertExchangeIfAllowed(connection: ChannelModel, exchange: string): Promise<void> {
    try {
      await this.onOwnChannel(connection, (c) => c.assertExchange(exchange, 'topic', { durable: true }));
    } catch (err) {
      if ((err as { code?: number }).code !== 403) throw err;
      await this.onOwnChannel(connection, (c) => c.checkExchange(exchange));
    }
  }

  private async onOwnChannel<T>(
    connection: ChannelModel,
    work: (channel: Channel) => Promise<T>,
  ): Promise<T> {
    const channel = await connection.createChannel();
    channel.on('error', () => undefined);
    try {
      return await work(channel);
    } finally {
      await channel.close().catch(() => undefined);
    }
  }

  /**
   * Declares `queue` with `current` arguments or, when it exists with the `earlier` ones (RabbitMQ
   * refuses other arguments for an existing queue with 406 PRECONDITION_FAILED), as it is. Each attempt
   * on a channel of its own, since a refusal closes the channel.
   */
  private async assertQueueAsItIs(
    connection: ChannelModel,
    queue: string,
    current: Record<string, unknown>,
    earlier: Record<string, unknown>,
  ): Promise<void> {
    const attempt = (args: Record<string, unknown>) =>
      this.onOwnChannel(connection, (c) => c.assertQueue(queue, { durable: true, arguments: args }));
    try {
      await attempt(current);
    } catch (err) {
      if ((err as { code?: number }).code !== 406) throw err;
      await attempt(earlier);
    }
  }

  /** The dead-letter exchange of a topology queue: its own, written to by its consumer alone. */
  deadLetterExchange(logical: string): string {
    return this.name(`${logical}.dlx`);
  }

  /** The physical names of a topology queue in this broker's namespace. */
  queueNames(logical: string): QueueNames {
    return queueNames(this.options.namespace, logical);
  }

  /** Publishes and waits for the broker's confirm; rejects when disconnected or nacked. */
  publish(exchange: string, routingKey: string, body: Buffer, options: PublishOptions): Promise<void> {
    return this.publishConfirmed(this.name(exchange), routingKey, body, {
      persistent: true,
      contentType: 'application/json',
      messageId: options.messageId,
      headers: options.headers,
      timestamp: Math.floor((options.timestamp ?? Date.now()) / 1000),
      // The event name travels in `type` too: a dead-lettered message comes back with another routing
      // key, and consumers read the name from here (consumer.ts, messageName).
      type: options.type ?? routingKey,
    });
  }

  private publishConfirmed(
    exchange: string,
    routingKey: string,
    body: Buffer,
    properties: Options.Publish,
  ): Promise<void> {
    const channel = this.publisher;
    if (!channel) return Promise.reject(new Error('broker not connected'));
    return new Promise<void>((resolve, reject) => {
      try {
        channel.publish(exchange, routingKey, body, properties, (err) => (err ? reject(err) : resolve()));
      } catch (err) {
        reject(err as Error);
      }
    });
  }

  /**
   * Copies a message into the dead queue of the topology queue `logical` with the broker's confirm,
   * keeping its properties (its `type` is the event name) and adding `headers` (why, from where); the
   * caller acks the original only once this resolves.
   */
  parkMessage(message: Message, logical: string, headers: Record<string, string>): Promise<void> {
    const { properties } = message;
    const { dead } = this.queueNames(logical);
    return this.publishConfirmed(this.deadLetterExchange(logical), dead, message.content, {
      persistent: true,
      contentType: properties.contentType as string | undefined,
      contentEncoding: properties.contentEncoding as string | undefined,
      messageId: properties.messageId as string | undefined,
      correlationId: properties.correlationId as string | undefined,
      timestamp: properties.timestamp as number | undefined,
      type: messageName(message) ?? undefined,
      appId: properties.appId as string | undefined,
      headers: { ...properties.headers, ...headers },
    });
  }

  /** Registers a consumer; it runs now if connected and again after every reconnection. */
  async consume(queue: string, handler: MessageHandler): Promise<void> {
    this.consumers.set(queue, handler);
    if (this.connection) await this.startConsumer(queue, handler);
  }

  private queueSpec(queue: string): QueueSpec {
    const spec = this.options.topology.queues.find((q) => q.name === queue);
    if (!spec) throw new Error(`queue ${queue} is not declared in the topology`);
    return spec;
  }

  private async startConsumer(queue: string, handler: MessageHandler): Promise<void> {
    const connection = this.connection;
    if (!connection) return;
    const spec = this.queueSpec(queue);
    const channel = await connection.createChannel();
    channel.on('error', (err: Error) =>
      this.options.logger.warn({ err: err.message, queue }, 'consumer channel error'),
    );
    // `consuming` feeds the amqp_consumer_active gauge: a closed channel is a stopped consumer.
    channel.on('close', () => this.emit('consuming', queue, false));
    await this.consumeFrom(channel, spec, this.queueNames(queue).main, handler);
    this.emit('consuming', queue, true);
    this.upgrade?.adopt(spec, handler);
  }

  /**
   * Consumes `physical` (the queue of `spec`, or the classic queue it replaces) with `handler`: a
   * message handled is acked; one that failed goes through the retry queue, and after `maxAttempts`
   * failures, or at once when it can never be handled (UnprocessableMessageError), it is parked in the
   * dead queue with a confirm before the original is acked. Answers the consumer tag.
   */
  async consumeFrom(
    channel: Channel,
    spec: QueueSpec,
    physical: string,
    handler: MessageHandler,
    onSettled?: (work: Promise<void>) => void,
  ): Promise<string> {
    await channel.prefetch(spec.prefetch ?? 16);
    const maxAttempts = spec.maxAttempts ?? 5;
    const { logger } = this.options;
    const { consumerTag } = await channel.consume(physical, (message) => {
      if (!message) return;
      const messageId = message.properties.messageId as string | undefined;
      // An ack that fails (the channel closed under it) is no failure of the handler: the broker
      // delivers the message again, and the handler's idempotency makes that harmless.
      const settle = (how: 'ack' | 'nack') => {
        try {
          if (how === 'ack') channel.ack(message);
          else channel.nack(message, false, false);
        } catch {
          // the channel is gone; RabbitMQ requeues what it had delivered on it
        }
      };
      const work = (async () => {
        let failure: unknown = null;
        try {
          await handler(message);
        } catch (err) {
          failure = err ?? new Error('handler failed');
        }
        if (failure === null) {
          settle('ack');
          this.emit('handled', spec.name, 'processed', messageId);
          return;
        }
        const attempts = deathCount(message, physical) + 1;
        const unprocessable = failure instanceof UnprocessableMessageError;
        if (!unprocessable && attempts < maxAttempts) {
          logger.warn({ err: failure, queue: spec.name, messageId, attempts }, 'message failed, will retry');
          settle('nack');
          this.emit('handled', spec.name, 'retried', messageId);
          return;
        }
        logger.error({ err: failure, queue: spec.name, messageId, attempts }, 'message parked as dead');
        try {
          await this.parkMessage(message, spec.name, {
            'x-parked-reason': String((failure as Error).message ?? failure).slice(0, 500),
            'x-parked-from': physical,
            'x-parked-at': new Date().toISOString(),
          });
        } catch (parkErr) {
          // Not confirmed: the original must stay. Through the retry queue it comes back and is
          // parked again later.
          logger.warn(
            { err: (parkErr as Error).message, queue: spec.name, messageId },
            'could not park the message; it goes through the retry queue',
          );
          settle('nack');
          this.emit('handled', spec.name, 'retried', messageId);
          return;
        }
        settle('ack');
        this.emit('handled', spec.name, 'dead', messageId);
      })().catch(() => undefined);
      this.inFlight.add(work);
      onSettled?.(work);
      void work.finally(() => this.inFlight.delete(work));
    });
    return consumerTag;
  }

  /** Waits for in-flight handlers, then closes; pending reconnections are cancelled. */
  async close(): Promise<void> {
    this.closing = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.upgrade?.stop();
    await Promise.allSettled([...this.inFlight]);
    const connection = this.connection;
    this.connection = null;
    this.publisher = null;
    if (connection) await connection.close().catch(() => undefined);
  }
}

/** The parts of amqplib's connection that `coalesceWrites` reaches (not in its types). */
interface AmqpInternals {
  connection?: {
    stream?: { cork?: () => void; uncork?: () => void };
    muxer?: { _readIncoming?: () => void };
  };
}

/**
 * amqplib queues each frame set (a publish, an ack) as its own chunk and its multiplexer writes them to
 * the socket one at a time: one system call per message, about 0.1 ms each on these machines. Corking
 * the socket around one pass of the multiplexer sends everything queued in that pass in one writev.
 * Nothing changes if a later amqplib renames these internals: the writes are merely not coalesced;
 * test/kit/coalesced-writes.test.ts fails then (amqplib 2.3: a burst of 50 publishes, 1 socket write).
 */
function coalesceWrites(model: ChannelModel): void {
  const connection = (model as unknown as AmqpInternals).connection;
  const stream = connection?.stream;
  const muxer = connection?.muxer;
  const readIncoming = muxer?._readIncoming;
  if (!stream?.cork || !stream.uncork || !muxer || typeof readIncoming !== 'function') return;
  const cork = stream.cork.bind(stream);
  const uncork = stream.uncork.bind(stream);
  muxer._readIncoming = function coalesced(this: unknown) {
    cork();
    try {
      readIncoming.call(muxer);
    } finally {
      uncork();
    }
  };
}
