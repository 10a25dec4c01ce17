import type { EntityManager } from '@mikro-orm/postgresql';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { ConsumeMessage } from 'amqplib';
import { SpanKind, context, trace } from '@opentelemetry/api';
import type { MessageHandler } from './broker';
import { UnprocessableMessageError, messageName } from './dead-lettering';
import {
  contextFrom,
  currentTraceContext,
  failSpan,
  tracer,
  tracingEnabled,
  type TraceCarrier,
} from './telemetry';
import type { SqlQuery } from './sql';
import { WriteBatch, type WriteBatchOptions } from './write-batch';
import type { z } from 'zod';

export interface IncomingMessage<T = unknown> {
  id: string;
  /**
   * The event name: the routing key the publisher gave (dead-lettering.messageName), which is not the
   * one a retried message arrives with. Consumers dispatch on this, never on the delivery's key.
   */
  name: string;
  exchange: string;
  payload: T;
  headers: Record<string, string>;
  publishedAt: Date;
}

export type Handler<T = unknown> = (em: EntityManager, message: IncomingMessage<T>) => Promise<void>;

/** The message as consumers read it; one without an id, a name or a JSON body is parked, never acked. */
function decode(raw: ConsumeMessage): IncomingMessage {
  const headers: Record<string, string> = {};
  for (const [key, value] of Object.entries(raw.properties.headers ?? {})) {
    if (typeof value === 'string') headers[key] = value;
  }
  const id = typeof raw.properties.messageId === 'string' ? raw.properties.messageId : '';
  if (!id) throw new UnprocessableMessageError('message without a messageId');
  const name = messageName(raw);
  if (!name) throw new UnprocessableMessageError('message without an event name (type or x-death)');
  let payload: unknown;
  try {
    payload = JSON.parse(raw.content.toString('utf8')) as unknown;
  } catch {
    throw new UnprocessableMessageError('message body is not JSON');
  }
  return {
    id,
    name,
    exchange: raw.fields.exchange,
    payload,
    headers,
    publishedAt: new Date(Number(raw.properties.timestamp ?? 0) * 1000),
  };
}

/**
 * `value` (a payload, a header) checked against its contract. What the contract refuses now it will
 * refuse on every retry: the message is parked for an operator (UnprocessableMessageError).
 */
export function readMessagePart<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const where = parsed.error.issues.map((issue) => issue.path.join('.') || '(root)').join(', ');
    throw new UnprocessableMessageError(`${what} refused by its contract at ${where}`);
  }
  return parsed.data;
}

/**
 * Runs `work` for one message inside a CONSUMER span, child of the publisher's (W3C trace context in the
 * AMQP headers), so whatever it stores for later can carry the trace on. Without tracing, just `work`.
 * `work` answers whether the message was new (false: a duplicate, marked on the span).
 */
async function inConsumerSpan(
  consumer: string,
  message: IncomingMessage,
  work: () => Promise<boolean>,
): Promise<void> {
  if (!tracingEnabled()) {
    await work();
    return;
  }
  const parent = contextFrom(message.headers);
  const span = tracer.startSpan(
    `process ${consumer}`,
    {
      kind: SpanKind.CONSUMER,
      attributes: {
        'messaging.system': 'rabbitmq',
        'messaging.operation.type': 'process',
        'messaging.destination.name': message.exchange,
        'messaging.rabbitmq.destination.routing_key': message.name,
        'messaging.consumer.group.name': consumer,
        'messaging.message.id': message.id,
      },
    },
    parent,
  );
  try {
    const fresh = await context.with(trace.setSpan(parent, span), work);
    if (!fresh) span.setAttribute('messaging.duplicate', true);
  } catch (err) {
    failSpan(span, err);
    throw err;
  } finally {
    span.end();
  }
}

/**
 * Runs `work` in one transaction with the recording of message `id` as processed by `consumer`;
 * answers false without running it when the id was already recorded (a duplicate).
 */
export function processOnce(
  orm: MikroORM,
  schema: string,
  consumer: string,
  id: string,
  work: (em: EntityManager) => Promise<void>,
): Promise<boolean> {
  return orm.em.fork().transactional(async (em) => {
    const inserted = await em.execute<{ affectedRows: number }>(
      `insert into "${schema}".processed_messages (consumer, message_id) values (?, ?) on conflict do nothing`,
      [consumer, id],
      'run',
    );
    if (inserted.affectedRows === 0) return false;
    await work(em);
    return true;
  });
}

/**
 * Records the ids as processed by `consumer` (processedMessagesCte) in the caller's transaction, or
 * alone; answers the ones that were new.
 */
export async function recordProcessedMessages(
  query: SqlQuery,
  schema: string,
  consumer: string,
  ids: string[],
): Promise<Set<string>> {
  const rows = await query<{ message_id: string }>(
    `with ${processedMessagesCte(schema)} select message_id from fresh`,
    // In one order whatever the batch's: two batches holding the same redelivered ids never wait on
    // each other's rows in opposite orders.
    [consumer, [...ids].sort()],
  );
  return new Set(rows.map((row) => row.message_id));
}

/**
 * Makes a handler idempotent: the message id is recorded in the same transaction as the handler's
 * effect, so a redelivered message (after a crash, a lost ack, a relay retry) changes nothing.
 */
export function idempotentHandler(
  orm: MikroORM,
  schema: string,
  consumer: string,
  handler: Handler,
  onDuplicate?: (message: IncomingMessage) => void,
): MessageHandler {
  const handle = async (message: IncomingMessage): Promise<boolean> => {
    const fresh = await processOnce(orm, schema, consumer, message.id, (em) => handler(em, message));
    if (!fresh) onDuplicate?.(message);
    return fresh;
  };
  return async (raw) => {
    const message = decode(raw);
    await inConsumerSpan(consumer, message, () => handle(message));
  };
}

/** A message of a batch, what `read` made of it, and its consumer span's trace context (or null). */
export interface BatchedMessage<T = unknown> {
  message: IncomingMessage;
  value: T;
  traceContext: TraceCarrier | null;
}

/**
 * Writes the effects of a batch of messages (each id once) together with the recording of their ids,
 * atomically: in one statement that starts with `processedMessagesCte` (or in one transaction).
 * Answers the ids that were new; the others were duplicates and changed nothing.
 */
export type BatchWrite<T = unknown> = (messages: Array<BatchedMessage<T>>) => Promise<ReadonlySet<string>>;

/**
 * `fresh as (...)`: records the ids `$2` (text[]) of consumer `$1` as processed and returns those that
 * were not yet, as `message_id`. A statement that begins with it and writes its effects only for
 * `fresh` rows is an idempotent handler for a whole batch, in one round trip and one commit.
 */
export function processedMessagesCte(schema: string): string {
  return `fresh as (insert into "${schema}".processed_messages (consumer, message_id)
      select $1, m.id from unnest($2::text[]) as m(id) on conflict do nothing returning message_id)`;
}

/**
 * Idempotent consumption of a hot queue in batches (WriteBatch): the messages that arrive while a
 * batch is being written go together in the next, so a burst of N events costs a couple of statements
 * instead of N transactions of a few round trips each. Each message still has its own consumer span,
 * and its promise (the broker's ack) settles when its batch has committed. A batch that fails is
 * written again one message at a time, so a bad message is retried and parked alone.
 *
 * `read` checks and converts each message before it joins a batch: one it refuses with an
 * UnprocessableMessageError (no known name, a payload its contract refuses) is parked at once and
 * never reaches a batch.
 */
export function batchedIdempotentHandler<T>(
  consumer: string,
  read: (message: IncomingMessage) => T,
  write: BatchWrite<T>,
  options: WriteBatchOptions = {},
): MessageHandler {
  const batch = new WriteBatch<BatchedMessage<T>, boolean>(async (messages) => {
    // A message redelivered while its first copy waits in the same batch is written once.
    const unique = new Map<string, BatchedMessage<T>>();
    for (const item of messages) if (!unique.has(item.message.id)) unique.set(item.message.id, item);
    const fresh = await write([...unique.values()]);
    return messages.map((item) => unique.get(item.message.id) === item && fresh.has(item.message.id));
  }, options);
  return async (raw) => {
    const message = decode(raw);
    const value = read(message);
    await inConsumerSpan(consumer, message, () =>
      batch.submit({ message, value, traceContext: currentTraceContext() }),
    );
  };
}
