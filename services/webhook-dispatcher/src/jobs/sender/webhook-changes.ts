import { performance } from 'node:perf_hooks';

/** A change to a webhook that claimed deliveries of it may predate (DeliverySender.changing). */
export interface WebhookChange<D> {
  /** Changes being written. */
  changes: number;
  /** When the last one was written (performance.now()): claims sent before then predate it. */
  committedAt: number;
  /** Deliveries taken out while a change is being written, leased until it is. */
  held: D[];
}

/**
 * Webhooks being changed in this process, or changed while claims sent before were in flight: their
 * deliveries claimed before the change are handed back, not started (jobs/sender.ts,
 * DeliverySender.changing, which hands back what these give it).
 */
export class WebhookChanges<D extends { webhook_id: string | null }> {
  private readonly entries = new Map<string, WebhookChange<D>>();

  get size(): number {
    return this.entries.size;
  }

  /** Counts a change to `webhookId` starting; its entry holds what is taken out meanwhile. */
  begin(webhookId: string): WebhookChange<D> {
    const entry = this.entries.get(webhookId) ?? { changes: 0, committedAt: -Infinity, held: [] };
    entry.changes += 1;
    this.entries.set(webhookId, entry);
    return entry;
  }

  /** Counts a change written: what its entry held, to hand back, once no change of it is being written. */
  end(entry: WebhookChange<D>): D[] {
    entry.changes -= 1;
    entry.committedAt = performance.now();
    return entry.changes === 0 ? entry.held.splice(0) : [];
  }

  /** The change to its webhook that `delivery`, claimed by a claim sent at `sentAt`, predates, if any. */
  predating(delivery: D, sentAt: number): WebhookChange<D> | null {
    if (delivery.webhook_id === null || this.entries.size === 0) return null;
    const entry = this.entries.get(delivery.webhook_id);
    return entry !== undefined && (entry.changes > 0 || sentAt <= entry.committedAt) ? entry : null;
  }

  /** Drops the changes that every claim in flight (sent at `claimsSentAt`) was sent after. */
  forgetSettled(claimsSentAt: Iterable<number>): void {
    let oldestClaim = Infinity;
    for (const sentAt of claimsSentAt) oldestClaim = Math.min(oldestClaim, sentAt);
    for (const [id, entry] of this.entries) {
      if (entry.changes === 0 && entry.committedAt < oldestClaim) this.entries.delete(id);
    }
  }

  /** Takes out everything held, webhook by webhook (stopping). */
  takeAllHeld(): D[][] {
    return [...this.entries.values()].map((entry) => entry.held.splice(0));
  }
}
