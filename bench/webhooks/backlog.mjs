// Deliveries written straight into webhooks.deliveries for the webhook benches (run.mjs, pg-costs.mjs):
// the columns and values the dispatcher's fan-out writes (db/delivery-writes.ts), one row per webhook per
// event, interleaved as a fan-out writes them.

/**
 * `perWebhook` deliveries to each of `webhookIds` with `payload` (JSON text): due now, or (`delivered`)
 * delivered, each with its one attempt recorded.
 */
export async function writeDeliveries(db, { perWebhook, payload, webhookIds, delivered = false }) {
  await db.query(
    `insert into webhooks.deliveries
       (id, event_id, webhook_id, order_id, seller_id, environment, event, url, signed, payload,
        occurred_at, status, attempts, next_attempt_at, created_at, delivered_at)
     select gen_random_uuid(), 'evt_' || substr(replace(gen_random_uuid()::text, '-', ''), 1, 24),
            w.id, null, w.seller_id, w.environment, w.event, w.url, true, $2::jsonb, now(),
            case when $4::boolean then 'delivered' else 'pending' end, case when $4::boolean then 1 else 0 end,
            case when $4::boolean then null else now() end, now(), case when $4::boolean then now() end
       from generate_series(1, $1::int) g
       cross join unnest($3::uuid[]) with ordinality as h(id, position)
       join webhooks.webhooks w on w.id = h.id
      order by g, h.position`,
    [perWebhook, payload, webhookIds, delivered],
  );
  if (delivered) {
    await db.query(
      `insert into webhooks.delivery_attempts (delivery_id, attempt, started_at, duration_ms, response_status, response_body)
       select d.id, 1, now(), 1, 200, '' from webhooks.deliveries d
        where d.status = 'delivered'
          and not exists (select 1 from webhooks.delivery_attempts a where a.delivery_id = d.id)`,
    );
  }
}
