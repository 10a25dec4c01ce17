import { ChargeState } from '@seller-api/contracts';
import {
  batchedIdempotentHandler,
  readMessagePart,
  recordProcessedMessages,
  type MessageHandler,
  type Runtime,
} from '@seller-api/service-kit';
import { chargeVersionsOf } from '../db/charge-mirror';
import { SCHEMA } from '../db/migrations';
import { applyChargeState } from '../domain/order-status';
import { CHARGES_QUEUE } from './topology';

/**
 * Mirrors payments' decisions (a PSP payment, an expiry) that no request of ours started, a batch of
 * messages at a time. Most states were mirrored already by the request that caused them (a seller's
 * action, a sandbox payment: charge-action-routes.ts), and versions only grow: when the orders hold
 * every version of the batch, its ids are only recorded as processed, in one statement. Otherwise the
 * ids and the newer states (applyChargeState) commit together in one transaction, order by order and
 * version by version, so two batches in flight update the orders they share in the same order.
 */
export function chargeStateHandler(runtime: Runtime): MessageHandler {
  return batchedIdempotentHandler(
    CHARGES_QUEUE,
    (message) => readMessagePart(ChargeState, message.payload, message.name),
    async (batch) => {
      const ids = batch.map((item) => item.message.id);
      const held = await chargeVersionsOf(runtime.sql, [
        ...new Set(batch.map((item) => item.value.order_uuid)),
      ]);
      const newer = batch
        .filter(({ value }) => value.version > (held.get(value.order_uuid) ?? -Infinity))
        .sort((a, b) =>
          a.value.order_uuid === b.value.order_uuid
            ? a.value.version - b.value.version
            : a.value.order_uuid < b.value.order_uuid
              ? -1
              : 1,
        );
      if (newer.length === 0) return recordProcessedMessages(runtime.sql.query, SCHEMA, CHARGES_QUEUE, ids);
      const fresh = await runtime.sql.transaction('select 1', async (_rows, query) => {
        const recorded = await recordProcessedMessages(query, SCHEMA, CHARGES_QUEUE, ids);
        for (const item of newer)
          if (recorded.has(item.message.id)) await applyChargeState(runtime.sql, item.value, query);
        return recorded;
      });
      runtime.relay.wake();
      return fresh;
    },
  );
}
