import { randomBytes, randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import {
  isPostbackEvent,
  type BulkResendRequest,
  type DeliveryList,
  type DeliveryListQuery,
  type Environment,
  type EventName,
  type WebhookDelivery,
} from '@seller-api/contracts';
import {
  conflict,
  decodeCursor,
  encodeCursor,
  notFound,
  type Scope,
  type Sql,
  type TraceCarrier,
} from '@seller-api/service-kit';
import {
  activeSubscribers,
  storeFanOut,
  subscriptionKey,
  type NewDelivery,
  type NewEvent,
  type SubscriptionKey,
} from '../db/delivery-writes';
import { eventIdOf, orderOf } from './events';
import { assertSendable, getWebhook } from './registrations';

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
  /** The order's per-order webhook, for the 8 order events (docs/webhooks.md). */
  postbackUrl: string | null;
  orderId: string | null;
  /** The consumer span's W3C trace context: each attempt's POST joins the event's trace. */
  traceContext: TraceCarrier | null;
}

/**
 * Stores one delivery per destination before any attempt: every active global webhook of the event in
 * that seller and environment, plus the order's postback URL for order events; and the event itself,
 * with the ids of those deliveries, for the Events API (domain/events.ts), subscribed to or not. The
 * events of a batch of messages go together: one lookup of their subscribers, then one statement that
 * records `messageIds` as processed and stores the deliveries and events of the new ones only, so a
 * redelivered message never fans out twice. Answers the message ids that were new.
 */
export async function fanOut(
  sql: Sql,
  consumer: string,
  messageIds: string[],
  events: IncomingEvent[],
): Promise<Set<string>> {
  const keys = new Map<string, SubscriptionKey>();
  for (const incoming of events) keys.set(subscriptionKey(incoming), incoming);
  const subscribers = await activeSubscribers(sql, [...keys.values()]);
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
  return storeFanOut(sql, consumer, messageIds, deliveries, recorded);
}

/**
 * Whose deliveries a route reads or re-queues: a global webhook's (the webhook is known to be the
 * seller's), or the postback deliveries of one order, within a seller and environment.
 */
export type DeliveryOwner =
  { webhookId: string } | { orderId: string; sellerId: string; environment: Environment };

/** The owner's deliveries, as a condition on `webhooks.deliveries d` and its parameters. */
function ownedBy(owner: DeliveryOwner): { where: string; params: unknown[] } {
  if ('webhookId' in owner) return { where: 'd.webhook_id = ?', params: [owner.webhookId] };
  // Served by deliveries_postback_list_idx (db/migrations.ts).
  return {
    where: 'd.order_id = ? and d.webhook_id is null and d.seller_id = ? and d.environment = ?',
    params: [owner.orderId, owner.sellerId, owner.environment],
  };
}

interface DeliveryRecord {
  id: string;
  event: EventName;
  event_id: string;
  status: WebhookDelivery['status'];
  created_at: Date;
  next_attempt_at: Date | null;
  attempts: Array<{
    attempt: number;
    started_at: string;
    duration_ms: number;
    response_status: number | null;
    response_body: string | null;
    error: string | null;
  }> | null;
}

/** A webhook's deliveries, newest first, each with its attempts (docs/webhooks.md). */
export async function listDeliveries(
  em: EntityManager,
  scope: Scope,
  webhookId: string,
  query: DeliveryListQuery,
): Promise<DeliveryList> {
  await getWebhook(em, scope, webhookId);
  return listOwnedDeliveries(em, { webhookId }, query);
}

/**
 * An order's postback deliveries, newest first, as a webhook's are listed (docs/orders.md). The
 * dispatcher knows an order only by its deliveries, which all carry the order's seller and environment:
 * an order whose postback deliveries are another seller's or environment's is a 404, and one it has no
 * postback delivery for (no `postback_url`, or an unknown id) an empty list.
 */
export async function listPostbackDeliveries(
  em: EntityManager,
  scope: Scope,
  orderId: string,
  query: DeliveryListQuery,
): Promise<DeliveryList> {
  const owner = await em.execute<Array<{ seller_id: string; environment: Environment }>>(
    `select seller_id, environment from webhooks.deliveries where order_id = ? and webhook_id is null limit 1`,
    [orderId],
  );
  const found = owner[0];
  if (found && (found.seller_id !== scope.sellerId || found.environment !== scope.environment)) {
    throw notFound('Order not found.');
  }
  return listOwnedDeliveries(
    em,
    { orderId, sellerId: scope.sellerId, environment: scope.environment },
    query,
  );
}

async function listOwnedDeliveries(
  em: EntityManager,
  owner: DeliveryOwner,
  query: DeliveryListQuery,
): Promise<DeliveryList> {
  const cursor = query.cursor ? decodeCursor(query.cursor) : null;
  const { where, params } = ownedBy(owner);
  const rows = await em.execute<DeliveryRecord[]>(
    `select d.id, d.event, d.event_id, d.status, d.created_at, d.next_attempt_at,
            (select json_agg(json_build_object(
                'attempt', a.attempt,
                'started_at', to_char(a.started_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                'duration_ms', a.duration_ms, 'response_status', a.response_status,
                'response_body', a.response_body, 'error', a.error) order by a.attempt)
               from webhooks.delivery_attempts a where a.delivery_id = d.id) as attempts
       from webhooks.deliveries d
      where ${where} ${query.status ? 'and d.status = ?' : ''}
        ${cursor ? 'and (d.created_at, d.id) < (?, ?)' : ''}
      order by d.created_at desc, d.id desc
      limit ?`,
    [
      ...params,
      ...(query.status ? [query.status] : []),
      ...(cursor ? [cursor.createdAt, cursor.id] : []),
      query.limit + 1,
    ],
  );
  const kept = rows.slice(0, query.limit);
  const last = kept.at(-1);
  const results: WebhookDelivery[] = kept.map((r) => ({
    id: r.id,
    event: r.event,
    event_id: r.event_id,
    status: r.status,
    created_at: new Date(r.created_at).toISOString(),
    next_attempt_at:
      r.status === 'pending' && r.next_attempt_at ? new Date(r.next_attempt_at).toISOString() : null,
    attempts: r.attempts ?? [],
  }));
  return {
    results,
    next_cursor:
      rows.length > query.limit && last
        ? encodeCursor({ createdAt: new Date(last.created_at), id: last.id })
        : null,
  };
}

/**
 * Re-queues one delivery of a webhook now, with the same event id: one more attempt, numbered on from
 * the last. A pending delivery is simply made due now. A retired webhook's deliveries are not re-queued
 * (nothing sends them): 409.
 */
export async function resendDelivery(
  em: EntityManager,
  scope: Scope,
  webhookId: string,
  deliveryId: string,
): Promise<void> {
  assertSendable(await getWebhook(em, scope, webhookId));
  await resendOwned(em, { webhookId }, deliveryId);
}

/** As resendDelivery, for a postback delivery of one of the seller's orders: 404 for any other. */
export async function resendPostbackDelivery(
  em: EntityManager,
  scope: Scope,
  orderId: string,
  deliveryId: string,
): Promise<void> {
  await resendOwned(em, { orderId, sellerId: scope.sellerId, environment: scope.environment }, deliveryId);
}

async function resendOwned(em: EntityManager, owner: DeliveryOwner, deliveryId: string): Promise<void> {
  const { where, params } = ownedBy(owner);
  // A delivery being attempted (pending and leased) is left alone: its attempt's outcome would then
  // overwrite the re-queue.
  const result = await em.execute<{ affectedRows: number }>(
    `update webhooks.deliveries d
        set status = 'pending', next_attempt_at = now(),
            max_attempts = case when d.status = 'pending' then d.max_attempts else d.attempts + 1 end
      where d.id = ? and ${where}
        and (d.status <> 'pending' or d.lease_until is null or d.lease_until < now())`,
    [deliveryId, ...params],
    'run',
  );
  if (result.affectedRows === 0) {
    const exists = await em.execute(`select 1 from webhooks.deliveries d where d.id = ? and ${where}`, [
      deliveryId,
      ...params,
    ]);
    if (exists.length === 0) throw notFound('Delivery not found.');
    throw conflict('This delivery is being attempted right now; try again in a moment.');
  }
}

/** Re-queues every dead delivery of the webhook created in [since, until]. */
export async function resendDead(
  em: EntityManager,
  scope: Scope,
  webhookId: string,
  input: BulkResendRequest,
): Promise<number> {
  assertSendable(await getWebhook(em, scope, webhookId));
  const result = await em.execute<{ affectedRows: number }>(
    `update webhooks.deliveries
        set status = 'pending', next_attempt_at = now(), max_attempts = attempts + 1
      where webhook_id = ? and status = 'dead'
        ${input.since ? 'and created_at >= ?' : ''} ${input.until ? 'and created_at <= ?' : ''}`,
    [
      webhookId,
      ...(input.since ? [new Date(input.since)] : []),
      ...(input.until ? [new Date(input.until)] : []),
    ],
    'run',
  );
  return result.affectedRows;
}
