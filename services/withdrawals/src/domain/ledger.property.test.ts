import fc from 'fast-check';
import type { WithdrawalStatus } from '@seller-api/contracts';
import {
  ACCOUNTS,
  availableChange,
  checkWithdrawal,
  emptyTotals,
  isBalanced,
  settleAvailable,
  totalsOf,
  type AccountTotals,
  type Entry,
  type SaleAmounts,
} from './ledger';
import {
  applyOrderMessage,
  NEW_ORDER_FUNDS,
  type ChargeStatus,
  type OrderFunds,
  type OrderMessage,
} from './order-funds';
import { moveWithdrawal, type WithdrawalAction } from './withdrawal-state';

/**
 * Property: whatever happens to a seller's sales and withdrawals, and in whatever order payments'
 * messages arrive, the journal built by the domain functions balances entry by entry, and the
 * balances it gives equal those of a plain model that knows nothing about entries:
 *
 *   own       = net of sales PAID − withdrawals requested and not denied or failed
 *   available = max(0, own);  debt = min(0, own)  (a reversal of money already withdrawn is owed)
 *   pending   = withdrawals PENDING, APPROVED or PROCESSING
 *   held MED  = net of sales in MED;  paid out = withdrawals PAID
 *
 * and the available balance is never negative, after any step.
 */

const MIN = 100;

// --- the model: payments' charge machine and the withdrawal machine, written out independently -------

const CHARGE_MOVES: Record<string, { from: ChargeStatus; to: ChargeStatus }> = {
  pay: { from: 'PENDING', to: 'PAID' },
  expire: { from: 'PENDING', to: 'EXPIRED' },
  cancel: { from: 'PENDING', to: 'CANCELLED' },
  refund: { from: 'PAID', to: 'REFUNDED' },
  open_med: { from: 'PAID', to: 'MED' },
  med_refunded: { from: 'MED', to: 'REFUNDED' },
  med_rejected: { from: 'MED', to: 'PAID' },
  chargeback: { from: 'PAID', to: 'CHARGEBACK' },
};
type ChargeAction = keyof typeof CHARGE_MOVES;

const WITHDRAWAL_MOVES: Record<WithdrawalAction, { from: WithdrawalStatus; to: WithdrawalStatus }> = {
  approve: { from: 'PENDING', to: 'APPROVED' },
  deny: { from: 'PENDING', to: 'DENIED' },
  cancel: { from: 'APPROVED', to: 'CANCELED' },
  start_payout: { from: 'APPROVED', to: 'PROCESSING' },
  payout_paid: { from: 'PROCESSING', to: 'PAID' },
  payout_failed: { from: 'PROCESSING', to: 'FAILED' },
};

interface ModelOrder {
  id: string;
  amounts: SaleAmounts;
  status: ChargeStatus;
  version: number;
  /** Every internal message sent so far, to replay a stale one. */
  sent: Array<Extract<OrderMessage, { kind: 'charge' }>>;
}

class Model {
  orders: ModelOrder[] = [];
  withdrawals: Array<{ status: WithdrawalStatus; amount: number }> = [];

  /** What the seller's own money comes to: positive is available, negative is owed. */
  get own(): number {
    const sales = this.orders.filter((o) => o.status === 'PAID').reduce((s, o) => s + o.amounts.net, 0);
    const out = this.withdrawals
      .filter((w) => w.status !== 'DENIED' && w.status !== 'FAILED' && w.status !== 'CANCELED')
      .reduce((s, w) => s + w.amount, 0);
    return sales - out;
  }
  get available(): number {
    return Math.max(0, this.own);
  }
  get debt(): number {
    return Math.min(0, this.own);
  }
  get pending(): number {
    return this.withdrawals
      .filter((w) => ['PENDING', 'APPROVED', 'PROCESSING'].includes(w.status))
      .reduce((s, w) => s + w.amount, 0);
  }
  get held(): number {
    return this.orders.filter((o) => o.status === 'MED').reduce((s, o) => s + o.amounts.net, 0);
  }
  get paidOut(): number {
    return this.withdrawals.filter((w) => w.status === 'PAID').reduce((s, w) => s + w.amount, 0);
  }
}

// --- the system under test: the pure domain functions with an in-memory journal ----------------------

class Journal {
  entries: Entry[] = [];
  funds = new Map<string, OrderFunds>();
  /** Running sums, checked against a full recount of the lines at the end of every run. */
  totals: AccountTotals = emptyTotals();
  private credited = new Set<string>();

  deliver(orderId: string, message: OrderMessage): void {
    const { funds, entries } = applyOrderMessage(this.funds.get(orderId) ?? NEW_ORDER_FUNDS, message);
    this.funds.set(orderId, funds);
    for (const entry of entries) {
      if (entry.kind === 'payment_credited') {
        // Each order is credited at most once, whatever was delivered twice or out of order.
        check(!this.credited.has(orderId), `${orderId} credited twice`);
        this.credited.add(orderId);
      }
      this.post(entry);
    }
  }
  /** As journal.postEntries does: settled against the position, under the seller's lock there. */
  post(decided: Entry): void {
    const { entry } = settleAvailable(decided, {
      available: this.totals[ACCOUNTS.SELLER_AVAILABLE],
      debt: this.totals[ACCOUNTS.SELLER_DEBT],
    });
    // Every entry balances, checked as it is posted.
    check(isBalanced(entry), `unbalanced ${entry.kind}`);
    this.entries.push(entry);
    for (const line of entry.lines) this.totals[line.account] += line.amount;
  }
  recount(): AccountTotals {
    return totalsOf(this.entries.flatMap((e) => e.lines));
  }
}

// --- operations ---------------------------------------------------------------------------------------

const saleAmounts = fc
  .integer({ min: 1, max: 5_000_000 })
  .chain((gross) =>
    fc.integer({ min: 0, max: gross }).map((fee) => ({ gross, fee, net: gross - fee }) as SaleAmounts),
  );

type Op =
  | { op: 'sale'; amounts: SaleAmounts; announce: boolean }
  | { op: 'charge'; order: number; action: ChargeAction; publicFirst: boolean; staleReplay: boolean }
  /** `edge`: the amount is the available balance plus `offset`, to hit the boundary exactly. */
  | { op: 'withdraw'; amount: number; edge: boolean; offset: number }
  | { op: 'withdrawal'; index: number; action: WithdrawalAction };

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.record({ op: fc.constant('sale' as const), amounts: saleAmounts, announce: fc.boolean() }),
  fc.record({
    op: fc.constant('charge' as const),
    order: fc.nat(),
    action: fc.constantFrom(...(Object.keys(CHARGE_MOVES) as ChargeAction[])),
    publicFirst: fc.boolean(),
    staleReplay: fc.boolean(),
  }),
  fc.record({
    op: fc.constant('withdraw' as const),
    amount: fc.oneof(fc.integer({ min: 1, max: 3_000_000 }), fc.integer({ min: 1, max: 2 * MIN })),
    edge: fc.boolean(),
    offset: fc.integer({ min: -2, max: 2 }),
  }),
  fc.record({
    op: fc.constant('withdrawal' as const),
    index: fc.nat(),
    action: fc.constantFrom(...(Object.keys(WITHDRAWAL_MOVES) as WithdrawalAction[])),
  }),
);

/** The public event that goes with a charge move, if any (services/payments/src/domain/lifecycle.ts). */
function publicEvent(to: ChargeStatus, from: ChargeStatus, amounts: SaleAmounts): OrderMessage | null {
  if (to === 'PAID' && from === 'PENDING') return { kind: 'payment', status: 'PAID', amounts };
  if (to === 'REFUNDED') return { kind: 'payment', status: 'REFUNDED', amounts };
  return null;
}

/** Applies one operation to model and journal; returns the messages it sent, for later delivery. */
function step(model: Model, journal: Journal, op: Op, deliver: boolean): Array<[string, OrderMessage]> {
  const sent: Array<[string, OrderMessage]> = [];
  const send = (orderId: string, message: OrderMessage) => {
    if (deliver) journal.deliver(orderId, message);
    else sent.push([orderId, message]);
  };
  switch (op.op) {
    case 'sale': {
      const order: ModelOrder = {
        id: `order-${model.orders.length}`,
        amounts: op.amounts,
        status: 'PENDING',
        version: 0,
        sent: [],
      };
      model.orders.push(order);
      if (op.announce) send(order.id, { kind: 'payment', status: 'PENDING', amounts: op.amounts });
      break;
    }
    case 'charge': {
      if (model.orders.length === 0) break;
      const order = model.orders[op.order % model.orders.length] as ModelOrder;
      const rule = CHARGE_MOVES[op.action];
      if (!rule || order.status !== rule.from) break; // payments answers 409: nothing is sent
      const from = order.status;
      order.status = rule.to;
      order.version += 1;
      const internal = { kind: 'charge' as const, status: rule.to, version: order.version };
      const pub = publicEvent(rule.to, from, order.amounts);
      const messages = pub ? (op.publicFirst ? [pub, internal] : [internal, pub]) : [internal];
      // A late retry of an older message, under a new message id (the kit's dedup cannot catch it).
      const stale = op.staleReplay ? order.sent[order.sent.length - 1] : undefined;
      order.sent.push(internal);
      for (const m of messages) send(order.id, m);
      if (stale) send(order.id, stale);
      break;
    }
    case 'withdraw': {
      const available = journal.totals[ACCOUNTS.SELLER_AVAILABLE];
      const amount = op.edge ? Math.max(1, model.available + op.offset) : op.amount;
      const decided = checkWithdrawal(available, amount, MIN);
      const expectedOk = amount >= MIN && amount <= model.available;
      check(decided.ok === expectedOk, `withdrawal of ${amount} accepted: ${decided.ok}`);
      if (decided.ok) {
        // A withdrawal never takes the available balance below zero, as decided (before any settling
        // against debt, which would hide an overdraw).
        const after = available + availableChange(decided.entry);
        check(after >= 0, 'a withdrawal took available below zero');
        journal.post(decided.entry);
        model.withdrawals.push({ status: 'PENDING', amount });
      }
      break;
    }
    case 'withdrawal': {
      if (model.withdrawals.length === 0) break;
      const w = model.withdrawals[op.index % model.withdrawals.length] as (typeof model.withdrawals)[number];
      const move = moveWithdrawal(w.status, op.action, w.amount);
      const rule = WITHDRAWAL_MOVES[op.action];
      check(move.ok === (w.status === rule.from), `${op.action} from ${w.status}`);
      if (move.ok) {
        check(move.to === rule.to, `${op.action} went to ${move.to}`);
        if (move.entry) journal.post(move.entry);
        w.status = move.to;
      } else {
        check(move.message.includes(w.status), 'the refusal names the status');
      }
      break;
    }
  }
  return sent;
}

/** The whole journal sums to zero, and the running balances are what a recount of the lines gives. */
function checkJournal(journal: Journal): void {
  expect(Object.values(journal.totals).reduce((s, v) => s + v, 0)).toBe(0);
  expect(journal.recount()).toEqual(journal.totals);
}

/** A plain check (no `expect`): it runs tens of thousands of times per test, fast-check reports it. */
function check(ok: boolean, what: string): void {
  if (!ok) throw new Error(what);
}

function checkBalances(model: Model, journal: Journal): void {
  const totals = journal.totals;
  const pairs: Array<[string, number, number]> = [
    ['available', totals[ACCOUNTS.SELLER_AVAILABLE], model.available],
    ['debt', totals[ACCOUNTS.SELLER_DEBT], model.debt],
    ['pending', totals[ACCOUNTS.SELLER_WITHDRAWALS_PENDING], model.pending],
    ['held for MED', totals[ACCOUNTS.SELLER_HELD_MED], model.held],
    ['paid out', totals[ACCOUNTS.SELLER_PAID_OUT], model.paidOut],
  ];
  for (const [name, actual, expected] of pairs)
    check(actual === expected, `${name}: ${actual} != ${expected}`);
  check(totals[ACCOUNTS.SELLER_AVAILABLE] >= 0, 'available below zero');
  check(totals[ACCOUNTS.SELLER_DEBT] <= 0, 'debt above zero');
}

describe('ledger properties', () => {
  it('balances every entry and matches the model after each step, whatever the order within a move', () => {
    fc.assert(
      fc.property(fc.array(opArb, { maxLength: 80, size: 'max' }), (ops) => {
        const model = new Model();
        const journal = new Journal();
        for (const op of ops) {
          step(model, journal, op, true);
          checkBalances(model, journal);
        }
        checkJournal(journal);
      }),
      { numRuns: 400 },
    );
  });

  it('converges to the model when payments messages arrive in any order, late or replayed', () => {
    // Withdrawals need a settled balance to be checked against, so this one drives sales only and
    // delivers every message of the run in a random order at the end.
    const salesOnly = opArb.filter((op) => op.op === 'sale' || op.op === 'charge');
    fc.assert(
      fc.property(
        fc.array(salesOnly, { maxLength: 60, size: 'max' }).chain((ops) => {
          const model = new Model();
          const journal = new Journal();
          const messages = ops.flatMap((op) => step(model, journal, op, false));
          return fc.tuple(fc.constant(ops), fc.shuffledSubarray(messages, { minLength: messages.length }));
        }),
        ([ops, shuffled]) => {
          const model = new Model();
          const replay = new Journal();
          for (const op of ops) step(model, replay, op, false);
          const journal = new Journal();
          for (const [orderId, message] of shuffled) journal.deliver(orderId, message);
          checkBalances(model, journal);
          checkJournal(journal);
        },
      ),
      { numRuns: 400 },
    );
  });
});
