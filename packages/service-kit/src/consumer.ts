import type { EntityManager } from '@mikro-orm/postgresql';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { ConsumeMessage } from 'amqplib';
import { context, propagation } from '@opentelemetry/api';
import type { MessageHandler } from './broker';

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
  return async (raw) => {
    const message = decode(raw);
    const parent = propagation.extract(context.active(), message.headers);
    await context.with(parent, () =>
      orm.em.fork().transactional(async (em) => {
        const inserted = await em.execute<{ affectedRows: number }>(
          `insert into "${schema}".processed_messages (consumer, message_id) values (?, ?) on conflict do nothing`,
          [consumer, message.id],
          'run',
        );
        if (inserted.affectedRows === 0) {
          onDuplicate?.(message);
          return;
        }
        await handler(em, message);
      }),
    );
  };
}
