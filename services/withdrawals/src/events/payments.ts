import {
  ChargeState,
  Environment,
  PaymentApprovedData,
  PaymentEvents,
  PaymentPixQrCodeCreatedData,
  PaymentRefundedData,
  uuid,
} from '@seller-api/contracts';
import type { Handler, IncomingMessage, Logger } from '@seller-api/service-kit';
import { recordOrderMessage } from '../domain/order-ledger';
import type { OrderMessage } from '../domain/order-funds';

const CHARGE_PREFIX = 'internal.charge.';

type Transaction = { gross_amount: number; fee_amount: number; net_amount: number };
const amountsOf = (t: Transaction) => ({ gross: t.gross_amount, fee: t.fee_amount, net: t.net_amount });

/** The order and what the message says about its money, or null for a message the ledger does not use. */
export function readOrderMessage(
  message: IncomingMessage,
): { orderId: string; message: OrderMessage } | null {
  const { routingKey, payload } = message;
  if (routingKey.startsWith(CHARGE_PREFIX)) {
    const state = ChargeState.parse(payload);
    return {
      orderId: state.order_uuid,
      message: { kind: 'charge', status: state.status, version: state.version },
    };
  }
  switch (routingKey) {
    case PaymentEvents.PIX_QR_CODE_CREATED: {
      const data = PaymentPixQrCodeCreatedData.parse(payload);
      return {
        orderId: data.order.uuid,
        message: { kind: 'payment', status: 'PENDING', amounts: amountsOf(data.transaction) },
      };
    }
    case PaymentEvents.APPROVED: {
      const data = PaymentApprovedData.parse(payload);
      return {
        orderId: data.order.uuid,
        message: { kind: 'payment', status: 'PAID', amounts: amountsOf(data.transaction) },
      };
    }
    case PaymentEvents.REFUNDED: {
      const data = PaymentRefundedData.parse(payload);
      return {
        orderId: data.order.uuid,
        message: { kind: 'payment', status: 'REFUNDED', amounts: amountsOf(data.transaction) },
      };
    }
    default:
      return null;
  }
}

/**
 * Feeds the ledger from payments (bound to `payment.*` and `internal.charge.*`). Wrapped in the kit's
 * idempotentHandler, so the entries and the processed message id commit together. A message that
 * cannot be read throws: it is retried and finally parked in `withdrawals.ledger.dead` for an operator,
 * never silently dropped, since it may carry money.
 */
export function paymentsHandler(logger: Logger): Handler {
  return async (em, incoming) => {
    const read = readOrderMessage(incoming);
    if (!read) return;
    const sellerId = uuid.parse(incoming.headers['x-seller-id']);
    const environment = Environment.parse(incoming.headers['x-environment']);
    const posted = await recordOrderMessage(
      em,
      { sellerId, environment },
      read.orderId,
      read.message,
      `${incoming.routingKey} ${incoming.id}`,
    );
    if (posted.length > 0) {
      logger.info(
        { order_uuid: read.orderId, message: incoming.routingKey, entries: posted },
        'ledger entries posted',
      );
    }
  };
}
