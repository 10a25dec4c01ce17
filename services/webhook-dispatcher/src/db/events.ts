import {
  EVENT_ID_PATTERN,
  type EventListQuery,
  type EventRecord,
  type ListResponse,
} from '@seller-api/contracts';
import {
  assertOwned,
  decodeCursor,
  deleteInBatches,
  encodeCursor,
  type Scope,
  type Sql,
} from '@seller-api/service-kit';
import { presentEvent, type EventRow } from '../domain/events';

/**
 * The events of the Events API (`webhooks.events`, docs/events-api.md): stored with their deliveries
 * by the fan-out (delivery-writes.ts), read a page or one at a time, deleted after their retention.
 */

/** An event's columns and its deliveries (in the order they were made), as the API shows them. */
const PRESENTED = `p.id, p.seller_id, p.environment, p.event, p.occurred_at, p.data,
  coalesce((select json_agg(json_build_object('id', d.id, 'webhook_id', d.webhook_id,
                                              'event_id', d.event_id, 'status', d.status) order by u.n)
              from unnest(p.delivery_ids) with ordinality as u(id, n)
              join webhooks.deliveries d on d.id = u.id), '[]'::json) as deliveries`;

/** The oldest instant an event is shown from, `$3` days before now. */
const RETAINED_FROM = 'now() - make_interval(days => $3)';

const COLUMNS = 'e.id, e.seller_id, e.environment, e.event, e.occurred_at, e.data, e.delivery_ids';
const NEWEST_FIRST = 'order by occurred_at desc, id desc';

/**
 * The statement of one page of `GET /events/` and its parameters. Each shape reads one index range in
 * order and stops at the page's end (Migration20261216Events): the seller's events in the
 * environment; for several names, one range per name, merged; for an order, its few events, sorted.
 */
export function eventPageQuery(
  scope: Scope,
  query: EventListQuery,
  cursor: { createdAt: Date; id: string } | null,
  retentionDays: number,
): { text: string; values: unknown[] } {
  const values: unknown[] = [scope.sellerId, scope.environment, retentionDays];
  const param = (value: unknown) => {
    values.push(value);
    return `$${values.length}`;
  };
  // Nothing older than the retention, whatever its partition still holds (docs/events-api.md).
  const where = ['e.seller_id = $1', 'e.environment = $2', `e.occurred_at >= ${RETAINED_FROM}`];
  if (query.created_gte) where.push(`e.occurred_at >= ${param(new Date(query.created_gte))}::timestamptz`);
  if (query.created_lte) where.push(`e.occurred_at <= ${param(new Date(query.created_lte))}::timestamptz`);
  if (cursor)
    where.push(`(e.occurred_at, e.id) < (${param(cursor.createdAt)}::timestamptz, ${param(cursor.id)})`);
  const types = query.type;
  let page: string;
  if (query.order_uuid) {
    where.push(`e.order_id = ${param(query.order_uuid)}::uuid`);
    if (types) where.push(`e.event = any(${param(types)}::text[])`);
  } else if (types && types.length > 1) {
    const limit = param(query.limit + 1);
    page = `select e.* from unnest(${param(types)}::text[]) as t(event)
      cross join lateral (select ${COLUMNS} from webhooks.events e
                           where ${where.join(' and ')} and e.event = t.event
                           ${NEWEST_FIRST} limit ${limit}) e
      ${NEWEST_FIRST} limit ${limit}`;
    return { text: `select ${PRESENTED} from (${page}) p ${NEWEST_FIRST}`, values };
  } else if (types) {
    where.push(`e.event = ${param(types[0])}`);
  }
  page = `select ${COLUMNS} from webhooks.events e where ${where.join(' and ')}
    ${NEWEST_FIRST} limit ${param(query.limit + 1)}`;
  return { text: `select ${PRESENTED} from (${page}) p ${NEWEST_FIRST}`, values };
}

/** `GET /events/`: the scope's events, newest first by when they occurred (docs/events-api.md). */
export async function listEvents(
  sql: Sql,
  scope: Scope,
  query: EventListQuery,
  retentionDays: number,
): Promise<ListResponse<EventRecord>> {
  const cursor = query.cursor ? decodeCursor(query.cursor, EVENT_ID_PATTERN) : null;
  const { text, values } = eventPageQuery(scope, query, cursor, retentionDays);
  const rows = await sql.query<EventRow>(text, values);
  const kept = rows.slice(0, query.limit);
  const last = kept.at(-1);
  return {
    results: kept.map(presentEvent),
    next_cursor:
      rows.length > query.limit && last
        ? encodeCursor({ createdAt: new Date(last.occurred_at), id: last.id })
        : null,
  };
}

/**
 * `GET /events/{id}/`: another environment's event does not exist, nor one past the retention; another
 * seller's is a 403.
 */
export async function getEvent(
  sql: Sql,
  scope: Scope,
  id: string,
  retentionDays: number,
): Promise<EventRecord> {
  const [row] = await sql.query<EventRow>(
    `select ${PRESENTED} from webhooks.events p where p.id = $1 and p.occurred_at >= now() - make_interval(days => $2)`,
    [id, retentionDays],
  );
  const owned = assertOwned(
    row ? { ...row, sellerId: row.seller_id, environment: row.environment } : null,
    scope,
    'Event',
  );
  return presentEvent(owned);
}

/**
 * Deletes the events that occurred more than `retentionDays` ago from `table`, `batch` rows per
 * statement so that no statement holds many locks or runs long; replicas running it together share
 * the work (SKIP LOCKED). Answers how many went. Only for the rows from before the table was
 * partitioned (`events_legacy`), or all of them while it is not: a partition of its own goes whole
 * (db/partitions.ts).
 */
export async function deleteExpiredEvents(
  sql: Sql,
  table: 'events' | 'events_legacy',
  retentionDays: number,
  batch = 5_000,
): Promise<number> {
  // By table and row position (deleteInBatches): the table may have been partitioned since the caller
  // looked.
  return deleteInBatches(
    sql,
    `webhooks.${table}`,
    'occurred_at < now() - make_interval(days => $1)',
    [retentionDays],
    batch,
  );
}
