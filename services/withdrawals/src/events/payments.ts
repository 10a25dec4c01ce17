import {
  ChargeState,
  Environment,
  PaymentApprovedData,
  PaymentEvents,
  PaymentPixQrCodeCreatedData,
  PaymentRefundedData,
  uuid,
} from '@seller-api/contracts';
import {
  UnprocessableMessageError,
  readMessagePart,
  type Handler,
  type IncomingMessage,
  type Logger,
} from '@seller-api/service-kit';
import { recordOrderMessage } from '../domain/order-ledger';
import { releaseFailedRefund } from '../domain/refund-holds';
import type { OrderMessage } from '../domain/order-funds';

const CHARGE_PREFIX = 'internal.charge.';

type Transaction = { gross_amount: number; fee_amount: number; net_amount: number };
const amountsOf = (t: Transaction) => ({ gross: t.gross_amount, fee: t.fee_amount, net: t.net_amount });

/**
 * The order and what the message says about its money. Every name the queue's bindings let in is one
 * the ledger uses; any other name, or a payload its contract refuses, can never be applied and is
 * parked (UnprocessableMessageError), never acked: it may carry money.
 */
export function readOrderMessage(message: IncomingMessage): {
  orderId: string;
  message: OrderMessage;
  /** A refund the PSP did not make: the newest hold its failure covers (releaseFailedRefund), or null. */
  releasesRefund: number | null;
} | null {
  const { name, payload } = message;
  if (name.startsWith(CHARGE_PREFIX)) {
    const state = readMessagePart(ChargeState, payload, name);
    const refund = state.refund;
    return {
      orderId: state.order_uuid,
      message: { kind: 'charge', status: state.status, version: state.version },
      releasesRefund: refund?.status === 'FAILED' ? refund.hold_seq : null,
    };
  }
  switch (name) {
    case PaymentEvents.PIX_QR_CODE_CREATED: {
      const data = readMessagePart(PaymentPixQrCodeCreatedData, payload, name);
      return {
        orderId: data.order.uuid,
        message: { kind: 'payment', status: 'PENDING', amounts: amountsOf(data.transaction) },
        releasesRefund: null,
      };
    }
    case PaymentEvents.APPROVED: {
      const data = readMessagePart(PaymentApprovedData, payload, name);
      return {
        orderId: data.order.uuid,
        message: { kind: 'payment', status: 'PAID', amounts: amountsOf(data.transaction) },
        releasesRefund: null,
      };
    }
    case PaymentEvents.REFUNDED: {
      const data = readMessagePart(PaymentRefundedData, payload, name);
      return {
        orderId: data.order.uuid,
        message: { kind: 'payment', status: 'REFUNDED', amounts: amountsOf(data.transaction) },
        releasesRefund: null,
      };
    }
    // For the seller: the hold of a failed refund is given back by the internal state that comes with it.
    case PaymentEvents.REFUND_FAILED:
      return null;
    default:
      throw new UnprocessableMessageError(`the ledger knows no message named ${name}`);
  }
}

/**
 * Feeds the ledger from payments (bound to `payment.*` and `internal.charge.*`). Wrapped in the kit's
 * idempotentHandler, so the entries and the processed message id commit together. A message that
 * fails (the database restarting) goes through the retry queue and comes back under its own name; one
 * that can never be read is parked in the dead queue for an operator (docs/messaging.md), never
 * silently dropped, since it may carry money.
 */
export function paymentsHandler(logger: Logger): Handler {
  return async (em, incoming) => {
    const read = readOrderMessage(incoming);
    if (!read) return;
    const sellerId = readMessagePart(uuid, incoming.headers['x-seller-id'], 'x-seller-id header');
    const environment = readMessagePart(
      Environment,
      incoming.headers['x-environment'],
      'x-environment header',
    );
    const posted = await recordOrderMessage(
      em,
      { sellerId, environment },
      read.orderId,
      read.message,
      `${incoming.name} ${incoming.id}`,
    );
    if (read.releasesRefund !== null) {
      await em.flush();
      if (await releaseFailedRefund(em, { sellerId, environment }, read.orderId, read.releasesRefund))
        posted.push('refund_released');
    }
    if (posted.length > 0) {
      logger.info(
        { order_uuid: read.orderId, message: incoming.name, entries: posted },
        'ledger entries posted',
      );
    }
  };
}
