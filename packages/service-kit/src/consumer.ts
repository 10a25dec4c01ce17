import type { EntityManager } from '@mikro-orm/postgresql';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { ConsumeMessage } from 'amqplib';
import { SpanKind, context, trace } from '@opentelemetry/api';
import type { MessageHandler } from './broker';
import { contextFrom, failSpan, tracer, tracingEnabled } from './telemetry';

export interface IncomingMessage<T = unknown> {
  id: string;
  routingKey: string;
  exchange: string;
  payload: T;
  headers: Record<string, string>;
  publishedAt: Date;
}

export type Handler<T = unknown> = (em: EntityManager, message: IncomingMessage<T>) => Promise<void>;

function decode(raw: ConsumeMessage): IncomingMessage {
  const headers: Record<string, string> = {};
  for (const [key, value] of Object.entries(raw.properties.headers ?? {})) {
    if (typeof value === 'string') headers[key] = value;
  }
  const id = typeof raw.properties.messageId === 'string' ? raw.properties.messageId : '';
  if (!id) throw new Error('message without a messageId');
  return {
    id,
    routingKey: raw.fields.routingKey,
    exchange: raw.fields.exchange,
    payload: JSON.parse(raw.content.toString('utf8')) as unknown,
    headers,
    publishedAt: new Date(Number(raw.properties.timestamp ?? 0) * 1000),
  };
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
  const handle = (message: IncomingMessage): Promise<boolean> =>
    orm.em.fork().transactional(async (em) => {
      const inserted = await em.execute<{ affectedRows: number }>(
        `insert into "${schema}".processed_messages (consumer, message_id) values (?, ?) on conflict do nothing`,
        [consumer, message.id],
        'run',
      );
      if (inserted.affectedRows === 0) {
        onDuplicate?.(message);
        return false;
      }
      await handler(em, message);
      return true;
    });
  return async (raw) => {
    const message = decode(raw);
    if (!tracingEnabled()) {
      await handle(message);
      return;
    }
    // A CONSUMER span, child of the publisher's (W3C trace context in the AMQP headers); the handler
    // and its transaction run in it, so whatever it stores for later can carry the trace on.
    const parent = contextFrom(message.headers);
    const span = tracer.startSpan(
      `process ${consumer}`,
      {
        kind: SpanKind.CONSUMER,
        attributes: {
          'messaging.system': 'rabbitmq',
          'messaging.operation.type': 'process',
          'messaging.destination.name': message.exchange,
          'messaging.rabbitmq.destination.routing_key': message.routingKey,
          'messaging.consumer.group.name': consumer,
          'messaging.message.id': message.id,
        },
      },
      parent,
    );
    try {
      const fresh = await context.with(trace.setSpan(parent, span), () => handle(message));
      if (!fresh) span.setAttribute('messaging.duplicate', true);
    } catch (err) {
      failSpan(span, err);
      throw err;
    } finally {
      span.end();
    }
  };
}
