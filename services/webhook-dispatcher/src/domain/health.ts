import {
  WEBHOOK_HEALTH_WINDOW_HOURS,
  type DeliveryCounts,
  type EventName,
  type WebhooksHealth,
} from '@seller-api/contracts';
import type { StoredWebhookStatus } from '../db/entities';

/** Counts arrive as bigint, which pg hands over as strings. */
type Count = string | number;

/** Deliveries of the window by state (db/deliveries.ts, webhooksHealth). */
export interface CountsRow {
  delivered: Count;
  retrying: Count;
  dead: Count;
}

/** A registration's counts. */
export interface WebhookCountsRow extends CountsRow {
  id: string;
  url: string;
  event: EventName;
  status: StoredWebhookStatus;
}

const countsOf = (row: CountsRow | undefined): DeliveryCounts => ({
  delivered: Number(row?.delivered ?? 0),
  retrying: Number(row?.retrying ?? 0),
  dead: Number(row?.dead ?? 0),
});

/** The window the health covers: the last WEBHOOK_HEALTH_WINDOW_HOURS up to `now`. */
export const healthSince = (now: Date) => new Date(now.getTime() - WEBHOOK_HEALTH_WINDOW_HOURS * 3_600_000);

/**
 * Deliveries of the last 24 hours by state, per webhook and for postbacks (docs/webhooks.md), from the
 * counts of the window [since, now).
 */
export function presentHealth(
  counts: { webhooks: WebhookCountsRow[]; postbacks: CountsRow | undefined },
  since: Date,
  now: Date,
): WebhooksHealth {
  return {
    since: since.toISOString(),
    until: now.toISOString(),
    webhooks: counts.webhooks.map((w) => ({
      webhook_id: w.id,
      url: w.url,
      event: w.event,
      status: w.status === 'DISABLED' ? 'DISABLED' : 'ACTIVE',
      ...countsOf(w),
    })),
    postbacks: countsOf(counts.postbacks),
  };
}
