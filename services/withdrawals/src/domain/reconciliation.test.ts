import fc from 'fast-check';
import type { PaidChargeStatus } from '@seller-api/contracts';
import { ACCOUNTS, totalsOf, type Entry, type SaleAmounts } from './ledger';
import { applyOrderMessage, NEW_ORDER_FUNDS, type OrderFunds, type OrderMessage } from './order-funds';
import {
  checkCharge,
  checkReplayed,
  isDue,
  paidChargeOf,
  reconciliationChargeOf,
  replayOf,
  runOutcome,
  windowOf,
  type LedgerOrder,
  type PaidCharge,
} from './reconciliation';

const SELLER = '14ec07c8-8dcd-4b5c-9b3e-2f6a4c1e8a52';
const OWNER = { sellerId: SELLER, environment: 'test' as const };
const AMOUNTS: SaleAmounts = { gross: 15000, fee: 599, net: 14401 };

const charge = (status: PaidChargeStatus, version: number, amounts = AMOUNTS): PaidCharge => ({
  orderId: '7d5c7069-3b1e-4c1a-9d0e-2f6a4c1e8a52',
  owner: OWNER,
  amounts,
  status,
  version,
  changedAt: new Date('2026-12-01T12:00:00.000Z'),
});

/** The ledger's record after these messages, as the consumer would have left it. */
function ledgerAfter(...messages: OrderMessage[]): LedgerOrder {
  let funds: OrderFunds = NEW_ORDER_FUNDS;
  for (const m of messages) funds = applyOrderMessage(funds, m).funds;
  return { owner: OWNER, funds };
}

const approved: OrderMessage = { kind: 'payment', status: 'PAID', amounts: AMOUNTS };
const refunded: OrderMessage = { kind: 'payment', status: 'REFUNDED', amounts: AMOUNTS };
const internal = (status: OrderMessage['status'], version: number): OrderMessage =>
  ({ kind: 'charge', status, version }) as OrderMessage;

describe('checkCharge: a ledger that never saw the order', () => {
  it.each([
    ['PAID', ['payment_credited'], 'AVAILABLE'],
    ['MED', ['payment_credited', 'med_held'], 'HELD'],
    ['REFUNDED', ['payment_credited', 'payment_reversed'], 'REVERSED'],
    ['CHARGEBACK', ['payment_credited', 'payment_reversed'], 'REVERSED'],
  ] as const)('is behind for %s: the replay posts %j and reaches %s', (status, entries, reaches) => {
    expect(checkCharge(charge(status, 3), null)).toEqual({
      verdict: 'behind',
      reason: 'missing',
      entries,
      reaches,
    });
  });
});

describe('checkCharge: a ledger that saw part of it', () => {
  it('is in step once both approval signals were applied', () => {
    expect(checkCharge(charge('PAID', 1), ledgerAfter(approved, internal('PAID', 1)))).toEqual({
      verdict: 'in_step',
    });
  });

  it('lacks the amounts when only the internal message arrived', () => {
    expect(checkCharge(charge('PAID', 1), ledgerAfter(internal('PAID', 1)))).toEqual({
      verdict: 'behind',
      reason: 'no_amounts',
      entries: ['payment_credited'],
      reaches: 'AVAILABLE',
    });
  });

  it('is short of a refund, a MED or its release that never arrived', () => {
    const paid = ledgerAfter(approved, internal('PAID', 1));
    expect(checkCharge(charge('REFUNDED', 2), paid)).toMatchObject({
      reason: 'short',
      entries: ['payment_reversed'],
      reaches: 'REVERSED',
    });
    expect(checkCharge(charge('MED', 2), paid)).toMatchObject({ reason: 'short', entries: ['med_held'] });
    const held = ledgerAfter(approved, internal('PAID', 1), internal('MED', 2));
    expect(checkCharge(charge('PAID', 3), held)).toMatchObject({
      reason: 'short',
      entries: ['med_released'],
    });
  });

  it('takes the version it missed even when the money is where it should be', () => {
    // Only payment.approved arrived: credited, but without the version that rules out a stale replay.
    expect(checkCharge(charge('PAID', 1), ledgerAfter(approved))).toEqual({
      verdict: 'behind',
      reason: 'older_version',
      entries: [],
      reaches: 'AVAILABLE',
    });
    // A MED opened and rejected while the ledger heard nothing: same money, older knowledge.
    expect(checkCharge(charge('PAID', 3), ledgerAfter(approved, internal('PAID', 1)))).toMatchObject({
      reason: 'older_version',
      entries: [],
    });
  });

  it('is in step for a refund whose internal message was lost: a terminal status is final', () => {
    expect(checkCharge(charge('REFUNDED', 2), ledgerAfter(approved, internal('PAID', 1), refunded))).toEqual({
      verdict: 'in_step',
    });
  });
});

describe('checkCharge: a refund in flight (REFUND_HELD)', () => {
  const holding: LedgerOrder = {
    owner: OWNER,
    funds: { amounts: AMOUNTS, status: 'PAID', version: 1, position: 'REFUND_HELD' },
  };
  it('is in step while payments says PAID: the net sits in the refund hold', () => {
    expect(checkCharge(charge('PAID', 1), holding)).toEqual({ verdict: 'in_step' });
  });
  it('is short of the refund made: the replay reverses from the hold', () => {
    expect(checkCharge(charge('REFUNDED', 2), holding)).toEqual({
      verdict: 'behind',
      reason: 'short',
      entries: ['payment_reversed'],
      reaches: 'REVERSED',
    });
  });
});

describe('checkCharge: a due-date charge paid with other amounts than it was made with', () => {
  // docs/pix.md "Due-date charges": payments' transaction holds the amounts of the payment (here a
  // fine and interest), the QR code event those of the charge as made.
  const PAID_AMOUNTS: SaleAmounts = { gross: 15345, fee: 612, net: 14733 };
  const created: OrderMessage = { kind: 'payment', status: 'PENDING', amounts: AMOUNTS };

  it('heals a ledger that only saw the QR code event: the replay credits the net of the payment', () => {
    const ledger = ledgerAfter(created);
    const paid = charge('PAID', 1, PAID_AMOUNTS);
    expect(checkCharge(paid, ledger)).toEqual({
      verdict: 'behind',
      reason: 'short',
      entries: ['payment_credited'],
      reaches: 'AVAILABLE',
    });
    let funds = ledger.funds;
    const posted: Entry[] = [];
    for (const m of replayOf(paid)) {
      const applied = applyOrderMessage(funds, m);
      funds = applied.funds;
      posted.push(...applied.entries);
    }
    expect(totalsOf(posted.flatMap((e) => e.lines))[ACCOUNTS.SELLER_AVAILABLE]).toBe(14733);
    expect(checkReplayed(paid, { owner: OWNER, funds })).toEqual({ verdict: 'in_step' });
  });

  it('is in step with a ledger that took payment.approved after the QR code event', () => {
    const ledger = ledgerAfter(
      created,
      { kind: 'payment', status: 'PAID', amounts: PAID_AMOUNTS },
      internal('PAID', 1),
    );
    expect(checkCharge(charge('PAID', 1, PAID_AMOUNTS), ledger)).toEqual({ verdict: 'in_step' });
  });
});

describe('checkCharge: what a replay cannot heal', () => {
  it('the order under another seller or environment', () => {
    const other = { owner: { ...OWNER, environment: 'live' as const }, funds: ledgerAfter(approved).funds };
    expect(checkCharge(charge('PAID', 1), other)).toMatchObject({ verdict: 'mismatch', kind: 'other_owner' });
  });

  it('amounts that differ from those money was posted with', () => {
    const ledger = ledgerAfter(
      { kind: 'payment', status: 'PAID', amounts: { gross: 15000, fee: 600, net: 14400 } },
      internal('PAID', 1),
    );
    expect(checkCharge(charge('PAID', 1), ledger)).toEqual({
      verdict: 'mismatch',
      kind: 'amounts_differ',
      detail: 'the ledger has gross 15000, fee 600, net 14400; payments gross 15000, fee 599, net 14401',
    });
  });

  it('a ledger that knows a newer change than payments reports', () => {
    const held = ledgerAfter(approved, internal('PAID', 1), internal('MED', 2));
    expect(checkCharge(charge('PAID', 1), held)).toEqual({
      verdict: 'mismatch',
      kind: 'ledger_ahead',
      detail: 'the ledger holds MED v2 (money HELD); payments says PAID v1 (money AVAILABLE)',
    });
  });

  it('money reversed in the ledger for a charge payments says is paid', () => {
    const reversed = ledgerAfter(approved, refunded);
    expect(checkCharge(charge('PAID', 1), reversed)).toMatchObject({
      verdict: 'mismatch',
      kind: 'contradicts',
      detail: 'the ledger holds REFUNDED (money REVERSED); payments says PAID v1 (money AVAILABLE)',
    });
  });
});

describe('checkReplayed', () => {
  it('is in step after the replay, and reports a replay that did not stick', () => {
    const c = charge('MED', 2);
    expect(checkReplayed(c, ledgerAfter(...replayOf(c)))).toEqual({ verdict: 'in_step' });
    expect(checkReplayed(c, null)).toEqual({
      verdict: 'mismatch',
      kind: 'not_moved',
      detail: 'replayed MED v2 (money HELD); the ledger still holds no status (money NONE)',
    });
  });
});

describe('replay of any lost messages (property)', () => {
  // payments' charge machine after the payment, and what each move publishes (services/payments/src/
  // domain/lifecycle.ts): the public event where there is one, and always the internal state.
  const MOVES = {
    refund: { from: 'PAID', to: 'REFUNDED', event: refunded },
    open_med: { from: 'PAID', to: 'MED', event: null },
    med_refunded: { from: 'MED', to: 'REFUNDED', event: refunded },
    med_rejected: { from: 'MED', to: 'PAID', event: null },
    chargeback: { from: 'PAID', to: 'CHARGEBACK', event: null },
  } as const;

  function history(actions: Array<keyof typeof MOVES>) {
    const sent: OrderMessage[] = [
      { kind: 'payment', status: 'PENDING', amounts: AMOUNTS },
      approved,
      internal('PAID', 1),
    ];
    let status: PaidChargeStatus = 'PAID';
    let version = 1;
    for (const action of actions) {
      const move = MOVES[action];
      if (move.from !== status) continue;
      status = move.to;
      version += 1;
      if (move.event) sent.push(move.event);
      sent.push(internal(status, version));
    }
    return { sent, final: charge(status, version) };
  }

  it('the ledger is never reported wrong for a message it missed, and one replay puts its money right once', () => {
    const actions = fc.array(fc.constantFrom(...(Object.keys(MOVES) as Array<keyof typeof MOVES>)), {
      maxLength: 6,
    });
    // A history, and the messages of it that arrived: some lost, the rest in any order.
    const cases = actions.chain((a) => {
      const { sent, final } = history(a);
      return fc.record({ final: fc.constant(final), arrived: fc.shuffledSubarray(sent) });
    });
    fc.assert(
      fc.property(cases, ({ final, arrived }) => {
        const posted: Entry[] = [];
        let funds: OrderFunds = NEW_ORDER_FUNDS;
        const deliver = (m: OrderMessage) => {
          const applied = applyOrderMessage(funds, m);
          funds = applied.funds;
          posted.push(...applied.entries);
          return applied.entries;
        };
        arrived.forEach(deliver);
        const check = checkCharge(final, arrived.length > 0 ? { owner: OWNER, funds } : null);
        expect(check.verdict).not.toBe('mismatch');
        replayOf(final).forEach(deliver);
        expect(checkReplayed(final, { owner: OWNER, funds })).toEqual({ verdict: 'in_step' });
        // A second replay posts nothing.
        for (const m of replayOf(final)) expect(deliver(m)).toEqual([]);
        // Credited once, and the money where payments' status puts it.
        expect(posted.filter((e) => e.kind === 'payment_credited')).toHaveLength(1);
        const totals = totalsOf(posted.flatMap((e) => e.lines));
        expect(totals[ACCOUNTS.SELLER_AVAILABLE]).toBe(final.status === 'PAID' ? AMOUNTS.net : 0);
        expect(totals[ACCOUNTS.SELLER_HELD_MED]).toBe(final.status === 'MED' ? AMOUNTS.net : 0);
      }),
      { numRuns: 500 },
    );
  });
});

describe('the contract form', () => {
  it('round-trips payments view, for a finding to be checked again', () => {
    const c = charge('CHARGEBACK', 2);
    expect(paidChargeOf(reconciliationChargeOf(c))).toEqual(c);
  });
});

describe('windowOf', () => {
  const now = new Date('2026-12-01T12:00:00.000Z');
  const at = (iso: string) => new Date(iso);

  it('runs from the checkpoint to the grace period ago, and may advance it', () => {
    expect(windowOf(at('2026-12-01T11:00:00Z'), undefined, now, 60_000)).toEqual({
      from: at('2026-12-01T11:00:00Z'),
      to: at('2026-12-01T11:59:00Z'),
      advances: true,
    });
  });

  it('starts at the beginning before the first run', () => {
    expect(windowOf(null, undefined, now, 0)).toEqual({ from: null, to: now, advances: true });
  });

  it("advances the checkpoint from an operator's window only when it covers the checkpoint", () => {
    expect(windowOf(at('2026-12-01T11:00:00Z'), at('2026-11-01T00:00:00Z'), now, 0)?.advances).toBe(true);
    expect(windowOf(at('2026-12-01T11:00:00Z'), at('2026-12-01T11:30:00Z'), now, 0)?.advances).toBe(false);
    expect(windowOf(null, at('2026-11-01T00:00:00Z'), now, 0)?.advances).toBe(false);
  });

  it('is empty when its start is within the grace period', () => {
    expect(windowOf(at('2026-12-01T11:59:30Z'), undefined, now, 60_000)).toBeNull();
    expect(windowOf(null, now, now, 0)).toBeNull();
  });
});

describe('isDue and runOutcome', () => {
  const now = new Date('2026-12-01T12:00:00.000Z');

  it('is due without a run, or half an interval after the last one finished', () => {
    expect(isDue(null, now, 300_000)).toBe(true);
    expect(isDue(new Date(now.getTime() - 149_999), now, 300_000)).toBe(false);
    expect(isDue(new Date(now.getTime() - 150_000), now, 300_000)).toBe(true);
  });

  it('puts what is unhealed first', () => {
    expect(runOutcome({ healed: 0, mismatches: 0 })).toBe('clean');
    expect(runOutcome({ healed: 2, mismatches: 0 })).toBe('healed');
    expect(runOutcome({ healed: 2, mismatches: 1 })).toBe('mismatches');
  });
});
