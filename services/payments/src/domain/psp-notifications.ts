import type { AmountDueComponents, PspRefundOutcome, RefundStatus } from '@seller-api/contracts';
import { fromCobvComponentesValor } from '@seller-api/due-date';
import { z } from 'zod';

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

/** The item's end-to-end id for the log, when it has a string one (it is no secret). */
export function endToEndIdOf(item: unknown): string | null {
  if (typeof item !== 'object' || item === null) return null;
  const value = (item as Record<string, unknown>).endToEndId;
  return typeof value === 'string' ? value.slice(0, 64) : null;
}

// API Pix `componentesValor` of a received Pix: each part `{valor: "12.34"}`, all optional; read in a
// notification's item and in a cobv's `pix[]` (clients/bacen-api-pix-cobv.ts).
const Part = z.looseObject({ valor: z.string().regex(/^\d{1,10}\.\d{2}$/) }).optional();
export const ComponentesValor = z.looseObject({
  original: Part,
  multa: Part,
  juros: Part,
  abatimento: Part,
  desconto: Part,
});

/**
 * What the item says its amount is made of (a due-date charge's payment), read loosely: null when it
 * sent none, or none we can read (then ours are used: db/psp-payments.ts). Whether they add up to the
 * amount is the caller's check.
 */
export function componentsOf(item: unknown): AmountDueComponents | null {
  if (typeof item !== 'object' || item === null) return null;
  const parsed = ComponentesValor.safeParse((item as Record<string, unknown>).componentesValor);
  if (!parsed.success || parsed.data.original === undefined) return null;
  return fromCobvComponentesValor(parsed.data);
}
