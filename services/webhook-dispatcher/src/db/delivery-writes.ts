import type { Environment, EventName } from '@seller-api/contracts';
import { processedMessagesCte, type Sql, type TraceCarrier } from '@seller-api/service-kit';
import { fanOutRows, subscriptionKey, type IncomingEvent, type SubscriptionKey } from '../domain/deliveries';
import { SCHEMA } from './migrations';

/**
 * Stores one delivery per destination before any attempt, and the event itself (domain/deliveries.ts,
 * fanOutRows). The events of a batch of messages go together: one lookup of their subscribers, then
 * one statement that records `messageIds` as processed and stores the deliveries and events of the new
 * ones only, so a redelivered message never fans out twice. Answers the message ids that were new.
 */
export async function fanOut(
  sql: Sql,
  consumer: string,
  eventsRetentionDays: number,
  messageIds: string[],
  events: IncomingEvent[],
): Promise<Set<string>> {
  const keys = new Map<string, SubscriptionKey>();
  for (const incoming of events) keys.set(subscriptionKey(incoming), incoming);
  const subscribers = await activeSubscribers(sql, [...keys.values()]);
  const { deliveries, recorded } = fanOutRows(events, subscribers);
  return storeFanOut(sql, consumer, eventsRetentionDays, messageIds, deliveries, recorded);
}

/**
 * The active webhooks of the keys, a row each. Planned at every run (service-kit QueryOptions): the
 * plan kept from a dispatcher's first batches, made while webhooks.webhooks was small, hashed the
 * keys against every active webhook, which once the table is large is a read of all of them a batch.
 */
export const ACTIVE_SUBSCRIBERS_SQL = `select w.id, w.url, w.seller_id, w.environment, w.event
       from unnest($1::uuid[], $2::text[], $3::text[]) as k(seller_id, environment, event)
       join webhooks.webhooks w
         on w.seller_id = k.seller_id and w.environment = k.environment and w.event = k.event
      where w.status = 'ACTIVE'`;

/** The active webhooks of each key (by `subscriptionKey`), in one statement for a whole batch. */
export async function activeSubscribers(
  sql: Sql,
  keys: SubscriptionKey[],
): Promise<Map<string, Array<{ id: string; url: string }>>> {
  const found = new Map<string, Array<{ id: string; url: string }>>();
  if (keys.length === 0) return found;
  const rows = await sql.query<{
    id: string;
    url: string;
    seller_id: string;
    environment: Environment;
    event: EventName;
  }>(
    ACTIVE_SUBSCRIBERS_SQL,
    [keys.map((k) => k.sellerId), keys.map((k) => k.environment), keys.map((k) => k.event)],
    { planEachRun: true },
  );
  for (const row of rows) {
    const key = subscriptionKey({ sellerId: row.seller_id, environment: row.environment, event: row.event });
    const list = found.get(key);
    if (list) list.push({ id: row.id, url: row.url });
    else found.set(key, [{ id: row.id, url: row.url }]);
  }
  return found;
}

/** One delivery to store, due now; `messageId` is the message of the event it comes from. */
export interface NewDelivery {
  messageId: string;
  id: string;
  eventId: string;
  webhookId: string | null;
  orderId: string | null;
  sellerId: string;
  environment: Environment;
  event: EventName;
  url: string;
  signed: boolean;
  payload: unknown;
  occurredAt: Date;
  traceContext: TraceCarrier | null;
}

/** One event to record for the Events API, with the ids of the deliveries made of it. */
export interface NewEvent {
  messageId: string;
  id: string;
  sellerId: string;
  environment: Environment;
  event: EventName;
  orderId: string | null;
  occurredAt: Date;
  data: unknown;
  deliveryIds: string[];
}

// One statement: the batch's message ids recorded as processed, and the deliveries and events of the
// new ones only, so a redelivered message fans out nothing. Atomic without a transaction around it.
// An event is recorded once whatever happens (its id comes from its message, its occurred_at too:
// domain/events.ts), and only within the partitions that exist: from the retention's horizon ($5
// days ago, which a read would not show anyway) to a week ahead (db/partitions.ts makes them ahead).
const STORE_FAN_OUT = `with ${processedMessagesCte(SCHEMA)},
  stored as (
    insert into webhooks.deliveries
      (id, event_id, webhook_id, order_id, seller_id, environment, event, url, signed, payload, occurred_at,
       status, next_attempt_at, created_at, trace_context)
    select d.id, d.event_id, d.webhook_id, d.order_id, d.seller_id, d.environment, d.event, d.url, d.signed,
           d.payload, d.occurred_at, 'pending', now(), now(), d.trace_context
      from json_to_recordset($3::json) as d(message_id text, id uuid, event_id text, webhook_id uuid,
             order_id uuid, seller_id uuid, environment text, event text, url text, signed boolean,
             payload jsonb, occurred_at timestamptz, trace_context jsonb)
     where d.message_id in (select message_id from fresh)),
  recorded as (
    insert into webhooks.events (id, seller_id, environment, event, order_id, occurred_at, data, delivery_ids)
    select e.id, e.seller_id, e.environment, e.event, e.order_id, e.occurred_at, e.data, e.delivery_ids
      from json_to_recordset($4::json) as e(message_id text, id text, seller_id uuid, environment text,
             event text, order_id uuid, occurred_at timestamptz, data jsonb, delivery_ids uuid[])
     where e.message_id in (select message_id from fresh)
       and e.occurred_at >= now() - make_interval(days => $5) and e.occurred_at < now() + interval '7 days'
    on conflict do nothing)
  select message_id from fresh`;

/**
 * Records `messageIds` as processed by `consumer` and stores the deliveries and events of those that
 * were new; answers those.
 */
export async function storeFanOut(
  sql: Sql,
  consumer: string,
  eventsRetentionDays: number,
  messageIds: string[],
  deliveries: NewDelivery[],
  events: NewEvent[],
): Promise<Set<string>> {
  const rows = await sql.query<{ message_id: string }>(STORE_FAN_OUT, [
    consumer,
    // Sorted, as recordProcessedMessages sorts them: two batches holding the same redelivered ids lock
    // their rows in one order, and never deadlock on each other.
    [...messageIds].sort(),
    JSON.stringify(
      deliveries.map((d) => ({
        message_id: d.messageId,
        id: d.id,
        event_id: d.eventId,
        webhook_id: d.webhookId,
        order_id: d.orderId,
        seller_id: d.sellerId,
        environment: d.environment,
        event: d.event,
        url: d.url,
        signed: d.signed,
        payload: d.payload,
        occurred_at: d.occurredAt.toISOString(),
        trace_context: d.traceContext,
      })),
    ),
    JSON.stringify(
      events.map((e) => ({
        message_id: e.messageId,
        id: e.id,
        seller_id: e.sellerId,
        environment: e.environment,
        event: e.event,
        order_id: e.orderId,
        occurred_at: e.occurredAt.toISOString(),
        data: e.data,
        delivery_ids: e.deliveryIds,
      })),
    ),
    eventsRetentionDays,
  ]);
  return new Set(rows.map((r) => r.message_id));
}
