import { Environment, EventName, uuid } from '@seller-api/contracts';
import {
  UnprocessableMessageError,
  batchedIdempotentHandler,
  readMessagePart,
  type IncomingMessage,
  type MessageHandler,
  type Sql,
} from '@seller-api/service-kit';
import { fanOut } from '../db/delivery-writes';
import type { IncomingEvent } from '../domain/deliveries';
import { INTAKE_QUEUE } from './topology';

/**
 * Turns the public events off the bus into deliveries, a batch of messages at a time (the kit's
 * batchedIdempotentHandler). Seller and environment come from the AMQP headers the producers set; the
 * postback URL of order events too, so an order.paid processed before its order.created still reaches
 * the order's own webhook. A message without a public event name, a seller or an environment is
 * parked in the dead queue for an operator (docs/messaging.md), never acked unseen. An event older than
 * `eventsRetentionDays` is delivered but not recorded for the Events API: it would not be shown.
 */
export function intakeHandler(sql: Sql, eventsRetentionDays: number): MessageHandler {
  return batchedIdempotentHandler(INTAKE_QUEUE, readEvent, (batch) =>
    fanOut(
      sql,
      INTAKE_QUEUE,
      eventsRetentionDays,
      batch.map((item) => item.message.id),
      batch.map(({ value, traceContext }) => ({ ...value, traceContext })),
    ),
  );
}

/** The event a message carries; UnprocessableMessageError when it names no public event or owner. */
function readEvent(message: IncomingMessage): Omit<IncomingEvent, 'traceContext'> {
  const event = readMessagePart(EventName, message.name, 'event name');
  const sellerId = readMessagePart(uuid, message.headers['x-seller-id'], 'x-seller-id header');
  const environment = readMessagePart(Environment, message.headers['x-environment'], 'x-environment header');
  // Producers set x-occurred-at; else the publish time, else (a message published without one) now.
  const occurredAt = message.headers['x-occurred-at']
    ? new Date(message.headers['x-occurred-at'])
    : message.publishedAt.getTime() > 0
      ? message.publishedAt
      : new Date();
  if (Number.isNaN(occurredAt.getTime())) throw new UnprocessableMessageError('x-occurred-at is no date');
  return {
    messageId: message.id,
    event,
    sellerId,
    environment,
    occurredAt,
    data: message.payload,
    postbackUrl: message.headers['x-postback-url'] ?? null,
    orderId: message.headers['x-order-uuid'] ?? null,
  };
}
