import { randomUUID } from 'node:crypto';
import {
  AmountDueDetail,
  CreatedOrder,
  MESSAGES,
  OrderDetail,
  OrderEventData,
  message,
  type DueDateTermsRecord,
} from '@seller-api/contracts';
import {
  addDays,
  amountDue,
  brazilCalendar,
  lastPayableDate,
  payableUntil,
  todayInSaoPaulo,
  weekday,
} from '@seller-api/due-date';
import { call } from '../support/system';
import { useSystem } from '../support/use-system';
import { waitFor } from '../support/wait';
import { CNPJ, createOrder, customer } from './fixtures';

/*
 * Due-date charges on the orders' side (docs/pix.md, "Due-date charges"): create-order takes the terms
 * and reports every broken rule at once, the detail and the order events show the terms, the dates and
 * what was paid, the amount-due route quotes a day, order.overdue is sent once, and the sandbox pays
 * on a given day. Through the gateway, payments, PostgreSQL and RabbitMQ.
 */

const t = useSystem({ seller: true, db: true, receiver: true, env: { OVERDUE_INTERVAL_MS: '100' } });
let key: string;
beforeAll(() => {
  key = t.seller.key;
});

// docs/pix.md's worked example moved to a future Wednesday (a due date is today or later): R$ 1,000.00,
// 30 days after due, fine 2 %, interest 1 % a month (calendar days), rebate R$ 50.00, discount R$ 30.00
// until five days before.
const DUE = '2027-09-08';
const SAO_PAULO = { state: 'SP', municipality: '3550308' };
const TERMS: DueDateTermsRecord = {
  due_date: DUE,
  days_after_due: 30,
  fine: { type: 'percent', rate: 200 },
  interest: { type: 'percent_per_month', value: 100, days: 'calendar' },
  rebate: { type: 'fixed', amount: 5000 },
  discount: { type: 'fixed_until', tiers: [{ until: addDays(DUE, -5), value: 3000 }] },
  calendar: SAO_PAULO,
};
const DEBTOR = { debtor_name: 'Empresa Compradora Ltda', debtor_document: CNPJ };

const dueDateOrder = (payment: Record<string, unknown> = {}) => ({
  customer: customer(),
  payment: { gross_amount: 100000, ...DEBTOR, ...TERMS, ...payment },
});

async function created(body: unknown, headers: Record<string, string> = {}): Promise<CreatedOrder> {
  const res = await createOrder(t.url, key, body, headers);
  if (res.status !== 201) throw new Error(`order: ${res.status} ${res.text}`);
  return CreatedOrder.parse(res.body.data);
}

async function detail(uuid: string): Promise<OrderDetail> {
  const res = await call(`${t.url}/sellers/orders/${uuid}/`, { key });
  expect(res.status).toBe(200);
  return OrderDetail.strict().parse(res.body.data);
}

const amountDueOn = (uuid: string, query = '', as = key) =>
  call(`${t.url}/sellers/orders/${uuid}/amount-due/${query}`, { key: as });

const pay = (uuid: string, body?: unknown) =>
  call(`${t.url}/sandbox/orders/${uuid}/pay/`, {
    method: 'POST',
    key,
    ...(body === undefined ? {} : { body }),
  });

const errorsOf = (res: { body: Record<string, unknown> }) => res.body.data as Record<string, string[]>;

describe('create a due-date order', () => {
  it('takes every term, stores the dates, and shows them in the detail and order.created', async () => {
    const events = await t.captureEvents('orders.events', 'order.created');
    const order = await created(dueDateOrder());
    const { payment } = await detail(order.uuid);
    const calendar = brazilCalendar(SAO_PAULO);
    const last = lastPayableDate(TERMS, calendar);
    expect(last).toBe('2027-10-08');
    expect(payment.due_date).toEqual({
      ...TERMS,
      effective_due_date: DUE,
      last_payable_date: last,
      overdue: false,
    });
    expect(payment.expires_at).toBe(payableUntil(last).toISOString());
    expect(payment.gross_amount).toBe(100000);
    expect(payment.amount_paid).toBeNull();
    const [event] = await events.waitFor((m) => (m.payload.order as { uuid: string }).uuid === order.uuid);
    const data = OrderEventData.parse(event?.payload);
    expect(data.order.due_date).toEqual(payment.due_date);
    expect(data.order.amount_paid).toBeNull();
    const { rows } = await t.db.query<{ effective: string; last: string; terms: unknown }>(
      `select to_char(effective_due_date, 'YYYY-MM-DD') as effective,
              to_char(last_payable_date, 'YYYY-MM-DD') as last, due_date_terms as terms
         from orders.orders where id = $1`,
      [order.uuid],
    );
    expect(rows[0]).toEqual({ effective: DUE, last, terms: TERMS });
  });

  it('moves a due date on a weekend to the next business day, and defaults days_after_due to 30', async () => {
    // The first Saturday from a month ahead.
    let saturday = addDays(todayInSaoPaulo(), 30);
    while (weekday(saturday) !== 6) saturday = addDays(saturday, 1);
    const order = await created({
      customer: customer(),
      payment: { gross_amount: 5000, ...DEBTOR, due_date: saturday },
    });
    const { payment } = await detail(order.uuid);
    const calendar = brazilCalendar();
    expect(payment.due_date).toMatchObject({
      due_date: saturday,
      days_after_due: 30,
      fine: null,
      interest: null,
      rebate: null,
      discount: null,
      calendar: null,
      effective_due_date: amountDue(5000, { due_date: saturday, days_after_due: 30 }, saturday, calendar)
        .effective_due_date,
    });
    expect(payment.due_date?.effective_due_date).not.toBe(saturday);
  });

  it('keeps an immediate order as it was: no due date', async () => {
    const order = await created({ customer: customer(), payment: { gross_amount: 15000 } });
    const { payment } = await detail(order.uuid);
    expect(payment.due_date).toBeNull();
    expect(payment.amount_paid).toBeNull();
  });

  it('answers a keyed create again with the same order', async () => {
    const headers = { 'idempotency-key': `due-${randomUUID()}` };
    const first = await createOrder(t.url, key, dueDateOrder(), headers);
    const again = await createOrder(t.url, key, dueDateOrder(), headers);
    expect(first.status).toBe(201);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    const { payment } = await detail(CreatedOrder.parse(first.body.data).uuid);
    expect(payment.due_date?.due_date).toBe(DUE);
  });

  it('reports every broken rule of the terms in one 400', async () => {
    const res = await createOrder(t.url, key, {
      customer: customer(),
      payment: {
        gross_amount: 5000,
        expiration_date: addDays(todayInSaoPaulo(), 2),
        due_date: '2020-01-02',
        fine: { type: 'fixed', amount: 100, rate: 50, color: 'red' },
        rebate: { type: 'fixed', amount: 5000 },
        discount: { type: 'fixed_until', tiers: [{ until: '2020-01-03', value: 100 }] },
        calendar: { state: 'XX' },
      },
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'validation_error' });
    expect(errorsOf(res)).toEqual({
      'payment.expiration_date': [message('notWithField', { field: 'due_date' })],
      'payment.due_date': [message('notWithField', { field: 'expiration_date' }), MESSAGES.dueDatePast],
      'payment.debtor_name': [message('requiredWithField', { field: 'due_date' })],
      'payment.debtor_document': [message('requiredWithField', { field: 'due_date' })],
      'payment.fine.rate': [message('notWithType', { type: 'fixed' })],
      'payment.fine.color': [MESSAGES.unknownField],
      'payment.discount.tiers.0.until': [MESSAGES.tierAfterDueDate],
      'payment.calendar': [message('calendarPlace', { problem: 'Unknown state: "XX"' })],
      'payment.rebate.amount': [message('belowAmount', { amount: 5000 })],
    });
  });

  it('checks the amount rules against the priced amount of an order with items too', async () => {
    const product = await call(`${t.url}/sellers/products/`, {
      method: 'POST',
      key,
      body: { name: 'Curso', price: 2000, type: 'DIGITAL', commission_unit_amount: 0 },
    });
    const uuid = (product.body.data as { uuid: string }).uuid;
    const res = await createOrder(t.url, key, {
      customer: customer(),
      items: [{ product_uuid: uuid, quantity: 2 }],
      payment: {
        ...DEBTOR,
        due_date: DUE,
        rebate: { type: 'percent', rate: 9_999 },
        discount: { type: 'fixed_until', tiers: [{ until: DUE, value: 4000 }] },
      },
    });
    expect(res.status).toBe(400);
    expect(errorsOf(res)).toEqual({
      'payment.rebate.rate': [message('belowAmount', { amount: 4000 })],
      'payment.discount.tiers.0.value': [message('belowAmount', { amount: 4000 })],
    });
  });

  it("refuses the terms' fields without due_date, and a municipality outside its state", async () => {
    const res = await createOrder(t.url, key, {
      customer: customer(),
      payment: { gross_amount: 5000, days_after_due: 3, fine: { type: 'fixed', amount: 100 } },
    });
    expect(res.status).toBe(400);
    expect(errorsOf(res)).toEqual({
      'payment.days_after_due': [message('onlyWithField', { field: 'due_date' })],
      'payment.fine': [message('onlyWithField', { field: 'due_date' })],
    });
    const place = await createOrder(
      t.url,
      key,
      dueDateOrder({ calendar: { state: 'RJ', municipality: '3550308' } }),
    );
    expect(place.status).toBe(400);
    expect(errorsOf(place)).toEqual({
      'payment.calendar': [message('calendarPlace', { problem: 'Municipality 3550308 is in SP, not RJ' })],
    });
  });
});

describe('amount due on a day', () => {
  let order: CreatedOrder;
  beforeAll(async () => {
    order = await created(dueDateOrder());
  });

  it.each([
    // docs/pix.md's worked example: early with the discount, on time, 5 days late (a Monday).
    [addDays(DUE, -7), { rebate: 5000, discount: 3000, fine: 0, interest: 0 }, 92000, false, 0],
    [DUE, { rebate: 5000, discount: 0, fine: 0, interest: 0 }, 95000, false, 0],
    [addDays(DUE, 5), { rebate: 5000, discount: 0, fine: 1900, interest: 158 }, 97058, true, 5],
  ])('on %s', async (date, components, final, overdue, daysLate) => {
    const res = await amountDueOn(order.uuid, `?date=${date}`);
    expect(res.status).toBe(200);
    expect(AmountDueDetail.strict().parse(res.body.data)).toEqual({
      date,
      effective_due_date: DUE,
      last_payable_date: '2027-10-08',
      payable: true,
      overdue,
      days_late: daysLate,
      components: { original: 100000, ...components },
      final,
    });
  });

  it('is not payable after the last payable date', async () => {
    const res = await amountDueOn(order.uuid, '?date=2027-10-09');
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({
      payable: false,
      overdue: true,
      days_late: 31,
      components: null,
      final: null,
    });
  });

  it('quotes today by default', async () => {
    const res = await amountDueOn(order.uuid);
    expect(res.status).toBe(200);
    const today = todayInSaoPaulo();
    expect(res.body.data).toEqual(
      amountDue(100000, TERMS, today, brazilCalendar(SAO_PAULO)) as unknown as Record<string, unknown>,
    );
    expect(res.body.data).toMatchObject({ date: today, final: 92000 });
  });

  it('refuses a malformed date, an unknown parameter and a day before the order', async () => {
    const malformed = await amountDueOn(order.uuid, '?date=tomorrow');
    expect(malformed.status).toBe(400);
    expect(errorsOf(malformed)).toEqual({ date: [MESSAGES.date] });
    const unknown = await amountDueOn(order.uuid, '?day=2027-09-08');
    expect(unknown.status).toBe(400);
    expect(errorsOf(unknown)).toEqual({ day: [MESSAGES.unknownQueryParameter] });
    const yesterday = addDays(todayInSaoPaulo(), -1);
    const before = await amountDueOn(order.uuid, `?date=${yesterday}`);
    expect(before.status).toBe(400);
    expect(errorsOf(before)).toEqual({ date: [`Must be at least ${todayInSaoPaulo()}.`] });
    // Long after the last payable date: not payable, answered at once.
    const far = await amountDueOn(order.uuid, '?date=9999-12-31');
    expect(far.status).toBe(200);
    expect(far.body.data).toMatchObject({ payable: false, final: null, components: null });
  });

  it("answers 409 for an immediate order, 404 for an unknown one, 403 for another seller's", async () => {
    const immediate = await created({ customer: customer(), payment: { gross_amount: 15000 } });
    const conflict = await amountDueOn(immediate.uuid);
    expect(conflict.status).toBe(409);
    expect(conflict.body).toMatchObject({ code: 'conflict', message: expect.stringContaining('immediate') });
    const unknown = await amountDueOn(randomUUID());
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ code: 'not_found' });
    const other = await t.newKey();
    const forbidden = await amountDueOn(order.uuid, '', other.key);
    expect(forbidden.status).toBe(403);
  });
});

describe('order.overdue', () => {
  /** Moves the order's effective due date into the past, as the days going by would. */
  const pastDue = (uuid: string) =>
    t.db.query(
      `update orders.orders set effective_due_date = (now() at time zone 'America/Sao_Paulo')::date - 2
        where id = $1`,
      [uuid],
    );
  const today = () => todayInSaoPaulo();

  it('is sent once for a PENDING order past its effective due date, never for a paid or unpayable one', async () => {
    const events = await t.captureEvents('orders.events', 'order.overdue');
    const late = await created({
      ...dueDateOrder({ due_date: today(), discount: null }),
      postback_url: `${t.receiver.url}/overdue`,
    });
    const paid = await created(dueDateOrder({ due_date: today(), discount: null }));
    expect((await pay(paid.uuid)).status).toBe(200);
    await waitFor(async () => (await detail(paid.uuid)).payment.status === 'PAID', { what: 'paid' });
    // Past its last payable date too, not expired yet: it can no longer be paid, so no order.overdue.
    const gone = await created(dueDateOrder({ due_date: today(), discount: null }));
    await t.db.query(
      `update orders.orders set effective_due_date = (now() at time zone 'America/Sao_Paulo')::date - 40,
              last_payable_date = (now() at time zone 'America/Sao_Paulo')::date - 10 where id = $1`,
      [gone.uuid],
    );
    await pastDue(late.uuid);
    await pastDue(paid.uuid);
    const [event] = await events.waitFor(
      (m) => (m.payload.order as { uuid: string }).uuid === late.uuid,
      1,
      'order.overdue',
    );
    const data = OrderEventData.parse(event?.payload);
    expect(data.order).toMatchObject({ uuid: late.uuid, status: 'PENDING', amount_paid: null });
    expect(data.order.due_date).toMatchObject({ due_date: today(), overdue: true });
    expect(event?.headers).toMatchObject({ 'x-order-uuid': late.uuid, 'x-seller-id': t.seller.sellerId });
    expect((await detail(late.uuid)).payment.due_date?.overdue).toBe(true);
    // The dispatcher posts it to the order's postback_url like the other order events.
    const postback = await waitFor(
      () => t.receiver.at('/overdue').find((hook) => hook.body.event === 'order.overdue'),
      { what: 'the order.overdue postback' },
    );
    expect(postback.body.data).toMatchObject({ order: { uuid: late.uuid, status: 'PENDING' } });
    // A later order's event means the job has run again since: the first got no second one.
    const sentinel = await created(dueDateOrder({ due_date: today(), discount: null }));
    await pastDue(sentinel.uuid);
    await events.waitFor((m) => (m.payload.order as { uuid: string }).uuid === sentinel.uuid);
    const of = (uuid: string) =>
      events.messages.filter((m) => (m.payload.order as { uuid: string }).uuid === uuid).length;
    expect(of(late.uuid)).toBe(1);
    expect(of(paid.uuid)).toBe(0);
    expect(of(gone.uuid)).toBe(0);
    const { rows } = await t.db.query<{ notified: boolean }>(
      `select overdue_notified_at is not null as notified from orders.orders where id = $1`,
      [paid.uuid],
    );
    expect(rows[0]?.notified).toBe(false);
  });
});

describe('sandbox payment on a day', () => {
  it('checks the body: bad fields and unknown ones are a 400 naming each', async () => {
    const order = await created(dueDateOrder());
    const res = await pay(order.uuid, { date: '08/09/2027', amount: 0, coupon: 'X' });
    expect(res.status).toBe(400);
    expect(errorsOf(res)).toEqual({
      date: [MESSAGES.date],
      amount: ['Must be at least 1.'],
      coupon: [MESSAGES.unknownField],
    });
    expect((await detail(order.uuid)).payment.status).toBe('PENDING');
  });

  it('refuses, as the PSP would, an amount other than what is owed that day (409), and the order stays', async () => {
    const order = await created(dueDateOrder());
    const res = await pay(order.uuid, { date: addDays(DUE, 5), amount: 95000 });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ code: 'conflict', message: expect.stringContaining('97058') });
    const tooLate = await pay(order.uuid, { date: '2027-10-09' });
    expect(tooLate.status).toBe(409);
    expect(tooLate.body).toMatchObject({ code: 'conflict' });
    expect((await detail(order.uuid)).payment).toMatchObject({ status: 'PENDING', amount_paid: null });
  });

  it('pays late: the order is PAID with the amount paid, its components, and fee and net of it', async () => {
    const events = await t.captureEvents('orders.events', 'order.paid');
    const order = await created(dueDateOrder());
    const before = (await detail(order.uuid)).payment;
    const date = addDays(DUE, 5);
    const res = await pay(order.uuid, { date });
    expect(res.status).toBe(200);
    const { payment } = await detail(order.uuid);
    const amountPaid = {
      amount: 97058,
      date,
      components: { original: 100000, rebate: 5000, discount: 0, fine: 1900, interest: 158 },
    };
    expect(payment.status).toBe('PAID');
    expect(payment.amount_paid).toEqual(amountPaid);
    // The order's amount stays what was charged; fee and net are of what was paid.
    expect(payment.gross_amount).toBe(100000);
    expect(payment.fee_amount + payment.net_amount).toBe(97058);
    expect(payment.fee_amount).toBeLessThan(before.fee_amount);
    expect(payment.due_date?.overdue).toBe(false);
    const [event] = await events.waitFor((m) => (m.payload.order as { uuid: string }).uuid === order.uuid);
    const data = OrderEventData.parse(event?.payload);
    expect(data.order).toMatchObject({
      status: 'PAID',
      amount_paid: amountPaid,
      fee_amount: payment.fee_amount,
      net_amount: payment.net_amount,
    });
    expect(data.order.due_date).toMatchObject({ due_date: DUE, overdue: false });
  });

  it('counts the amount paid in the summary, and a refund takes the net of it from the balance', async () => {
    const seller = (await t.newKey()).key;
    const res = await createOrder(t.url, seller, dueDateOrder());
    expect(res.status).toBe(201);
    const { uuid } = CreatedOrder.parse(res.body.data);
    const from = new Date(Date.now() - 3_600_000).toISOString();
    expect(
      (
        await call(`${t.url}/sandbox/orders/${uuid}/pay/`, {
          method: 'POST',
          key: seller,
          body: { date: addDays(DUE, 5) },
        })
      ).status,
    ).toBe(200);
    const paid = OrderDetail.parse(
      (await call(`${t.url}/sellers/orders/${uuid}/`, { key: seller })).body.data,
    ).payment;
    const to = new Date(Date.now() + 3_600_000).toISOString();
    const summary = await call(
      `${t.url}/sellers/orders/summary/?${new URLSearchParams({ from, to, granularity: 'day' })}`,
      { key: seller },
    );
    expect(summary.status).toBe(200);
    expect((summary.body.data as { totals: Record<string, number> }).totals).toMatchObject({
      orders_paid: 1,
      amount_paid: 97058,
      fees: paid.fee_amount,
      net: paid.net_amount,
    });
    // The ledger credits the net of what was paid; the refund's hold takes exactly that, and gives
    // back what was paid.
    const available = () =>
      waitFor(
        async () => {
          const balance = await call(`${t.url}/finance/balance/`, { key: seller });
          const amount = (balance.body.data as { available_amount: number }).available_amount;
          return amount === paid.net_amount ? amount : null;
        },
        // Polled slowly: the key's requests per minute are limited.
        { what: 'the net of the amount paid in the available balance', intervalMs: 200 },
      );
    await available();
    const refund = await call(`${t.url}/sellers/orders/${uuid}/refund/`, { method: 'POST', key: seller });
    expect(refund.status).toBe(200);
    const refunded = await waitFor(
      async () => {
        const order = OrderDetail.parse(
          (await call(`${t.url}/sellers/orders/${uuid}/`, { key: seller })).body.data,
        );
        return order.payment.status === 'REFUNDED' ? order : null;
      },
      { what: 'the order refunded', intervalMs: 200 },
    );
    expect(refunded.payment.refund).toMatchObject({ status: 'REFUNDED', amount: 97058 });
    const after = await call(`${t.url}/finance/balance/`, { key: seller });
    expect(after.body.data).toMatchObject({ available_amount: 0 });
  });

  it('pays with no body, or an empty one, on today for what is owed', async () => {
    const order = await created(dueDateOrder());
    const res = await pay(order.uuid, {});
    expect(res.status).toBe(200);
    const { payment } = await detail(order.uuid);
    expect(payment.status).toBe('PAID');
    expect(payment.amount_paid).toMatchObject({ amount: 92000, date: todayInSaoPaulo() });
    const immediate = await created({ customer: customer(), payment: { gross_amount: 15000 } });
    expect((await pay(immediate.uuid)).status).toBe(200);
    expect((await detail(immediate.uuid)).payment.amount_paid).toMatchObject({
      amount: 15000,
      date: todayInSaoPaulo(),
    });
  });
});
