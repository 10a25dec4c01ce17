import { randomBytes, randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import {
  isPostbackEvent,
  type BulkResendRequest,
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
  storeDeliveries,
  subscriptionKey,
  type NewDelivery,
  type SubscriptionKey,
} from '../db/delivery-writes';
import { getWebhook } from './registrations';

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
 * that seller and environment, plus the order's postback URL for order events. The events of a batch
 * of messages go together: one lookup of their subscribers, then one statement that records
 * `messageIds` as processed and stores the deliveries of the new ones only, so a redelivered message
 * never fans out twice. Answers the message ids that were new.
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
  for (const incoming of events) {
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
  }
  return storeDeliveries(sql, consumer, messageIds, deliveries);
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
) {
  await getWebhook(em, scope, webhookId);
  const cursor = query.cursor ? decodeCursor(query.cursor) : null;
  const rows = await em.execute<DeliveryRecord[]>(
    `select d.id, d.event, d.event_id, d.status, d.created_at, d.next_attempt_at,
            (select json_agg(json_build_object(
                'attempt', a.attempt,
                'started_at', to_char(a.started_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                'duration_ms', a.duration_ms, 'response_status', a.response_status,
                'response_body', a.response_body, 'error', a.error) order by a.attempt)
               from webhooks.delivery_attempts a where a.delivery_id = d.id) as attempts
       from webhooks.deliveries d
      where d.webhook_id = ? ${query.status ? 'and d.status = ?' : ''}
        ${cursor ? 'and (d.created_at, d.id) < (?, ?)' : ''}
      order by d.created_at desc, d.id desc
      limit ?`,
    [
      webhookId,
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
 * Re-queues one delivery now, with the same event id: one more attempt, numbered on from the last. A
 * pending delivery is simply made due now.
 */
export async function resendDelivery(
  em: EntityManager,
  scope: Scope,
  webhookId: string,
  deliveryId: string,
): Promise<void> {
  await getWebhook(em, scope, webhookId);
  const result = await em.execute<{ affectedRows: number }>(
    `update webhooks.deliveries
        set status = 'pending', next_attempt_at = now(),
            max_attempts = case when status = 'pending' then max_attempts else attempts + 1 end
      where id = ? and webhook_id = ? and (status <> 'pending' or lease_until is null or lease_until < now())`,
    [deliveryId, webhookId],
    'run',
  );
  if (result.affectedRows === 0) {
    const exists = await em.execute('select 1 from webhooks.deliveries where id = ? and webhook_id = ?', [
      deliveryId,
      webhookId,
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
  await getWebhook(em, scope, webhookId);
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
