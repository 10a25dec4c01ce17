import {
  WEBHOOK_HEALTH_WINDOW_HOURS,
  type DeliveryCounts,
  type EventName,
  type WebhooksHealth,
} from '@seller-api/contracts';
import type { Scope, Sql } from '@seller-api/service-kit';
import type { StoredWebhookStatus } from '../db/entities';

/** Counts arrive as bigint, which pg hands over as strings. */
type Count = string | number;

interface CountsRow {
  delivered: Count;
  retrying: Count;
  dead: Count;
}

interface WebhookCountsRow extends CountsRow {
  id: string;
  url: string;
  event: EventName;
  status: StoredWebhookStatus;
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

const countsOf = (row: CountsRow | undefined): DeliveryCounts => ({
  delivered: Number(row?.delivered ?? 0),
  retrying: Number(row?.retrying ?? 0),
  dead: Number(row?.dead ?? 0),
});

/** Deliveries of the last 24 hours by state, per webhook and for postbacks (docs/webhooks.md). */
export async function webhooksHealth(sql: Sql, scope: Scope, now = new Date()): Promise<WebhooksHealth> {
  const since = new Date(now.getTime() - WEBHOOK_HEALTH_WINDOW_HOURS * 3_600_000);
  const values = [scope.sellerId, scope.environment, since, now];
  // Planned at each run: a plan kept from when a seller had few deliveries would not suit many.
  const [webhooks, [postbacks]] = await Promise.all([
    sql.query<WebhookCountsRow>(WEBHOOKS, values, { planEachRun: true }),
    sql.query<CountsRow>(POSTBACKS, values, { planEachRun: true }),
  ]);
  return {
    since: since.toISOString(),
    until: now.toISOString(),
    webhooks: webhooks.map((w) => ({
      webhook_id: w.id,
      url: w.url,
      event: w.event,
      status: w.status === 'DISABLED' ? 'DISABLED' : 'ACTIVE',
      ...countsOf(w),
    })),
    postbacks: countsOf(postbacks),
  };
}
