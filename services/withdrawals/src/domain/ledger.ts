/**
 * The double-entry journal, as pure functions (docs/finance.md). Every movement of a seller's money is
 * an entry whose lines sum to zero. The journal is the record; a balance is the sum of one account's
 * lines, kept as a row by the database in the same transaction as every line (`ledger_balances`).
 * Amounts are integer cents. Sign convention: a positive line increases what the account holds as the
 * seller's statement reads it (what the platform owes the seller, what it earned, what it paid out);
 * `psp_settlement` is the counterpart, so money received at the PSP shows there as a negative amount.
 *
 * These functions decide which lines an event causes; `journal.ts` only stores them.
 */
import { message } from '@seller-api/contracts';

export const ACCOUNTS = {
  /** Money that came in (or went back out) at the PSP for this seller's sales: the counter-account. */
  PSP_SETTLEMENT: 'psp_settlement',
  /** The platform's fee on each sale. */
  PLATFORM_FEES: 'platform_fees',
  /** What the seller may withdraw. */
  SELLER_AVAILABLE: 'seller_available',
  /** Net of sales with an open MED (PIX special return): out of the available balance until decided. */
  SELLER_HELD_MED: 'seller_held_med',
  /**
   * Net of sales whose refund by the seller is in flight: reserved from the available balance before
   * the PSP is asked, so the reversal moves money the seller still has (docs/finance.md, "Refunds").
   */
  SELLER_HELD_REFUND: 'seller_held_refund',
  /** Held for withdrawals in flight (PENDING, APPROVED, PROCESSING). */
  SELLER_WITHDRAWALS_PENDING: 'seller_withdrawals_pending',
  /** Everything transferred to the seller's PIX keys. */
  SELLER_PAID_OUT: 'seller_paid_out',
  /**
   * What the seller owes the platform (zero or negative): a reversal or a MED hold the available balance
   * could not cover, because the seller had already withdrawn the money. The seller's next credits
   * repay it before they become available (settleAvailable).
   */
  SELLER_DEBT: 'seller_debt',
} as const;
export type Account = (typeof ACCOUNTS)[keyof typeof ACCOUNTS];
export const ACCOUNT_NAMES: readonly Account[] = Object.values(ACCOUNTS);

export interface Line {
  account: Account;
  amount: number;
}

/** Why an entry was posted; stored with it so the journal reads as a history. */
export type EntryKind =
  | 'payment_credited'
  | 'med_held'
  | 'med_released'
  | 'payment_reversed'
  | 'refund_held'
  | 'refund_released'
  | 'withdrawal_held'
  | 'withdrawal_released'
  | 'withdrawal_paid';

export interface Entry {
  kind: EntryKind;
  lines: Line[];
}

/** The amounts of one sale, fixed by payments when the charge is made. */
export interface SaleAmounts {
  gross: number;
  fee: number;
  net: number;
}

export class UnbalancedEntryError extends Error {
  constructor(readonly entry: Entry) {
    super(`ledger entry ${entry.kind} does not balance: ${JSON.stringify(entry.lines)}`);
    this.name = 'UnbalancedEntryError';
  }
}

export function isBalanced(entry: Entry): boolean {
  return entry.lines.reduce((sum, line) => sum + line.amount, 0) === 0;
}

/** Builds an entry, dropping zero lines; one that does not balance is a bug and never leaves here. */
function entry(kind: EntryKind, lines: Line[]): Entry {
  for (const line of lines) {
    if (!Number.isSafeInteger(line.amount))
      throw new Error(`ledger amount must be integer cents: ${line.amount}`);
  }
  const built = { kind, lines: lines.filter((line) => line.amount !== 0) };
  if (!isBalanced(built)) throw new UnbalancedEntryError(built);
  return built;
}

// --- Sales (fed by payments' events) ---------------------------------------------------------------

/** A payment approved: the gross arrives at the PSP, the fee is the platform's, the net the seller's. */
export const paymentCredited = (a: SaleAmounts): Entry =>
  entry('payment_credited', [
    { account: ACCOUNTS.PSP_SETTLEMENT, amount: -a.gross },
    { account: ACCOUNTS.PLATFORM_FEES, amount: a.fee },
    { account: ACCOUNTS.SELLER_AVAILABLE, amount: a.net },
  ]);

/**
 * Where a sale's net sits before it moves: the available balance, the MED hold or the refund hold
 * (order-funds.ts, the positions AVAILABLE, HELD and REFUND_HELD).
 */
export type NetSource = 'available' | 'held' | 'refund';

const SOURCE_ACCOUNT: Record<NetSource, Account> = {
  available: ACCOUNTS.SELLER_AVAILABLE,
  held: ACCOUNTS.SELLER_HELD_MED,
  refund: ACCOUNTS.SELLER_HELD_REFUND,
};

/**
 * A MED opened: the sale's net leaves the available balance (or the refund hold, when a refund was
 * being made) while the dispute lasts.
 */
export const medHeld = (a: SaleAmounts, from: 'available' | 'refund' = 'available'): Entry =>
  entry('med_held', [
    { account: SOURCE_ACCOUNT[from], amount: -a.net },
    { account: ACCOUNTS.SELLER_HELD_MED, amount: a.net },
  ]);

/** A MED rejected: the held net is the seller's again. */
export const medReleased = (a: SaleAmounts): Entry =>
  entry('med_released', [
    { account: ACCOUNTS.SELLER_HELD_MED, amount: -a.net },
    { account: ACCOUNTS.SELLER_AVAILABLE, amount: a.net },
  ]);

/**
 * A refund, a chargeback or a MED decided for the payer: the gross goes back to the payer, the seller
 * loses the net (from the available balance, the MED hold or the refund hold) and the platform its fee.
 * What the available balance cannot cover becomes the seller's debt when posted (settleAvailable); a
 * seller's refund takes it from its refund hold, so it never does.
 */
export const paymentReversed = (a: SaleAmounts, from: NetSource): Entry =>
  entry('payment_reversed', [
    { account: SOURCE_ACCOUNT[from], amount: -a.net },
    { account: ACCOUNTS.PLATFORM_FEES, amount: -a.fee },
    { account: ACCOUNTS.PSP_SETTLEMENT, amount: a.gross },
  ]);

/** A seller's refund about to be asked of the PSP: the sale's net leaves the available balance. */
export const refundHeld = (a: SaleAmounts): Entry =>
  entry('refund_held', [
    { account: ACCOUNTS.SELLER_AVAILABLE, amount: -a.net },
    { account: ACCOUNTS.SELLER_HELD_REFUND, amount: a.net },
  ]);

/** A refund that was not made: the held net is available again. */
export const refundReleased = (a: SaleAmounts): Entry =>
  entry('refund_released', [
    { account: ACCOUNTS.SELLER_HELD_REFUND, amount: -a.net },
    { account: ACCOUNTS.SELLER_AVAILABLE, amount: a.net },
  ]);

// --- Withdrawals --------------------------------------------------------------------------------------

/** Requested: the amount moves out of the available balance into the pending one. */
export const withdrawalHeld = (amount: number): Entry =>
  entry('withdrawal_held', [
    { account: ACCOUNTS.SELLER_AVAILABLE, amount: -amount },
    { account: ACCOUNTS.SELLER_WITHDRAWALS_PENDING, amount },
  ]);

/** Denied or failed: the hold goes back to the available balance. */
export const withdrawalReleased = (amount: number): Entry =>
  entry('withdrawal_released', [
    { account: ACCOUNTS.SELLER_WITHDRAWALS_PENDING, amount: -amount },
    { account: ACCOUNTS.SELLER_AVAILABLE, amount },
  ]);

/** Paid: the hold leaves the platform for the seller's PIX key. */
export const withdrawalPaid = (amount: number): Entry =>
  entry('withdrawal_paid', [
    { account: ACCOUNTS.SELLER_WITHDRAWALS_PENDING, amount: -amount },
    { account: ACCOUNTS.SELLER_PAID_OUT, amount },
  ]);

// --- The available balance never goes below zero -------------------------------------------------------

/** The seller's own money right now: what may be withdrawn (>= 0) and what the seller owes (<= 0). */
export interface SellerPosition {
  available: number;
  debt: number;
}

/** What an entry does to the available balance (the sum of its `seller_available` lines). */
export function availableChange(e: Entry): number {
  return e.lines
    .filter((line) => line.account === ACCOUNTS.SELLER_AVAILABLE)
    .reduce((sum, line) => sum + line.amount, 0);
}

/**
 * Rewrites an entry's `seller_available` line against the seller's position so the available balance
 * never goes below zero: a debit it cannot cover is taken to `seller_debt`, and a credit repays the debt
 * before the rest becomes available. The other lines, the total and so the balance of the entry are
 * unchanged. Posted under the seller's lock, with the position read in the same transaction.
 */
export function settleAvailable(
  e: Entry,
  position: SellerPosition,
): { entry: Entry; position: SellerPosition } {
  const change = availableChange(e);
  const net = position.available + position.debt + change;
  const next = { available: Math.max(0, net), debt: Math.min(0, net) };
  // The common case, no debt before or after: the entry as decided.
  if (next.debt === position.debt && next.available - position.available === change) {
    return { entry: e, position: next };
  }
  const lines = [
    ...e.lines.filter((line) => line.account !== ACCOUNTS.SELLER_AVAILABLE),
    { account: ACCOUNTS.SELLER_AVAILABLE, amount: next.available - position.available },
    { account: ACCOUNTS.SELLER_DEBT, amount: next.debt - position.debt },
  ];
  return { entry: entry(e.kind, lines), position: next };
}

// --- Balances -----------------------------------------------------------------------------------------

export type AccountTotals = Record<Account, number>;

export function emptyTotals(): AccountTotals {
  return Object.fromEntries(ACCOUNT_NAMES.map((account) => [account, 0])) as AccountTotals;
}

/** Sums lines per account: the arithmetic of the balance rows behind `GET /finance/balance/`. */
export function totalsOf(lines: Iterable<Line>): AccountTotals {
  const totals = emptyTotals();
  for (const line of lines) totals[line.account] += line.amount;
  return totals;
}

export interface SellerBalance {
  available_amount: number;
  pending_amount: number;
  currency: 'BRL';
}

/** The public balance: available to withdraw, and held by withdrawals in flight. */
export function sellerBalance(totals: AccountTotals): SellerBalance {
  return {
    available_amount: totals[ACCOUNTS.SELLER_AVAILABLE],
    pending_amount: totals[ACCOUNTS.SELLER_WITHDRAWALS_PENDING],
    currency: 'BRL',
  };
}

/**
 * Whether a seller's refund of a sale of net `net` may hold its money now: only when the available
 * balance covers it (docs/finance.md, "Refunds"). Called with the balance read under the seller's lock, so a
 * refund and a withdrawal (or two refunds) cannot both spend the same money.
 */
export function checkRefund(
  available: number,
  a: SaleAmounts,
): { ok: true; entry: Entry } | { ok: false; message: string } {
  if (a.net > available) {
    return {
      ok: false,
      message: `The available balance (${Math.max(0, available)} cents) does not cover this order's net amount (${a.net} cents); a refund needs it.`,
    };
  }
  return { ok: true, entry: refundHeld(a) };
}

export type WithdrawalRefusal = { ok: false; reason: 'below_minimum' | 'above_available'; message: string };

/**
 * Whether a withdrawal of `amount` may be held now. Called with the balance read under the seller's
 * lock, so two requests cannot both spend the same money.
 */
export function checkWithdrawal(
  available: number,
  amount: number,
  minimum: number,
): { ok: true; entry: Entry } | WithdrawalRefusal {
  if (amount < minimum) {
    return { ok: false, reason: 'below_minimum', message: message('withdrawalMinimum', { minimum }) };
  }
  if (amount > available) {
    return {
      ok: false,
      reason: 'above_available',
      message: `The available balance (${Math.max(0, available)} cents) does not cover this withdrawal (${amount} cents).`,
    };
  }
  return { ok: true, entry: withdrawalHeld(amount) };
}
