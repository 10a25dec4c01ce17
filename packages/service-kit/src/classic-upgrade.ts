import type { Channel, ChannelModel } from 'amqplib';
import type { Broker, MessageHandler, QueueSpec } from './broker';
import { classicQueueNames } from './queue-names';
import type { Logger } from './logger';

interface Drained {
  spec: QueueSpec;
  handler: MessageHandler;
  /** Our consumer on the classic queue while it drains. */
  consumer: { channel: Channel; tag: string; inFlight: Set<Promise<void>> } | null;
  announced: boolean;
}

interface QueueState {
  messageCount: number;
  consumerCount: number;
}

export interface ClassicUpgradeOptions {
  namespace: string;
  logger: Logger;
  intervalMs: number;
}

/**
 * Upgrade of a deployment whose queues were classic queues (docs/messaging.md, "Upgrading from classic
 * queues"). A queue's type cannot change in place, so the quorum queues have names of their own and
 * both exist for a while: during a rolling deploy the old build still declares, binds and consumes the
 * classic ones, and a message published then lands in both. That is harmless: consumers record each
 * message id in the transaction of its effect, under the topology queue's name, whichever queue it
 * came from.
 *
 * On every connection, and every `intervalMs` after it until a pass finds none left, for each queue
 * this process consumes:
 * 1. the classic queue is unbound, so nothing new goes to it;
 * 2. its parked messages move to the new dead queue (each copy confirmed before the original is acked);
 * 3. it is consumed with the same handler until it and its retry queue are empty;
 * 4. then our consumer stops, and the queue is deleted only if still empty and unused (an old replica,
 *    or another new one draining it too, keeps it until a later pass), then its retry and dead queues
 *    if empty.
 */
export class ClassicQueueUpgrade {
  private readonly queues = new Map<string, Drained>();
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private again = false;
  private stopped = false;

  constructor(
    private readonly broker: Broker,
    private readonly connection: ChannelModel,
    private readonly options: ClassicUpgradeOptions,
  ) {}

  /** Called when the quorum queue's consumer has started: its classic predecessor may go. */
  adopt(spec: QueueSpec, handler: MessageHandler): void {
    if (this.stopped) return;
    this.queues.set(spec.name, { spec, handler, consumer: null, announced: false });
    this.kick();
  }

  /** Runs a pass now (or right after the one in progress); the one `upgrade.test` waits for. */
  kick(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (this.running) {
      this.again = true;
      return this.running;
    }
    this.running = this.pass().then((needed) => {
      this.running = null;
      if (this.again) {
        this.again = false;
        void this.kick();
      } else if (needed) this.schedule();
    });
    return this.running;
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private schedule(): void {
    if (this.stopped || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.kick();
    }, this.options.intervalMs);
    this.timer.unref();
  }

  /** Answers whether another pass is due: a classic queue was still there, or a pass failed. */
  private async pass(): Promise<boolean> {
    let again = false;
    for (const drained of this.queues.values()) {
      if (this.stopped) return false;
      try {
        if (await this.upgrade(drained)) again = true;
      } catch (err) {
        again = true;
        this.options.logger.warn(
          { err: (err as Error).message, queue: drained.spec.name },
          'classic queue upgrade: pass failed, will try again',
        );
      }
    }
    return again;
  }

  /** One pass over a queue; answers whether classic queues of it were there. */
  private async upgrade(drained: Drained): Promise<boolean> {
    const { spec } = drained;
    const classic = classicQueueNames(this.options.namespace, spec.name);
    let main = await this.inspect(classic.main);
    const retry = await this.inspect(classic.retry);
    const dead = await this.inspect(classic.dead);
    if (!main && !retry && !dead) return false;
    if (!drained.announced) {
      drained.announced = true;
      this.options.logger.info(
        { queue: spec.name, classic: classic.main, messages: main?.messageCount ?? 0 },
        'classic queues found: moving to the quorum queues',
      );
    }
    if (!main && retry) {
      // Whatever waits in the retry queue expires into the main queue: it must exist to receive it. Its
      // failures go back to the retry queue through the queue's own dead-letter exchange (broker.ts).
      const dlx = this.broker.deadLetterExchange(spec.name);
      await this.withChannel(async (channel) => {
        await channel.assertQueue(classic.main, {
          durable: true,
          arguments: { 'x-dead-letter-exchange': dlx, 'x-dead-letter-routing-key': classic.retry },
        });
        await channel.bindQueue(classic.retry, dlx, classic.retry);
      });
      main = await this.inspect(classic.main);
    }
    if (main) {
      await this.withChannel(async (channel) => {
        for (const binding of spec.bindings) {
          await channel.unbindQueue(classic.main, this.broker.name(binding.exchange), binding.pattern);
        }
      });
    }
    if (dead) await this.moveParked(classic.dead, spec.name);
    if (main) {
      if (main.messageCount > 0 || (retry?.messageCount ?? 0) > 0) {
        if (!drained.consumer) await this.startDraining(drained, classic.main);
        return true;
      }
      // Empty: stop, let our handlers settle (a nack refills the retry queue), look again, and
      // delete it only if it is still empty and no one consumes it (an old replica, or another new
      // one still draining: that one stops at its own next pass, and the delete succeeds then).
      await this.stopDraining(drained);
      const [mainNow, retryNow] = [await this.inspect(classic.main), await this.inspect(classic.retry)];
      if ((mainNow?.messageCount ?? 0) > 0 || (retryNow?.messageCount ?? 0) > 0) return true;
      const deleted = await this.withChannel((channel) =>
        channel.deleteQueue(classic.main, { ifUnused: true, ifEmpty: true }),
      ).then(
        () => true,
        () => false,
      );
      if (!deleted) return true;
    }
    await this.withChannel((channel) => channel.deleteQueue(classic.retry, { ifEmpty: true })).catch(
      () => undefined,
    );
    await this.moveParked(classic.dead, spec.name);
    await this.withChannel((channel) => channel.deleteQueue(classic.dead, { ifEmpty: true })).catch(
      () => undefined,
    );
    if (!(await this.inspect(classic.main)) && !(await this.inspect(classic.dead))) {
      this.options.logger.info({ queue: spec.name }, 'classic queues removed');
      drained.announced = false;
    }
    return true;
  }

  private async startDraining(drained: Drained, queue: string): Promise<void> {
    const channel = await this.connection.createChannel();
    channel.on('error', (err: Error) =>
      this.options.logger.warn({ err: err.message, queue }, 'classic queue consumer channel error'),
    );
    const inFlight = new Set<Promise<void>>();
    channel.on('close', () => {
      if (drained.consumer?.channel === channel) drained.consumer = null;
    });
    const tag = await this.broker.consumeFrom(channel, drained.spec, queue, drained.handler, (work) => {
      inFlight.add(work);
      void work.finally(() => inFlight.delete(work));
    });
    drained.consumer = { channel, tag, inFlight };
  }

  private async stopDraining(drained: Drained): Promise<void> {
    const consumer = drained.consumer;
    if (!consumer) return;
    drained.consumer = null;
    await consumer.channel.cancel(consumer.tag).catch(() => undefined);
    await Promise.allSettled([...consumer.inFlight]);
    await consumer.channel.close().catch(() => undefined);
  }

  /** Moves every message of a classic dead queue to `logical`'s quorum one, each copy confirmed first. */
  private async moveParked(from: string, logical: string): Promise<void> {
    await this.withChannel(async (channel) => {
      for (;;) {
        const message = await channel.get(from, { noAck: false });
        if (!message) return;
        try {
          await this.broker.parkMessage(message, logical, { 'x-moved-from': from });
        } catch (err) {
          channel.nack(message, false, true);
          throw err;
        }
        channel.ack(message);
      }
    });
  }

  /** The queue's counts, or null when it does not exist (a passive declare, on a channel of its own). */
  private inspect(queue: string): Promise<QueueState | null> {
    return this.withChannel((channel) => channel.checkQueue(queue)).then(
      (state) => ({ messageCount: state.messageCount, consumerCount: state.consumerCount }),
      () => null,
    );
  }

  /**
   * Runs `work` on a channel of its own: RabbitMQ closes a channel on a refused operation (a passive
   * declare of a missing queue, a delete of a queue in use), which must not take anything else with it.
   */
  private async withChannel<T>(work: (channel: Channel) => Promise<T>): Promise<T> {
    const channel = await this.connection.createChannel();
    channel.on('error', () => undefined);
    try {
      return await work(channel);
    } finally {
      await channel.close().catch(() => undefined);
    }
  }
}
