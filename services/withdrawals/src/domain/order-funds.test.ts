import { ACCOUNTS, totalsOf, type Entry, type SaleAmounts } from './ledger';
import { applyOrderMessage, NEW_ORDER_FUNDS, type OrderFunds, type OrderMessage } from './order-funds';

const AMOUNTS: SaleAmounts = { gross: 15000, fee: 599, net: 14401 };
const approved: OrderMessage = { kind: 'payment', status: 'PAID', amounts: AMOUNTS };
const refunded: OrderMessage = { kind: 'payment', status: 'REFUNDED', amounts: AMOUNTS };
const created: OrderMessage = { kind: 'payment', status: 'PENDING', amounts: AMOUNTS };
const charge = (status: OrderMessage['status'], version: number): OrderMessage =>
  ({ kind: 'charge', status, version }) as OrderMessage;

/** Delivers messages in order; returns the final record and every entry posted. */
function run(messages: OrderMessage[]): { funds: OrderFunds; entries: Entry[] } {
  let funds = NEW_ORDER_FUNDS;
  const entries: Entry[] = [];
  for (const message of messages) {
    const result = applyOrderMessage(funds, message);
    funds = result.funds;
    entries.push(...result.entries);
  }
  return { funds, entries };
}

const kinds = (entries: Entry[]) => entries.map((e) => e.kind);
const available = (entries: Entry[]) => totalsOf(entries.flatMap((e) => e.lines))[ACCOUNTS.SELLER_AVAILABLE];
const held = (entries: Entry[]) => totalsOf(entries.flatMap((e) => e.lines))[ACCOUNTS.SELLER_HELD_MED];

describe('order funds', () => {
  it('credits the net once, whichever approval signal comes first', () => {
    for (const messages of [
      [approved, charge('PAID', 1)],
      [charge('PAID', 1), approved],
      [created, charge('PAID', 1), approved],
    ]) {
      const { funds, entries } = run(messages);
      expect(kinds(entries)).toEqual(['payment_credited']);
      expect(available(entries)).toBe(14401);
      expect(funds.position).toBe('AVAILABLE');
    }
  });

  it('posts the gross to the PSP account and the fee to the platform', () => {
    const { entries } = run([approved]);
    const totals = totalsOf(entries.flatMap((e) => e.lines));
    expect(totals[ACCOUNTS.PSP_SETTLEMENT]).toBe(-15000);
    expect(totals[ACCOUNTS.PLATFORM_FEES]).toBe(599);
  });

  it('waits for the amounts when the internal message comes first, then posts', () => {
    const first = run([charge('PAID', 1)]);
    expect(first.entries).toEqual([]);
    expect(first.funds).toMatchObject({ status: 'PAID', version: 1, position: 'NONE', amounts: null });
    // The QR event of the same charge brings the amounts: that is enough to credit.
    const { entries } = run([charge('PAID', 1), created]);
    expect(kinds(entries)).toEqual(['payment_credited']);
  });

  it('holds the net while a MED is open and releases it when the MED is rejected', () => {
    const opened = run([approved, charge('PAID', 1), charge('MED', 2)]);
    expect(available(opened.entries)).toBe(0);
    expect(held(opened.entries)).toBe(14401);
    const rejected = run([approved, charge('PAID', 1), charge('MED', 2), charge('PAID', 3)]);
    expect(kinds(rejected.entries)).toEqual(['payment_credited', 'med_held', 'med_released']);
    expect(available(rejected.entries)).toBe(14401);
    expect(held(rejected.entries)).toBe(0);
  });

  it('debits a refund, a chargeback and a MED decided for the payer', () => {
    const refund = run([approved, charge('PAID', 1), charge('REFUNDED', 2), refunded]);
    expect(kinds(refund.entries)).toEqual(['payment_credited', 'payment_reversed']);
    expect(available(refund.entries)).toBe(0);
    const chargeback = run([approved, charge('CHARGEBACK', 2)]);
    expect(available(chargeback.entries)).toBe(0);
    const med = run([approved, charge('MED', 2), charge('REFUNDED', 3), refunded]);
    expect(kinds(med.entries)).toEqual(['payment_credited', 'med_held', 'payment_reversed']);
    expect(available(med.entries)).toBe(0);
    expect(held(med.entries)).toBe(0);
    const totals = totalsOf(med.entries.flatMap((e) => e.lines));
    // Everything went back: the PSP paid the gross back and the platform returned its fee.
    expect(Object.values(totals).every((v) => v === 0)).toBe(true);
  });

  it('ignores a late, older message', () => {
    const { funds, entries } = run([approved, charge('MED', 2), charge('PAID', 1), approved]);
    expect(funds).toMatchObject({ status: 'MED', version: 2, position: 'HELD' });
    expect(kinds(entries)).toEqual(['payment_credited', 'med_held']);
  });

  it('never moves out of a reversal, even for a newer-looking message', () => {
    const { funds, entries } = run([refunded, charge('PAID', 1), charge('MED', 2), approved]);
    expect(funds.position).toBe('REVERSED');
    expect(kinds(entries)).toEqual(['payment_credited', 'payment_reversed']);
  });

  describe('a due-date charge paid with other amounts than it was made with (docs/pix.md)', () => {
    // The QR code event has the charge as made; payment.approved and internal.charge.paid the payment,
    // here with a fine and interest.
    const PAID_AMOUNTS: SaleAmounts = { gross: 15345, fee: 612, net: 14733 };
    const paidApproved: OrderMessage = { kind: 'payment', status: 'PAID', amounts: PAID_AMOUNTS };
    const paidCharge = (version: number): OrderMessage => ({
      kind: 'charge',
      status: 'PAID',
      version,
      amounts: PAID_AMOUNTS,
    });
    const totals = (entries: Entry[]) => totalsOf(entries.flatMap((e) => e.lines));

    it.each([
      ['created, approved, charge', [created, paidApproved, paidCharge(1)]],
      ['created, charge, approved', [created, paidCharge(1), paidApproved]],
      ['approved, created, charge', [paidApproved, created, paidCharge(1)]],
      ['charge, created, approved', [paidCharge(1), created, paidApproved]],
      ['charge, approved, created', [paidCharge(1), paidApproved, created]],
      ['created twice around the approval', [created, paidApproved, created, paidCharge(1), created]],
      ['created, approved, with a charge of an earlier release', [created, paidApproved, charge('PAID', 1)]],
    ])('credits the net of the payment once: %s', (_name, messages) => {
      const { funds, entries } = run(messages);
      expect(kinds(entries)).toEqual(['payment_credited']);
      expect(totals(entries)[ACCOUNTS.SELLER_AVAILABLE]).toBe(14733);
      expect(totals(entries)[ACCOUNTS.PLATFORM_FEES]).toBe(612);
      expect(totals(entries)[ACCOUNTS.PSP_SETTLEMENT]).toBe(-15345);
      expect(funds).toMatchObject({ amounts: PAID_AMOUNTS, position: 'AVAILABLE' });
    });

    it('reverses the net it credited on a refund', () => {
      const { entries } = run([
        created,
        paidApproved,
        paidCharge(1),
        paidCharge(2),
        { ...refunded, amounts: PAID_AMOUNTS },
      ]);
      expect(kinds(entries)).toEqual(['payment_credited', 'payment_reversed']);
      expect(totals(entries)[ACCOUNTS.SELLER_AVAILABLE]).toBe(0);
      expect(totals(entries)[ACCOUNTS.PSP_SETTLEMENT]).toBe(0);
    });

    it('keeps the amounts money was posted with: a later, different figure is not posted over', () => {
      const { funds, entries } = run([paidApproved, paidCharge(1), { ...approved }]);
      expect(kinds(entries)).toEqual(['payment_credited']);
      expect(funds.amounts).toEqual(PAID_AMOUNTS);
    });
  });

  it('posts nothing for a charge that expired or was cancelled', () => {
    expect(run([created, charge('EXPIRED', 1)]).entries).toEqual([]);
    expect(run([created, charge('CANCELLED', 1)]).entries).toEqual([]);
  });

  describe('a refund hold (position REFUND_HELD)', () => {
    const start: OrderFunds = { amounts: AMOUNTS, status: 'PAID', version: 1, position: 'REFUND_HELD' };
    const refundHeldOf = (entries: Entry[]) =>
      totalsOf(entries.flatMap((e) => e.lines))[ACCOUNTS.SELLER_HELD_REFUND];
    const from = (...messages: OrderMessage[]) => {
      let funds = start;
      const entries: Entry[] = [];
      for (const message of messages) {
        const result = applyOrderMessage(funds, message);
        funds = result.funds;
        entries.push(...result.entries);
      }
      return { funds, entries };
    };

    it('stays held while the charge is PAID, whatever message repeats it', () => {
      const { funds, entries } = from(approved, charge('PAID', 1), charge('PAID', 3));
      expect(entries).toEqual([]);
      expect(funds).toMatchObject({ position: 'REFUND_HELD', version: 3 });
    });

    it('is taken by the reversal of the refund, or of a chargeback: the available balance is untouched', () => {
      for (const messages of [[charge('REFUNDED', 2)], [refunded], [charge('CHARGEBACK', 2)]]) {
        const { funds, entries } = from(...messages);
        expect(kinds(entries)).toEqual(['payment_reversed']);
        expect(funds.position).toBe('REVERSED');
        expect(available(entries)).toBe(0);
        expect(refundHeldOf(entries)).toBe(-14401);
      }
    });

    it('moves to the MED hold when a MED opens, and a MED decided for the payer reverses from there', () => {
      const { funds, entries } = from(charge('MED', 2), charge('REFUNDED', 3));
      expect(kinds(entries)).toEqual(['med_held', 'payment_reversed']);
      expect(funds.position).toBe('REVERSED');
      expect(available(entries)).toBe(0);
      expect(held(entries)).toBe(0);
      expect(refundHeldOf(entries)).toBe(-14401);
    });
  });
});
