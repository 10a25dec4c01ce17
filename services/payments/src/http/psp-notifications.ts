import type { EntityManager } from '@mikro-orm/postgresql';
import { PspPixPayment, type Environment, type PspPaymentOutcome } from '@seller-api/contracts';
import type { ChargeStoreDeps } from '../db/charges';
import { confirmPayment } from '../db/psp-payments';
import { settleRefund } from '../db/refunds';
import { REFUND_STATUS_OF, componentsOf, endToEndIdOf, reaisToCents } from '../domain/psp-notifications';

/**
 * Applies one notified item for the PSP of `environment`: the payment first (recorded once per
 * end-to-end id: a notification that only reports refunds of a payment seen before answers
 * `duplicate`), then each refund it reports.
 */
export async function applyNotifiedPix(
  em: EntityManager,
  environment: Environment,
  item: unknown,
  deps: ChargeStoreDeps,
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
      components: componentsOf(item),
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
