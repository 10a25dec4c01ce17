import { ChargeState } from '@seller-api/contracts';
import {
  batchedIdempotentHandler,
  processOnce,
  readMessagePart,
  recordProcessedMessages,
  type MessageHandler,
  type Runtime,
} from '@seller-api/service-kit';
import { chargeVersionsOf } from '../db/charge-versions';
import { SCHEMA } from '../db/migrations';
import { applyChargeState } from '../domain/order-status';
import { CHARGES_QUEUE } from './topology';

/**
 * Mirrors payments' decisions (a PSP payment, an expiry) that no request of ours started, a batch of
 * messages at a time. Most states were mirrored already by the request that caused them (a seller's
 * action, a sandbox payment: charge-action-routes.ts), and versions only grow: a message whose version
 * the order holds changes nothing and is only recorded as processed, all of them in one statement. The
 * others are applied each in its own transaction with its id (applyChargeState), as one message alone.
 */
export function chargeStateHandler(runtime: Runtime): MessageHandler {
  return batchedIdempotentHandler(
    CHARGES_QUEUE,
    (message) => readMessagePart(ChargeState, message.payload, message.name),
    async (batch) => {
      const held = await chargeVersionsOf(runtime.sql, [
        ...new Set(batch.map((item) => item.value.order_uuid)),
      ]);
      const mirrored = (state: ChargeState) => state.version <= (held.get(state.order_uuid) ?? -Infinity);
      const known = batch.filter((item) => mirrored(item.value));
      const fresh =
        known.length > 0
          ? await recordProcessedMessages(
              runtime.sql.query,
              SCHEMA,
              CHARGES_QUEUE,
              known.map((item) => item.message.id),
            )
          : new Set<string>();
      // Settled all before an error is passed on: a batch written again must not overlap its own writes.
      const outcomes = await Promise.allSettled(
        batch
          .filter((item) => !mirrored(item.value))
          .map(async (item) => {
            const applied = await processOnce(
              runtime.orm,
              SCHEMA,
              CHARGES_QUEUE,
              item.message.id,
              async (em) => {
                await applyChargeState(em, item.value);
              },
            );
            if (applied) fresh.add(item.message.id);
          }),
      );
      const failed = outcomes.find((outcome) => outcome.status === 'rejected');
      if (failed) throw failed.reason;
      return fresh;
    },
  );
}
