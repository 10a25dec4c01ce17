import {
  WithdrawalEventData,
  WithdrawalEvents,
  WithdrawalReasonEventData,
  maskPixKey,
} from '@seller-api/contracts';
import { enqueue } from '@seller-api/service-kit';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { WithdrawalRow } from '../db/entities';
import type { WithdrawalEventName } from '../domain/withdrawal-state';
import { EXCHANGE } from './topology';

/**
 * The `data` of every withdrawal.* event (docs/events.md): the PIX key masked by type,
 * no internal ids. denied, failed and canceled add `reason`. Parsed with the contract, so a drift fails here and
 * never reaches a receiver.
 */
export function withdrawalEventData(
  name: WithdrawalEventName,
  w: WithdrawalRow,
): WithdrawalEventData | WithdrawalReasonEventData {
  const withdrawal = {
    uuid: w.id,
    status: w.status,
    gross_amount: w.amount,
    requested_at: w.createdAt.toISOString(),
    decided_at: w.decidedAt ? w.decidedAt.toISOString() : null,
  };
  const rest = {
    bank_data: { pix_key: maskPixKey(w.pixKey, w.pixKeyType), pix_key_type: w.pixKeyType },
    seller: { name: w.sellerName },
  };
  const reason =
    name === WithdrawalEvents.DENIED
      ? w.denyReason
      : name === WithdrawalEvents.FAILED
        ? w.failureReason
        : name === WithdrawalEvents.CANCELED
          ? w.cancelReason
          : undefined;
  if (reason !== undefined) {
    return WithdrawalReasonEventData.parse({ withdrawal: { ...withdrawal, reason }, ...rest });
  }
  return WithdrawalEventData.parse({ withdrawal, ...rest });
}

/** Queues the event in the caller's unit of work: it commits with the change that causes it. */
export function enqueueWithdrawalEvent(em: EntityManager, name: WithdrawalEventName, w: WithdrawalRow): void {
  enqueue(em, {
    exchange: EXCHANGE,
    routingKey: name,
    payload: withdrawalEventData(name, w),
    headers: { 'x-seller-id': w.sellerId, 'x-environment': w.environment },
  });
}
