// What the webhook benches (run.mjs, pg-costs.mjs) share: the dispatcher's defaults, and deliveries
// written straight into webhooks.deliveries with the columns and values the dispatcher's fan-out writes
// (db/delivery-writes.ts), one row per webhook per event, interleaved as a fan-out writes them.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { ROOT } from '../lib.mjs';

/** The dispatcher's default concurrency budgets and poll, from its build's configuration schema. */
export async function dispatcherDefaults() {
  const config = path.join(ROOT, 'services/webhook-dispatcher/dist/config.js');
  if (!existsSync(config)) {
    console.error(`${config} is missing: run \`npm run build\` first`);
    process.exit(1);
  }
  const { dispatcherEnv } = await import(config);
  return {
    concurrency: dispatcherEnv.WEBHOOK_CONCURRENCY.parse(undefined),
    destinationConcurrency: dispatcherEnv.WEBHOOK_DESTINATION_CONCURRENCY.parse(undefined),
    pollIntervalMs: dispatcherEnv.WEBHOOK_POLL_INTERVAL_MS.parse(undefined),
  };
}

/**
 * `perWebhook` events' deliveries to each of `webhookIds`, with `payload` (JSON text): due, or
 * (`delivered`) delivered with their one attempt recorded, in one statement. The events are a
 * millisecond apart, the last one now, as a backlog piles up: the due index holds distinct times, as
 * in production, not one time repeated (which PostgreSQL's B-tree would store deduplicated).
 */
export async function writeDeliveries(db, { perWebhook, payload, webhookIds, delivered = false }) {
  await db.query(
    `with events as (
       select g, now() - ($1::int - g) * interval '1 millisecond' as at from generate_series(1, $1::int) g),
     written as (
       insert into webhooks.deliveries
         (id, event_id, webhook_id, order_id, seller_id, environment, event, url, signed, payload,
          occurred_at, status, attempts, next_attempt_at, created_at, delivered_at)
       select gen_random_uuid(), 'evt_' || substr(replace(gen_random_uuid()::text, '-', ''), 1, 24),
              w.id, null, w.seller_id, w.environment, w.event, w.url, true, $2::jsonb, e.at,
              case when $4::boolean then 'delivered' else 'pending' end,
              case when $4::boolean then 1 else 0 end,
              case when $4::boolean then null else e.at end, e.at, case when $4::boolean then e.at end
         from events e
         cross join unnest($3::uuid[]) with ordinality as h(id, position)
         join webhooks.webhooks w on w.id = h.id
        order by e.g, h.position
       returning id, delivered_at)
     insert into webhooks.delivery_attempts (delivery_id, attempt, started_at, duration_ms, response_status, response_body)
     select id, 1, delivered_at, 1, 200, '' from written where delivered_at is not null`,
    [perWebhook, payload, webhookIds, delivered],
  );
}
