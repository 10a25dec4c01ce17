import {
  AmountDueResponse,
  OrderDetail,
  OrderEventData,
  PaymentApprovedData,
  type CreateOrderInput,
} from '@seller-api/contracts';
import { addDays, todayInSaoPaulo } from '@seller-api/due-date';
import { customer } from '../orders/fixtures';
import { waitFor } from '../support/wait';
import { register } from '../webhooks/helpers';
import { balance, balanceBecomes, useHarness } from '../withdrawals/helpers';

/**
 * A due-date charge paid late, end to end through the gateway (docs/pix.md, "Due-date charges"): the
 * sandbox pays as if on a day after the due date; the order, its webhooks and the seller's balance
 * carry the amount paid (original - rebate + fine + interest), and the fee is of that amount.
 */

const t = useHarness({}, { seller: true, receiver: true });

// R$ 1,000.00 with a R$ 50.00 rebate, a 2 % fine and R$ 1.00 of interest a calendar day late.
const AMOUNT = 100_000;
const REBATE = 5_000;
const BASE = AMOUNT - REBATE;
const FINE = 1_900; // 2 % of the base
const INTEREST_PER_DAY = 100;
const DAYS_LATE = 5;
const PAID = BASE + FINE + INTEREST_PER_DAY * DAYS_LATE; // 97400
// The default fee: 3.99 % rounded half up to the cent, no fixed part.
const FEE = Math.round((PAID * 399) / 10_000);

function dueDateOrder(dueDate: string): CreateOrderInput {
  return {
    customer: customer(),
    payment: {
      gross_amount: AMOUNT,
      debtor_name: 'Maria Silva',
      debtor_document: '529.982.247-25',
      due_date: dueDate,
      days_after_due: 30,
      rebate: { type: 'fixed', amount: REBATE },
      fine: { type: 'percent', rate: 200 },
      interest: { type: 'amount_per_day', value: INTEREST_PER_DAY, days: 'calendar' },
    },
  } as CreateOrderInput;
}

const hooksOf = (path: string) => t.receiver.at(path).map((hook) => hook.body);

describe('a due-date order paid late in the sandbox', () => {
  it('is paid with its fine and interest, and the webhooks and the ledger carry the amount paid', async () => {
    const key = t.seller.key;
    await register(t.url, key, `${t.receiver.url}/late/paid`, 'order.paid');
    await register(t.url, key, `${t.receiver.url}/late/approved`, 'payment.approved');
    const before = await balance(t, key);

    const dueDate = addDays(todayInSaoPaulo(), 7);
    const created = await t.api('/sellers/orders/', { method: 'POST', key, body: dueDateOrder(dueDate) });
    expect(created.status).toBe(201);
    const uuid = (created.body.data as { uuid: string }).uuid;

    // The day to pay on: five calendar days after the effective due date, which the API tells.
    const onDue = await t.api(`/sellers/orders/${uuid}/amount-due/`, { key });
    expect(onDue.status).toBe(200);
    const dates = AmountDueResponse.parse(onDue.body).data;
    const late = addDays(dates.effective_due_date, DAYS_LATE);
    const quote = AmountDueResponse.parse(
      (await t.api(`/sellers/orders/${uuid}/amount-due/?date=${late}`, { key })).body,
    ).data;
    expect(quote).toMatchObject({
      payable: true,
      overdue: true,
      days_late: DAYS_LATE,
      components: { original: AMOUNT, rebate: REBATE, discount: 0, fine: FINE, interest: 500 },
      final: PAID,
    });

    // The PSP refuses another amount, and a day after the last payable one; nothing changes.
    const wrong = await t.api(`/sandbox/orders/${uuid}/pay/`, {
      method: 'POST',
      key,
      body: { date: late, amount: PAID - 1 },
    });
    expect(wrong.status).toBe(409);
    expect(wrong.body.message).toContain(String(PAID));
    const tooLate = await t.api(`/sandbox/orders/${uuid}/pay/`, {
      method: 'POST',
      key,
      body: { date: addDays(dates.last_payable_date, 1) },
    });
    expect(tooLate.status).toBe(409);
    const pending = OrderDetail.parse((await t.api(`/sellers/orders/${uuid}/`, { key })).body.data);
    expect(pending.payment).toMatchObject({ status: 'PENDING', amount_paid: null });

    const paid = await t.api(`/sandbox/orders/${uuid}/pay/`, { method: 'POST', key, body: { date: late } });
    expect(paid.status).toBe(200);

    const detail = OrderDetail.parse((await t.api(`/sellers/orders/${uuid}/`, { key })).body.data);
    const amountPaid = {
      amount: PAID,
      date: late,
      components: { original: AMOUNT, rebate: REBATE, discount: 0, fine: FINE, interest: 500 },
    };
    expect(detail.payment).toMatchObject({
      status: 'PAID',
      gross_amount: AMOUNT,
      fee_amount: FEE,
      net_amount: PAID - FEE,
      amount_paid: amountPaid,
      due_date: { due_date: dueDate, effective_due_date: dates.effective_due_date, overdue: false },
    });

    const [orderPaid] = await waitFor(() => hooksOf('/late/paid').length > 0 && hooksOf('/late/paid'), {
      what: 'order.paid delivered',
    });
    const order = OrderEventData.parse(orderPaid?.data).order;
    expect(order).toMatchObject({
      status: 'PAID',
      fee_amount: FEE,
      net_amount: PAID - FEE,
      amount_paid: amountPaid,
    });
    expect(order.due_date?.effective_due_date).toBe(dates.effective_due_date);

    const [approved] = await waitFor(
      () => hooksOf('/late/approved').length > 0 && hooksOf('/late/approved'),
      { what: 'payment.approved delivered' },
    );
    expect(PaymentApprovedData.parse(approved?.data).transaction).toMatchObject({
      gross_amount: PAID,
      fee_amount: FEE,
      net_amount: PAID - FEE,
      components: amountPaid.components,
    });

    // The ledger credits the net of what was paid.
    await balanceBecomes(t, key, {
      available_amount: before.available_amount + PAID - FEE,
    });
  });
});
