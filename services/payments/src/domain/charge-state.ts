import type { ChargeStatus } from '../db/entities';

/**
 * The order's money state machine (docs/payments.md), decided in one place. Each action gives the next
 * state or a refusal that names the current one; the caller applies it on the locked charge row, so a
 * payment racing an expiry or a cancel has exactly one winner.
 */
export type ChargeAction =
  'pay' | 'expire' | 'cancel' | 'refund' | 'open_med' | 'med_refunded' | 'med_rejected' | 'chargeback';

const MOVES: Record<ChargeAction, { from: ChargeStatus; to: ChargeStatus; verb: string }> = {
  pay: { from: 'PENDING', to: 'PAID', verb: 'paid' },
  expire: { from: 'PENDING', to: 'EXPIRED', verb: 'expired' },
  cancel: { from: 'PENDING', to: 'CANCELLED', verb: 'cancelled' },
  refund: { from: 'PAID', to: 'REFUNDED', verb: 'refunded' },
  open_med: { from: 'PAID', to: 'MED', verb: 'disputed through a MED' },
  med_refunded: { from: 'MED', to: 'REFUNDED', verb: 'refunded through its MED' },
  med_rejected: { from: 'MED', to: 'PAID', verb: 'cleared of its MED' },
  chargeback: { from: 'PAID', to: 'CHARGEBACK', verb: 'charged back' },
};

export type Move = { ok: true; from: ChargeStatus; to: ChargeStatus } | { ok: false; message: string };

export function move(current: ChargeStatus, action: ChargeAction): Move {
  const rule = MOVES[action];
  if (current !== rule.from) {
    return { ok: false, message: `Only a ${rule.from} order can be ${rule.verb}; this order is ${current}.` };
  }
  return { ok: true, from: current, to: rule.to };
}

/** A payment arriving for a charge in this state is refunded to the payer at once (docs/payments.md). */
export function refundsLatePayment(current: ChargeStatus): boolean {
  return current === 'EXPIRED' || current === 'CANCELLED';
}
