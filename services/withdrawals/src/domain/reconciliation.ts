import type { PaidChargeStatus, ReconciliationCharge } from '@seller-api/contracts';
import type { FundsOwner } from './balance';
import type { Account, EntryKind, SaleAmounts } from './ledger';
import {
  applyOrderMessage,
  NEW_ORDER_FUNDS,
  sitsAsAsked,
  targetPosition,
  type FundsPosition,
  type OrderFunds,
  type OrderMessage,
} from './order-funds';

/**
 * The reconciliation's decisions, as pure functions (docs/finance.md, "Reconciliation"): whether the
 * ledger's record of an order agrees with payments, is behind it (and what replaying payments' view
 * would post), or contradicts it; the window a run checks; how a run went. The job that reads payments
 * and the database and applies these is jobs/reconciliation.ts; what it keeps between runs is in
 * db/reconciliation-checkpoints.ts and db/reconciliation-findings.ts.
 *
 * The ledger is behind exactly when the messages payments would have sent change its record: the same
 * idempotent rules as the consumer (order-funds.ts) are applied to payments' view, so a replay heals
 * what a lost message left out, and finding nothing to change is "in step" or a contradiction, never a
 * reason to post a hand-made entry.
 */

/** A charge that was paid at some point, as payments decided it. */
export interface PaidCharge {
  orderId: string;
  owner: FundsOwner;
  amounts: SaleAmounts;
  status: PaidChargeStatus;
  version: number;
  changedAt: Date;
}

export function paidChargeOf(c: ReconciliationCharge): PaidCharge {
  return {
    orderId: c.order_uuid,
    owner: { sellerId: c.seller_id, environment: c.environment },
    amounts: { gross: c.gross_amount, fee: c.fee_amount, net: c.net_amount },
    status: c.charge_status,
    version: c.version,
    changedAt: new Date(c.status_changed_at),
  };
}

/** The contract's form, to store payments' view with a finding and read it back. */
export function reconciliationChargeOf(c: PaidCharge): ReconciliationCharge {
  return {
    order_uuid: c.orderId,
    seller_id: c.owner.sellerId,
    environment: c.owner.environment,
    gross_amount: c.amounts.gross,
    fee_amount: c.amounts.fee,
    net_amount: c.amounts.net,
    charge_status: c.status,
    version: c.version,
    status_changed_at: c.changedAt.toISOString(),
  };
}

/** What the ledger holds for an order: its record (`order_funds`) and whose it is. */
export interface LedgerOrder {
  owner: FundsOwner;
  funds: OrderFunds;
}

/**
 * The messages that tell the ledger what payments knows, in the order they are applied: the amounts, as
 * a payment event implying no more than PENDING (so it never outranks a status the ledger already has),
 * then the status with its version, as `internal.charge.<status>` carries it. The charge was paid, so
 * its amounts are those of the payment: they replace the charge's as made (a due-date charge's differ)
 * while the ledger has posted nothing.
 */
export function replayOf(charge: PaidCharge): OrderMessage[] {
  return [
    { kind: 'payment', status: 'PENDING', amounts: charge.amounts },
    { kind: 'charge', status: charge.status, version: charge.version, amounts: charge.amounts },
  ];
}

/** Why the ledger is behind: no record, no amounts yet, money not moved yet, or an older status. */
export type BehindReason = 'missing' | 'no_amounts' | 'short' | 'older_version';

/** What cannot be healed by a replay, and is reported instead. */
export type MismatchKind =
  /** The ledger files the order under another seller or environment. */
  | 'other_owner'
  /** The ledger's amounts are not payments' (a replay would post the ledger's). */
  | 'amounts_differ'
  /** The ledger knows a newer change than payments reports. */
  | 'ledger_ahead'
  /** Nothing a replay would change, yet the money sits elsewhere than payments' status asks. */
  | 'contradicts'
  /** Replayed, and the ledger would still change: the replay did not stick. */
  | 'not_moved'
  /** A balance row is not the sum of its journal lines. */
  | 'balance_drift';

export type ChargeCheck =
  | { verdict: 'in_step' }
  | {
      verdict: 'behind';
      reason: BehindReason;
      /** What the replay would post, and where it would leave the order's money. */
      entries: EntryKind[];
      reaches: FundsPosition;
    }
  | { verdict: 'mismatch'; kind: MismatchKind; detail: string };

const sameAmounts = (a: SaleAmounts, b: SaleAmounts) =>
  a.gross === b.gross && a.fee === b.fee && a.net === b.net;

function sameFunds(a: OrderFunds, b: OrderFunds): boolean {
  const amounts =
    a.amounts === null || b.amounts === null ? a.amounts === b.amounts : sameAmounts(a.amounts, b.amounts);
  return amounts && a.status === b.status && a.version === b.version && a.position === b.position;
}

const amountsText = (a: SaleAmounts) => `gross ${a.gross}, fee ${a.fee}, net ${a.net}`;
const fundsText = (f: OrderFunds) =>
  `${f.status ?? 'no status'}${f.version === null ? '' : ` v${f.version}`} (money ${f.position})`;
const chargeText = (c: PaidCharge) => `${c.status} v${c.version} (money ${targetPosition(c.status)})`;

/** Compares payments' view of a charge with the ledger's record of its order. */
export function checkCharge(charge: PaidCharge, ledger: LedgerOrder | null): ChargeCheck {
  if (
    ledger &&
    (ledger.owner.sellerId !== charge.owner.sellerId || ledger.owner.environment !== charge.owner.environment)
  ) {
    return {
      verdict: 'mismatch',
      kind: 'other_owner',
      detail: `the ledger files it under seller ${ledger.owner.sellerId} (${ledger.owner.environment}); payments under ${charge.owner.sellerId} (${charge.owner.environment})`,
    };
  }
  const funds = ledger?.funds ?? NEW_ORDER_FUNDS;
  // Amounts nothing was posted with are the charge's as made, which the payment's replace (a due-date
  // charge's differ): the replay heals those. Amounts money was posted with are never replaced.
  if (funds.amounts !== null && funds.position !== 'NONE' && !sameAmounts(funds.amounts, charge.amounts)) {
    return {
      verdict: 'mismatch',
      kind: 'amounts_differ',
      detail: `the ledger has ${amountsText(funds.amounts)}; payments ${amountsText(charge.amounts)}`,
    };
  }
  let replayed = funds;
  const entries: EntryKind[] = [];
  for (const message of replayOf(charge)) {
    const applied = applyOrderMessage(replayed, message);
    replayed = applied.funds;
    entries.push(...applied.entries.map((e) => e.kind));
  }
  if (!sameFunds(replayed, funds)) {
    const reason: BehindReason = !ledger
      ? 'missing'
      : funds.amounts === null
        ? 'no_amounts'
        : replayed.position !== funds.position
          ? 'short'
          : 'older_version';
    return { verdict: 'behind', reason, entries, reaches: replayed.position };
  }
  // A PAID sale whose refund is in flight sits in its refund hold: in step too.
  if (sitsAsAsked(funds.position, charge.status)) return { verdict: 'in_step' };
  const ahead = funds.version !== null && funds.version > charge.version;
  return {
    verdict: 'mismatch',
    kind: ahead ? 'ledger_ahead' : 'contradicts',
    detail: `the ledger holds ${fundsText(funds)}; payments says ${chargeText(charge)}`,
  };
}

/**
 * The check once the replay has run: in step is healed; anything a replay would still change means it
 * did not stick (never expected: the rules are idempotent), and is reported like any contradiction.
 */
export function checkReplayed(charge: PaidCharge, ledger: LedgerOrder | null): ChargeCheck {
  const check = checkCharge(charge, ledger);
  if (check.verdict !== 'behind') return check;
  const funds = ledger?.funds ?? NEW_ORDER_FUNDS;
  return {
    verdict: 'mismatch',
    kind: 'not_moved',
    detail: `replayed ${chargeText(charge)}; the ledger still holds ${fundsText(funds)}`,
  };
}

/** A stored balance row that is not the sum of its lines (or lines without a row). */
export interface BalanceDrift {
  owner: FundsOwner;
  account: Account;
  /** The row's amount; 0 when there is no row. */
  stored: number;
  /** The sum of the journal's lines. */
  summed: number;
}

export const driftDetail = (d: BalanceDrift) =>
  `the balance row of ${d.account} holds ${d.stored}; its journal lines sum to ${d.summed}`;

/** The key of a finding: one per order, one per balance row. */
export const orderSubject = (orderId: string) => `order:${orderId}`;
export const balanceSubject = (owner: FundsOwner, account: Account) =>
  `balance:${owner.sellerId}:${owner.environment}:${account}`;

/** A mismatch the reconciliation could not heal: one per order, or per balance row. */
export interface Finding {
  subject: string;
  kind: MismatchKind;
  owner: FundsOwner;
  orderId: string | null;
  account: Account | null;
  detail: string;
  /** Payments' view of the charge when last seen, to check it again (order findings). */
  charge: PaidCharge | null;
  firstSeenAt: Date;
  lastSeenAt: Date;
}

/**
 * Whether a mismatch may be a change racing the run rather than one to report: the ledger took a
 * message (`ledgerUpdatedAt`) after payments was read (`fetchedAt`), so payments may have moved since (a
 * refund in the middle of the run). Such a charge is asked about again once its window is done.
 */
export function racesTheRun(kind: MismatchKind, ledgerUpdatedAt: Date, fetchedAt: Date): boolean {
  return (
    (kind === 'ledger_ahead' || kind === 'contradicts') && ledgerUpdatedAt.getTime() > fetchedAt.getTime()
  );
}

/**
 * The window of payments' changes a run checks, `[from, to)`: from `since` (an operator's run) or the
 * checkpoint (where the last run stopped; null, the beginning, before the first), up to `graceMs` ago,
 * since younger changes normally still have their events on the way. `advances`: whether the checkpoint
 * may move to `to` once the window is done, which needs the window to start at or before it. Null when
 * there is nothing to check yet.
 */
export function windowOf(
  checkpoint: Date | null,
  since: Date | undefined,
  now: Date,
  graceMs: number,
): { from: Date | null; to: Date; advances: boolean } | null {
  const to = new Date(now.getTime() - graceMs);
  const from = since ?? checkpoint;
  if (from !== null && from.getTime() >= to.getTime()) return null;
  const advances = since === undefined || (checkpoint !== null && since.getTime() <= checkpoint.getTime());
  return { from, to, advances };
}

/**
 * Whether a scheduled run is due: replicas each have a timer and take turns on a lock, and a run that
 * finds one finished less than half an interval ago leaves it at that, so the whole service reconciles
 * about once per interval whatever the number of replicas.
 */
export function isDue(lastFinished: Date | null, now: Date, intervalMs: number): boolean {
  return lastFinished === null || now.getTime() - lastFinished.getTime() >= intervalMs / 2;
}

/**
 * Whether a scheduled run also compares the balance rows with their lines: that reads the whole journal,
 * so it has its own, longer interval (RECONCILE_DRIFT_INTERVAL_MS; 0: never on the timer). An open drift
 * finding stays open, and reported, between two checks.
 */
export function balancesDue(lastChecked: Date | null, now: Date, driftIntervalMs: number): boolean {
  if (driftIntervalMs <= 0) return false;
  return lastChecked === null || now.getTime() - lastChecked.getTime() >= driftIntervalMs;
}

/** `stopped`: the service stopped in the middle of the run; the next one goes on from the checkpoint. */
export type RunOutcome = 'clean' | 'healed' | 'mismatches' | 'stopped' | 'failed';

/** How a finished run went: what is still unhealed outranks what it healed. */
export function runOutcome(run: {
  healed: number;
  mismatches: number;
}): Exclude<RunOutcome, 'stopped' | 'failed'> {
  if (run.mismatches > 0) return 'mismatches';
  return run.healed > 0 ? 'healed' : 'clean';
}
