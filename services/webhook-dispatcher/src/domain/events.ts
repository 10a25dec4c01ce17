import { createHash } from 'node:crypto';
import type { Environment, EventDelivery, EventName, EventRecord } from '@seller-api/contracts';

const ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/**
 * The id of the event a message carries: `evt_` and 24 letters and digits drawn from a hash of the
 * message id, so that however often the message arrives its event has one id and one row.
 */
export function eventIdOf(messageId: string): string {
  let n = BigInt(`0x${createHash('sha256').update(`event|${messageId}`).digest('hex')}`);
  let id = '';
  // 24 base-62 digits take 143 of the hash's 256 bits.
  for (let i = 0; i < 24; i += 1) {
    id += ALPHANUMERIC[Number(n % 62n)];
    n /= 62n;
  }
  return `evt_${id}`;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The order an event is about, for the `order_uuid` filter: `data.order.uuid` of the order, order item
 * and payment events; else the producer's x-order-uuid header; none for withdrawals.
 */
export function orderOf(data: unknown, header: string | null): string | null {
  const order = (data as { order?: { uuid?: unknown } } | null)?.order;
  if (typeof order?.uuid === 'string' && UUID.test(order.uuid)) return order.uuid;
  return header && UUID.test(header) ? header : null;
}

/** An event's row as db/events.ts reads it, with its deliveries (in the order they were made). */
export interface EventRow {
  id: string;
  seller_id: string;
  environment: Environment;
  event: EventName;
  occurred_at: Date | string;
  data: unknown;
  deliveries: EventDelivery[];
}

/** An event as the API shows it. */
export function presentEvent(row: EventRow): EventRecord {
  return {
    id: row.id,
    event: row.event,
    occurred_at: new Date(row.occurred_at).toISOString(),
    data: row.data,
    deliveries: row.deliveries,
  } as EventRecord;
}
