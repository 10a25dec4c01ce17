import { randomBytes, randomUUID } from 'node:crypto';
import { isPostbackEvent, type Environment, type EventName } from '@seller-api/contracts';
import type { TraceCarrier } from '@seller-api/service-kit';
import type { NewDelivery, NewEvent } from '../db/delivery-writes';
import { eventIdOf, orderOf } from './events';

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** `evt_` + 24 random letters and digits: one per delivery (event x destination). */
export function newEventId(): string {
  let id = '';
  for (const byte of randomBytes(48)) {
    if (byte < 248 && id.length < 24) id += ALPHANUMERIC[byte % 62];
  }
  return `evt_${id}`;
}

export interface IncomingEvent {
  /** The message it came in; its id is recorded with the deliveries, so a redelivery adds none. */
  messageId: string;
  event: EventName;
  sellerId: string;
  environment: Environment;
  occurredAt: Date;
  data: unknown;
  /** The order's per-order webhook, for the 9 order events (POSTBACK_EVENTS; docs/webhooks.md). */
  postbackUrl: string | null;
  orderId: string | null;
  /** The consumer span's W3C trace context: each attempt's POST joins the event's trace. */
  traceContext: TraceCarrier | null;
}

/** Who subscribes to an event: the active webhooks of one seller, environment and event. */
export interface SubscriptionKey {
  sellerId: string;
  environment: Environment;
  event: EventName;
}

export const subscriptionKey = (k: SubscriptionKey) => `${k.sellerId}|${k.environment}|${k.event}`;

/**
 * The deliveries and events to store for a batch of incoming events, given the active webhooks of
 * each one's subscription (by subscriptionKey): one delivery per destination, every active global
 * webhook of the event in that seller and environment, plus the order's postback URL for order events;
 * and the event itself, with the ids of those deliveries, for the Events API (domain/events.ts),
 * subscribed to or not.
 */
export function fanOutRows(
  events: IncomingEvent[],
  subscribers: ReadonlyMap<string, ReadonlyArray<{ id: string; url: string }>>,
): { deliveries: NewDelivery[]; recorded: NewEvent[] } {
  const deliveries: NewDelivery[] = [];
  const recorded: NewEvent[] = [];
  for (const incoming of events) {
    const made = deliveries.length;
    const common = {
      messageId: incoming.messageId,
      sellerId: incoming.sellerId,
      environment: incoming.environment,
      event: incoming.event,
      payload: incoming.data,
      occurredAt: incoming.occurredAt,
      traceContext: incoming.traceContext,
    };
    for (const hook of subscribers.get(subscriptionKey(incoming)) ?? []) {
      deliveries.push({
        ...common,
        id: randomUUID(),
        eventId: newEventId(),
        webhookId: hook.id,
        orderId: null,
        url: hook.url,
        signed: true,
      });
    }
    if (incoming.postbackUrl && isPostbackEvent(incoming.event)) {
      deliveries.push({
        ...common,
        id: randomUUID(),
        eventId: newEventId(),
        webhookId: null,
        orderId: incoming.orderId,
        url: incoming.postbackUrl,
        signed: false,
      });
    }
    recorded.push({
      messageId: incoming.messageId,
      id: eventIdOf(incoming.messageId),
      sellerId: incoming.sellerId,
      environment: incoming.environment,
      event: incoming.event,
      orderId: orderOf(incoming.data, incoming.orderId),
      occurredAt: incoming.occurredAt,
      data: incoming.data,
      deliveryIds: deliveries.slice(made).map((d) => d.id),
    });
  }
  return { deliveries, recorded };
}
