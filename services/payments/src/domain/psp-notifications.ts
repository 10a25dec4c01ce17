import type { EntityManager } from '@mikro-orm/postgresql';
import {
  PspPixPayment,
  type Environment,
  type PspPaymentOutcome,
  type PspRefundOutcome,
  type RefundStatus,
} from '@seller-api/contracts';
import { confirmPayment, settleRefund, type LifecycleDeps } from './lifecycle';

/*
 * One item of an API Pix notification (`POST /api/v1/psp/webhook/pix`, docs/payments.md): a payment
 * received, and, in `devolucoes`, where its refunds stand. Each item is read on its own, so an item the
 * standard's schema refuses (logged for an operator) does not refuse the others: the PSP would only
 * send the same batch again.
 */

/** API Pix `Devolucao.status` as our refund statuses. */
export const REFUND_STATUS_OF: Record<PspRefundOutcome, RefundStatus> = {
  EM_PROCESSAMENTO: 'PROCESSING',
  DEVOLVIDO: 'REFUNDED',
  NAO_REALIZADO: 'FAILED',
};

/** Reais as API Pix writes them ("150.00") to integer cents, without floating point. */
export function reaisToCents(valor: string): number {
  const [whole = '0', fraction = '00'] = valor.split('.');
  return Number(whole) * 100 + Number(fraction.padEnd(2, '0').slice(0, 2));
}

/**
 * Applies one notified item for the PSP of `environment`: the payment first (recorded once per
 * end-to-end id: a notification that only reports refunds of a payment seen before answers
 * `duplicate`), then each refund it reports.
 */
export async function applyNotifiedPix(
  em: EntityManager,
  environment: Environment,
  item: unknown,
  deps: LifecycleDeps,
): Promise<PspPaymentOutcome> {
  const parsed = PspPixPayment.safeParse(item);
  if (!parsed.success) {
    deps.logger.warn(
      {
        end_to_end_id: endToEndIdOf(item),
        issues: parsed.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`),
      },
      'PSP notification item does not follow API Pix; skipped',
    );
    return 'invalid';
  }
  const pix = parsed.data;
  const { outcome } = await confirmPayment(
    em,
    {
      environment,
      txid: pix.txid ?? null,
      endToEndId: pix.endToEndId,
      amountCents: reaisToCents(pix.valor),
      paidAt: new Date(pix.horario),
    },
    deps,
  );
  for (const refund of pix.devolucoes ?? []) {
    await settleRefund(
      em,
      {
        environment,
        endToEndId: pix.endToEndId,
        refundId: refund.id,
        status: REFUND_STATUS_OF[refund.status],
        reason: refund.motivo ?? null,
      },
      deps,
      'notification',
    );
  }
  return outcome;
}

/** The item's end-to-end id for the log, when it has a string one (it is no secret). */
function endToEndIdOf(item: unknown): string | null {
  if (typeof item !== 'object' || item === null) return null;
  const value = (item as Record<string, unknown>).endToEndId;
  return typeof value === 'string' ? value.slice(0, 64) : null;
}
