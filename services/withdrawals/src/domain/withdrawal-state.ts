import { WithdrawalEvents, type WithdrawalStatus } from '@seller-api/contracts';
import { withdrawalPaid, withdrawalReleased, type Entry } from './ledger';

/**
 * The withdrawal state machine (docs/finance.md, "State machine"), decided in one place:
 *
 *   (request) -> PENDING -> APPROVED -> PROCESSING -> PAID
 *                        \-> DENIED  \-> CANCELED \-> FAILED
 *
 * Each action gives the next status, the public event it emits and the ledger entry it posts (the hold
 * is posted by the request itself, see ledger.checkWithdrawal), or a refusal that names the current
 * status. The caller applies it on the locked withdrawal row, in the transaction that stores the event.
 */
export type WithdrawalAction =
  'approve' | 'deny' | 'cancel' | 'start_payout' | 'payout_paid' | 'payout_failed';

export type WithdrawalEventName = (typeof WithdrawalEvents)[keyof typeof WithdrawalEvents];

const MOVES: Record<
  WithdrawalAction,
  { from: WithdrawalStatus; to: WithdrawalStatus; verb: string; event: WithdrawalEventName }
> = {
  approve: { from: 'PENDING', to: 'APPROVED', verb: 'approved', event: WithdrawalEvents.APPROVED },
  deny: { from: 'PENDING', to: 'DENIED', verb: 'denied', event: WithdrawalEvents.DENIED },
  // Only before the payout worker sent it: PROCESSING may already be money on its way.
  cancel: { from: 'APPROVED', to: 'CANCELED', verb: 'canceled', event: WithdrawalEvents.CANCELED },
  start_payout: {
    from: 'APPROVED',
    to: 'PROCESSING',
    verb: 'sent for payout',
    event: WithdrawalEvents.PROCESSING,
  },
  payout_paid: { from: 'PROCESSING', to: 'PAID', verb: 'marked paid', event: WithdrawalEvents.PAID },
  payout_failed: { from: 'PROCESSING', to: 'FAILED', verb: 'marked failed', event: WithdrawalEvents.FAILED },
};

/** Statuses whose amount is still held: what `pending_amount` sums. */
export const IN_FLIGHT: readonly WithdrawalStatus[] = ['PENDING', 'APPROVED', 'PROCESSING'];

export type WithdrawalMove =
  | {
      ok: true;
      from: WithdrawalStatus;
      to: WithdrawalStatus;
      event: WithdrawalEventName;
      entry: Entry | null;
    }
  | { ok: false; message: string };

/** The ledger effect of reaching `to`: the hold is released (DENIED, FAILED, CANCELED) or paid out (PAID). */
function entryFor(to: WithdrawalStatus, amount: number): Entry | null {
  if (to === 'DENIED' || to === 'FAILED' || to === 'CANCELED') return withdrawalReleased(amount);
  if (to === 'PAID') return withdrawalPaid(amount);
  return null;
}

export function moveWithdrawal(
  current: WithdrawalStatus,
  action: WithdrawalAction,
  amount: number,
): WithdrawalMove {
  const rule = MOVES[action];
  if (current !== rule.from) {
    return {
      ok: false,
      message: `Only ${/^[AEIOU]/.test(rule.from) ? 'an' : 'a'} ${rule.from} withdrawal can be ${rule.verb}; this withdrawal is ${current}.`,
    };
  }
  return { ok: true, from: current, to: rule.to, event: rule.event, entry: entryFor(rule.to, amount) };
}
