import { ChargeState } from '@seller-api/contracts';
import { readMessagePart, type Handler } from '@seller-api/service-kit';
import { applyChargeState } from '../domain/order-status';

/** Mirrors payments' decisions (a PSP payment, an expiry) that no request of ours started. */
export const chargeStateHandler: Handler = async (em, message) => {
  await applyChargeState(em, readMessagePart(ChargeState, message.payload, message.name));
};
