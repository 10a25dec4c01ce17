import { EventName } from '@seller-api/contracts';
import {
  batchedIdempotentHandler,
  type BatchedMessage,
  type Logger,
  type MessageHandler,
  type Sql,
} from '@seller-api/service-kit';
import { fanOut, type IncomingEvent } from '../domain/deliveries';
import { INTAKE_QUEUE } from './topology';

/**
 * Turns the public events off the bus into deliveries, a batch of messages at a time (the kit's
 * batchedIdempotentHandler). Seller and environment come from the AMQP headers the producers set; the
 * postback URL of order events too, so an order.paid processed before its order.created still reaches
 * the order's own webhook. A header the database refuses (a seller id that is no uuid, say) fails its
 * batch, which is then written a message at a time: only that message is retried and parked.
 */
export function intakeHandler(sql: Sql, logger: Logger): MessageHandler {
  return batchedIdempotentHandler(INTAKE_QUEUE, (batch) => {
    const events: IncomingEvent[] = [];
    for (const item of batch) {
      const incoming = incomingEvent(item);
      if (incoming) events.push(incoming);
      else
        logger.warn(
          { routingKey: item.message.routingKey, messageId: item.message.id },
          'event without a public name, seller or environment: ignored',
        );
    }
    return fanOut(
      sql,
      INTAKE_QUEUE,
      batch.map((item) => item.message.id),
      events,
    );
  });
}

/** The event a message carries, or null when it has no public name, seller or environment. */
function incomingEvent({ message, traceContext }: BatchedMessage): IncomingEvent | null {
  const event = EventName.safeParse(message.routingKey);
  const sellerId = message.headers['x-seller-id'];
  const environment = message.headers['x-environment'];
  if (!event.success || !sellerId || (environment !== 'test' && environment !== 'live')) return null;
  return {
    messageId: message.id,
    event: event.data,
    sellerId,
    environment,
    occurredAt: message.headers['x-occurred-at']
      ? new Date(message.headers['x-occurred-at'])
      : message.publishedAt,
    data: message.payload,
    postbackUrl: message.headers['x-postback-url'] ?? null,
    orderId: message.headers['x-order-uuid'] ?? null,
    traceContext,
  };
}
