import { ChargeState } from '@seller-api/contracts';
import {
  batchedIdempotentHandler,
  readMessagePart,
  type MessageHandler,
  type Runtime,
} from '@seller-api/service-kit';
import { mirrorChargeStates } from '../db/charge-mirror';
import { CHARGES_QUEUE } from './topology';

/**
 * Mirrors payments' decisions (a PSP payment, an expiry) that no request of ours started, a batch of
 * messages at a time (db/charge-mirror.ts mirrorChargeStates). Most states were mirrored already by the
 * request that caused them (a seller's action, a sandbox payment: charge-action-routes.ts).
 */
export function chargeStateHandler(runtime: Runtime): MessageHandler {
  return batchedIdempotentHandler(
    CHARGES_QUEUE,
    (message) => readMessagePart(ChargeState, message.payload, message.name),
    async (batch) => {
      const { fresh, stored } = await mirrorChargeStates(runtime.sql, CHARGES_QUEUE, batch);
      if (stored) runtime.relay.wake();
      return fresh;
    },
  );
}
