import { z } from 'zod';
import { MESSAGES, message } from './messages';
import { strictInput } from './strict';
import { ListQuery, dataResponse, datetime, datetimeInput, listResponse, uuid } from './common';
import { EVENT_NAMES, EVENT_PAYLOADS, EventName } from './events';
import { DeliveryStatus } from './webhooks';

// ---------------------------------------------------------------------------------------------------
// Events API (docs/events-api.md): the events of the last 30 days, for integrators catching up on
// webhooks they missed.
// ---------------------------------------------------------------------------------------------------

/** `evt_` and 24 letters and digits: an event's id, and each delivery's `X-Webhook-Event-Id`. */
export const EVENT_ID_PATTERN = /^evt_[A-Za-z0-9]{24}$/;
export const EventId = z.string().regex(EVENT_ID_PATTERN, { error: MESSAGES.eventId });

const KNOWN_EVENTS: ReadonlySet<string> = new Set(EVENT_NAMES);

/**
 * The names a `type` filter carries, in the order given and without repeats: `type` repeated, a
 * comma-separated list, or both (`type=order.paid,order.refunded&type=payment.approved`).
 */
export function splitEventTypes(value: string | string[]): string[] {
  const names = (Array.isArray(value) ? value : [value]).flatMap((part) => part.split(','));
  return [...new Set(names.map((name) => name.trim()).filter((name) => name.length > 0))];
}

/** `type` of `GET /events/`: one or several public event names; an unknown one is a 400 on `type`. */
export const EventTypeFilter = z
  .union([z.string(), z.array(z.string())])
  .meta({
    description:
      'One or more event names, repeated (`type=a&type=b`) or comma-separated (`type=a,b`): ' +
      EVENT_NAMES.join(', '),
  })
  .transform((value, ctx): EventName[] => {
    const names = splitEventTypes(value);
    const unknown = names.filter((name) => !KNOWN_EVENTS.has(name));
    if (names.length === 0) ctx.addIssue({ code: 'custom', message: MESSAGES.eventNamesEmpty });
    else if (unknown.length > 0)
      ctx.addIssue({ code: 'custom', message: message('unknownEventName', { names: unknown.join(', ') }) });
    return names as EventName[];
  });

/** `GET /events/` query: the usual paging, filtered by name, time of occurrence and order. */
export const EventListQuery = strictInput(
  ListQuery.extend({
    type: EventTypeFilter.optional(),
    created_gte: datetimeInput
      .optional()
      .meta({ description: 'Events that occurred at or after this instant' }),
    created_lte: datetimeInput
      .optional()
      .meta({ description: 'Events that occurred at or before this instant' }),
    order_uuid: uuid
      .optional()
      .meta({ description: 'Events of this order (order.*, order_item.*, payment.*)' }),
  }).refine(
    (query) =>
      !query.created_gte ||
      !query.created_lte ||
      Date.parse(query.created_gte) <= Date.parse(query.created_lte),
    { error: MESSAGES.notBeforeCreatedGte, path: ['created_lte'] },
  ),
);
export type EventListQuery = z.infer<typeof EventListQuery>;

export const EventPathParams = z.object({ id: EventId });
export type EventPathParams = z.infer<typeof EventPathParams>;

/**
 * One delivery made of an event: to a global webhook, or to the order's `postback_url` (`webhook_id`
 * null). `event_id` is the `X-Webhook-Event-Id` that destination receives (one per delivery).
 */
export const EventDelivery = z.object({
  id: uuid,
  webhook_id: uuid.nullable(),
  event_id: EventId,
  status: DeliveryStatus,
});
export type EventDelivery = z.infer<typeof EventDelivery>;

const EventRecordBase = z.object({
  id: EventId,
  occurred_at: datetime,
  deliveries: z.array(EventDelivery),
});

/** The variant of one event: its name and the `data` its webhook deliveries carry. */
function eventRecordOf<K extends EventName>(name: K) {
  return EventRecordBase.extend({ event: z.literal(name), data: EVENT_PAYLOADS[name] });
}
type EventRecordVariant = ReturnType<typeof eventRecordOf<EventName>>;
const [firstVariant, ...otherVariants] = EVENT_NAMES.map((name) => eventRecordOf(name));

/** An event as the Events API shows it; `data` is exactly the envelope's `data` of its deliveries. */
export const EventRecord = z.discriminatedUnion('event', [
  firstVariant as EventRecordVariant,
  ...(otherVariants as EventRecordVariant[]),
]);
export type EventRecord = z.infer<typeof EventRecord>;
export const EventRecordResponse = dataResponse(EventRecord);
export type EventRecordResponse = z.infer<typeof EventRecordResponse>;

export const EventRecordList = listResponse(EventRecord);
export type EventRecordList = z.infer<typeof EventRecordList>;
export const EventListResponse = dataResponse(EventRecordList);
export type EventListResponse = z.infer<typeof EventListResponse>;

/** How long events stay listed by default (the dispatcher's EVENTS_RETENTION_DAYS). */
export const EVENTS_RETENTION_DAYS_DEFAULT = 30;
