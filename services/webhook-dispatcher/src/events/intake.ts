import { EventName } from '@seller-api/contracts';
import { currentTraceContext, type Handler, type Logger } from '@seller-api/service-kit';
import { fanOut } from '../domain/deliveries';

/**
 * Turns a public event off the bus into deliveries. Seller and environment come from the AMQP headers
 * the producers set; the postback URL of order events too, so an order.paid processed before its
 * order.created still reaches the order's own webhook.
 */
export function intakeHandler(logger: Logger): Handler {
  return async (em, message) => {
    const event = EventName.safeParse(message.routingKey);
    const sellerId = message.headers['x-seller-id'];
    const environment = message.headers['x-environment'];
    if (!event.success || !sellerId || (environment !== 'test' && environment !== 'live')) {
      logger.warn(
        { routingKey: message.routingKey, messageId: message.id },
        'event without a public name, seller or environment: ignored',
      );
      return;
    }
    const occurredAt = message.headers['x-occurred-at']
      ? new Date(message.headers['x-occurred-at'])
      : message.publishedAt;
    await fanOut(em, {
      event: event.data,
      sellerId,
      environment,
      occurredAt,
      data: message.payload,
      postbackUrl: message.headers['x-postback-url'] ?? null,
      orderId: message.headers['x-order-uuid'] ?? null,
      traceContext: currentTraceContext(),
    });
  };
}
