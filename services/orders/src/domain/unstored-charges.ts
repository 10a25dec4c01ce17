import type { Charge, CreateChargeRequest } from '@seller-api/contracts';
import { HttpError, type Logger } from '@seller-api/service-kit';

/**
 * What became of a charge whose order was not stored (docs/payments.md, "Limits and a charge without
 * its order"):
 * - `cancelled`: payments cancelled it, so a late payment of its QR code is given back to the payer;
 * - `cancel_failed`: payments could not be reached; the charge expires at its `expires_at`;
 * - `left_for_retry`: a keyed request's; its retry with the same Idempotency-Key gets the same
 *   charge and stores the order (cancelling it would leave that order on a dead charge).
 */
export type UnstoredChargeOutcome = 'cancelled' | 'cancel_failed' | 'left_for_retry';

export interface UnstoredChargeDeps {
  /** Cancels the order's charge at payments (the seller's own cancel, on the order id). */
  cancel(orderId: string): Promise<unknown>;
  logger: Logger;
  /** Counted by outcome, with the charge's amount. */
  record(outcome: UnstoredChargeOutcome, grossAmount: number): void;
}

export interface UnstoredCharge {
  orderId: string;
  grossAmount: number;
  /** Whether payments is known to have made the charge (false: its answer never came). */
  made: boolean;
  keyed: boolean;
}

/**
 * Asks payments for an order's charge (`request`, handed to prepareOrder) and keeps what was asked
 * (`asked`): the charge to release if the order is not stored after all.
 */
export class ChargeAsk {
  asked: UnstoredCharge | null = null;

  constructor(
    private readonly createCharge: (request: CreateChargeRequest) => Promise<Charge>,
    private readonly keyed: boolean,
  ) {}

  readonly request = async (request: CreateChargeRequest): Promise<Charge> => {
    const asked: UnstoredCharge = {
      orderId: request.order_uuid,
      grossAmount: request.gross_amount,
      made: false,
      keyed: this.keyed,
    };
    this.asked = asked;
    const charge = await this.createCharge(request);
    asked.made = true;
    return charge;
  };
}

/**
 * Called when creating an order failed after payments was asked for its charge: no charge may stay
 * payable without its order. Best effort: a failure here is logged and counted, never thrown over the
 * request's own error.
 */
export async function releaseUnstoredCharge(
  charge: UnstoredCharge,
  cause: unknown,
  deps: UnstoredChargeDeps,
): Promise<UnstoredChargeOutcome | null> {
  // A duplicate of a keyed request holds its key: the charge is that duplicate's order's.
  if (cause instanceof HttpError && cause.code === 'idempotency_conflict') return null;
  const context = { order_uuid: charge.orderId, cause: describe(cause) };
  if (charge.keyed) {
    if (!charge.made) return null;
    deps.logger.warn(context, 'order not stored; its charge is left for the retry of its Idempotency-Key');
    deps.record('left_for_retry', charge.grossAmount);
    return 'left_for_retry';
  }
  try {
    await deps.cancel(charge.orderId);
  } catch (err) {
    // Asked but never made (payments' answer was lost before it charged): nothing to cancel.
    if (!charge.made && err instanceof HttpError && err.status === 404) return null;
    // Unknown whether payments made it when its answer never came: the charge, if any, expires.
    deps.logger[charge.made ? 'error' : 'warn'](
      { ...context, err: describe(err) },
      'order not stored and its charge could not be cancelled; it stays payable until it expires',
    );
    deps.record('cancel_failed', charge.grossAmount);
    return 'cancel_failed';
  }
  deps.logger.warn(context, 'order not stored; its charge was cancelled at payments');
  deps.record('cancelled', charge.grossAmount);
  return 'cancelled';
}

/** An error's name, code and message, for the log line (never a body or a stack). */
function describe(err: unknown): string {
  if (err instanceof HttpError) return `${err.status} ${err.code}: ${err.message}`;
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return `${err.name}${typeof code === 'string' ? ` ${code}` : ''}: ${err.message}`;
  }
  return String(err);
}
