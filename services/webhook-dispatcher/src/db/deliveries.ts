import type { EntityManager } from '@mikro-orm/postgresql';
import type {
  BulkResendRequest,
  DeliveryList,
  DeliveryListQuery,
  Environment,
  EventName,
  WebhookDelivery,
  WebhooksHealth,
} from '@seller-api/contracts';
import {
  conflict,
  decodeCursor,
  encodeCursor,
  notFound,
  type Scope,
  type Sql,
} from '@seller-api/service-kit';
import { healthSince, presentHealth, type CountsRow, type WebhookCountsRow } from '../domain/health';
import { assertSendable } from '../domain/registrations';
import { getWebhook } from './webhooks';

/**
 * The deliveries as the API reads and re-queues them (`webhooks.deliveries`): a webhook's, or an
 * order's postback deliveries. Stored by the fan-out (delivery-writes.ts), sent by the sender
 * (delivery-claims.ts). `sql` runs on the caller's transaction when it has one (a keyed request's).
 */

/**
 * Whose deliveries a route reads or re-queues: a global webhook's (the webhook is known to be the
 * seller's), or the postback deliveries of one order, within a seller and environment.
 */
export type DeliveryOwner =
  { webhookId: string } | { orderId: string; sellerId: string; environment: Environment };

/** The postback deliveries of one of the scope's orders. */
function postbacksOf(scope: Scope, orderId: string): DeliveryOwner {
  return { orderId, sellerId: scope.sellerId, environment: scope.environment };
}

/**
 * The owner's deliveries within the retention, as a condition on `webhooks.deliveries d` and its
 * parameters, numbered from `$first` on. Older ones are neither listed nor re-sent: their month is
 * about to be dropped, and one made pending again would hold it (docs/webhooks.md, "History and
 * retention").
 */
function ownedBy(
  owner: DeliveryOwner,
  retentionDays: number,
  first = 1,
): { where: string; params: unknown[] } {
  const kept = (n: number) => `d.created_at >= now() - make_interval(days => $${n})`;
  if ('webhookId' in owner) {
    return {
      where: `d.webhook_id = $${first} and ${kept(first + 1)}`,
      params: [owner.webhookId, retentionDays],
    };
  }
  // Served by deliveries_postback_list_idx (db/migrations.ts).
  return {
    where: `d.order_id = $${first} and d.webhook_id is null and d.seller_id = $${first + 1} and d.environment = $${first + 2} and ${kept(first + 3)}`,
    params: [owner.orderId, owner.sellerId, owner.environment, retentionDays],
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
  sql: Sql,
  scope: Scope,
  webhookId: string,
  query: DeliveryListQuery,
  retentionDays: number,
): Promise<DeliveryList> {
  await getWebhook(em, scope, webhookId);
  return listOwnedDeliveries(sql, { webhookId }, query, retentionDays);
}

/**
 * An order's postback deliveries, newest first, as a webhook's are listed (docs/orders.md). The
 * dispatcher knows an order only by its deliveries, which all carry the order's seller and environment:
 * an order whose postback deliveries are another seller's or environment's is a 404, and one it has no
 * postback delivery for (no `postback_url`, or an unknown id) an empty list.
 */
export async function listPostbackDeliveries(
  sql: Sql,
  scope: Scope,
  orderId: string,
  query: DeliveryListQuery,
  retentionDays: number,
): Promise<DeliveryList> {
  const owner = await sql.query<{ seller_id: string; environment: Environment }>(
    `select seller_id, environment from webhooks.deliveries where order_id = $1 and webhook_id is null limit 1`,
    [orderId],
  );
  const found = owner[0];
  if (found && (found.seller_id !== scope.sellerId || found.environment !== scope.environment)) {
    throw notFound('Order not found.');
  }
  return listOwnedDeliveries(sql, postbacksOf(scope, orderId), query, retentionDays);
}

async function listOwnedDeliveries(
  sql: Sql,
  owner: DeliveryOwner,
  query: DeliveryListQuery,
  retentionDays: number,
): Promise<DeliveryList> {
  const cursor = query.cursor ? decodeCursor(query.cursor) : null;
  const { where, params } = ownedBy(owner, retentionDays);
  const values = [...params];
  const param = (value: unknown) => `$${values.push(value)}`;
  const status = query.status ? `and d.status = ${param(query.status)}` : '';
  const after = cursor ? `and (d.created_at, d.id) < (${param(cursor.createdAt)}, ${param(cursor.id)})` : '';
  const limit = param(query.limit + 1);
  const rows = await sql.query<DeliveryRecord>(
    `select d.id, d.event, d.event_id, d.status, d.created_at, d.next_attempt_at,
            (select json_agg(json_build_object(
                'attempt', a.attempt,
                'started_at', to_char(a.started_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
                'duration_ms', a.duration_ms, 'response_status', a.response_status,
                'response_body', a.response_body, 'error', a.error) order by a.attempt)
               from webhooks.delivery_attempts a where a.delivery_id = d.id) as attempts
       from webhooks.deliveries d
      where ${where} ${status}
        ${after}
      order by d.created_at desc, d.id desc
      limit ${limit}`,
    values,
    // Planned at every run, as when the ORM inlined it: the text varies with the filters, and each
    // variant would otherwise take one of the connection's prepared-statement names.
    { planEachRun: true },
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
  sql: Sql,
  scope: Scope,
  webhookId: string,
  deliveryId: string,
  retentionDays: number,
): Promise<void> {
  assertSendable(await getWebhook(em, scope, webhookId));
  await resendOwned(sql, { webhookId }, deliveryId, retentionDays);
}

/** As resendDelivery, for a postback delivery of one of the seller's orders: 404 for any other. */
export async function resendPostbackDelivery(
  sql: Sql,
  scope: Scope,
  orderId: string,
  deliveryId: string,
  retentionDays: number,
): Promise<void> {
  await resendOwned(sql, postbacksOf(scope, orderId), deliveryId, retentionDays);
}

async function resendOwned(
  sql: Sql,
  owner: DeliveryOwner,
  deliveryId: string,
  retentionDays: number,
): Promise<void> {
  const { where, params } = ownedBy(owner, retentionDays, 2);
  // A delivery being attempted (pending and leased) is left alone: its attempt's outcome would then
  // overwrite the re-queue.
  const requeued = await sql.query<{ id: string }>(
    `update webhooks.deliveries d
        set status = 'pending', next_attempt_at = now(),
            max_attempts = case when d.status = 'pending' then d.max_attempts else d.attempts + 1 end
      where d.id = $1 and ${where}
        and (d.status <> 'pending' or d.lease_until is null or d.lease_until < now())
      returning d.id`,
    [deliveryId, ...params],
  );
  if (requeued.length === 0) {
    const exists = await sql.query(
      `select 1 as found from webhooks.deliveries d where d.id = $1 and ${where}`,
      [deliveryId, ...params],
    );
    if (exists.length === 0) throw notFound('Delivery not found.');
    throw conflict('This delivery is being attempted right now; try again in a moment.');
  }
}

/** Re-queues every dead delivery of the webhook created in [since, until]. */
export async function resendDead(
  em: EntityManager,
  sql: Sql,
  scope: Scope,
  webhookId: string,
  input: BulkResendRequest,
  retentionDays: number,
): Promise<number> {
  assertSendable(await getWebhook(em, scope, webhookId));
  const values: unknown[] = [webhookId, retentionDays];
  const param = (value: unknown) => `$${values.push(value)}`;
  const since = input.since ? `and created_at >= ${param(new Date(input.since))}` : '';
  const until = input.until ? `and created_at <= ${param(new Date(input.until))}` : '';
  const [requeued] = await sql.query<{ n: number }>(
    `with requeued as (
       update webhooks.deliveries
          set status = 'pending', next_attempt_at = now(), max_attempts = attempts + 1
        where webhook_id = $1 and status = 'dead'
          and created_at >= now() - make_interval(days => $2)
          ${since} ${until}
       returning 1)
     select count(*)::int as n from requeued`,
    values,
    // As the list above: its text varies with the filters.
    { planEachRun: true },
  );
  return requeued?.n ?? 0;
}

// `retrying`: pending after at least one attempt, each of which failed (or was followed by a manual
// re-send). Deliveries are counted by when they were created.
const COUNTS = `count(*) filter (where d.status = 'delivered') as delivered,
           count(*) filter (where d.status = 'pending' and d.attempts > 0) as retrying,
           count(*) filter (where d.status = 'dead') as dead`;

// Every registration that counts (active or paused), with its deliveries of the window read on
// deliveries_list_idx; at most 50 of them per seller and environment.
const WEBHOOKS = `
  select w.id, w.url, w.event, w.status, c.delivered, c.retrying, c.dead
    from webhooks.webhooks w
   cross join lateral (
     select ${COUNTS}
       from webhooks.deliveries d
      where d.webhook_id = w.id and d.created_at >= $3 and d.created_at < $4) c
   where w.seller_id = $1 and w.environment = $2 and w.status in ('ACTIVE', 'DISABLED')
   order by w.created_at desc, w.id desc`;

// The orders' postback_url deliveries, on deliveries_postbacks_idx.
const POSTBACKS = `
  select ${COUNTS}
    from webhooks.deliveries d
   where d.webhook_id is null and d.seller_id = $1 and d.environment = $2
     and d.created_at >= $3 and d.created_at < $4`;

/** Deliveries of the last 24 hours by state, per webhook and for postbacks (domain/health.ts). */
export async function webhooksHealth(sql: Sql, scope: Scope, now = new Date()): Promise<WebhooksHealth> {
  const since = healthSince(now);
  const values = [scope.sellerId, scope.environment, since, now];
  // Planned at each run: a plan kept from when a seller had few deliveries would not suit many.
  const [webhooks, [postbacks]] = await Promise.all([
    sql.query<WebhookCountsRow>(WEBHOOKS, values, { planEachRun: true }),
    sql.query<CountsRow>(POSTBACKS, values, { planEachRun: true }),
  ]);
  return presentHealth({ webhooks, postbacks }, since, now);
}
