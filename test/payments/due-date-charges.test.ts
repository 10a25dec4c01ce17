import { randomUUID } from 'node:crypto';
import amqp from 'amqplib';
import {
  Charge,
  ChargeState,
  CreateChargesResponse,
  PaymentApprovedData,
  PaymentEvents,
  ReconciliationCharge,
  type CreateChargeRequest,
  type DueDateTermsRecord,
  type Identity,
} from '@seller-api/contracts';
import {
  addDays,
  amountDue,
  brazilCalendar,
  lastPayableDate,
  payableUntil,
  todayInSaoPaulo,
  toCobvDecimal,
  type AmountComponents,
  type IsoDate,
} from '@seller-api/due-date';
import { signIdentity, signedIdentity } from '@seller-api/service-kit';
import { parseBrCode } from '../../services/payments/src/domain/brcode';
import { computeFee } from '../../services/payments/src/domain/fees';
import { callKey } from '../support/keys';
import { apiPixPspEnv } from '../support/psp-simulator';
import { call } from '../support/system';
import { useSystem } from '../support/use-system';
import { waitFor } from '../support/wait';

/*
 * Due-date charges (API Pix `cobv`, docs/pix.md "Due-date charges") through payments' internal routes,
 * as orders calls them: made in the sandbox (test) and at the API Pix simulator (live, with
 * PIX_DUE_DATE_CHARGES), paid early, on time and late, at the PSP's amount when it differs from ours,
 * refused by the sandbox as a PSP would, cancelled at the PSP, expired at expires_at.
 */

const WEBHOOK_SECRET = 'due-date-webhook-secret-0123';
const ORDERS_KEY = callKey('orders', 'payments');
const RECONCILER = callKey('withdrawals', 'payments');
const FEE_BPS = 399;

const t = useSystem({
  gateway: false,
  db: true,
  psp: { clientId: 'due-date-client', clientSecret: 'due-date-secret' },
  env: ({ psp }) => ({
    ...apiPixPspEnv(psp, 'live', { webhookSecret: WEBHOOK_SECRET, pixKey: 'pix@seller-api.example' }),
    PIX_DUE_DATE_CHARGES: 'true',
  }),
});

let connection: amqp.ChannelModel;
const received: amqp.ConsumeMessage[] = [];
beforeAll(async () => {
  connection = await amqp.connect(t.env.AMQP_URL as string);
  t.cleanup(() => connection.close());
  const channel = await connection.createChannel();
  const { queue } = await channel.assertQueue('', { exclusive: true });
  for (const pattern of ['payment.#', 'internal.charge.#'])
    await channel.bindQueue(queue, `${t.env.AMQP_NAMESPACE}payments.events`, pattern);
  await channel.consume(queue, (message) => {
    if (!message) return;
    received.push(message);
    channel.ack(message);
  });
});

const payments = () => t.system.services.payments;
const today = () => todayInSaoPaulo();

function identity(environment: 'test' | 'live'): Identity {
  return {
    user_id: randomUUID(),
    seller_id: randomUUID(),
    environment,
    role: 'seller',
    seller_name: 'Loja Exemplo',
  };
}

/** Due in 10 days, payable 5 days after; 2 % fine, 1 % a month, R$ 50 rebate, R$ 30 off until day 3. */
function terms(overrides: Partial<DueDateTermsRecord> = {}): DueDateTermsRecord {
  return {
    due_date: addDays(today(), 10),
    days_after_due: 5,
    fine: { type: 'percent', rate: 200 },
    interest: { type: 'percent_per_month', value: 100, days: 'calendar' },
    rebate: { type: 'fixed', amount: 5000 },
    discount: { type: 'fixed_until', tiers: [{ until: addDays(today(), 3), value: 3000 }] },
    calendar: null,
    ...overrides,
  };
}

const calendar = brazilCalendar({});
const owed = (days: DueDateTermsRecord, day: IsoDate) => {
  const due = amountDue(100_000, days, day, calendar);
  if (!due.payable) throw new Error(`not payable on ${day}`);
  return due;
};

type DueDateChargeRequest = CreateChargeRequest & { due_date: DueDateTermsRecord };

function dueDateCharge(
  due: DueDateTermsRecord = terms(),
  overrides: Omit<Partial<CreateChargeRequest>, 'due_date'> = {},
): DueDateChargeRequest {
  return {
    order_uuid: randomUUID(),
    gross_amount: 100_000,
    expires_at: payableUntil(lastPayableDate(due, calendar)).toISOString(),
    seller_name: 'Loja Exemplo',
    debtor_name: 'Maria Silva',
    debtor_document: '52998224725',
    due_date: due,
    ...overrides,
  };
}

function post(path: string, who: Identity, body?: unknown) {
  return call(`${payments()}${path}`, {
    method: 'POST',
    body,
    headers: signIdentity(ORDERS_KEY, who, 'POST', path, body === undefined ? null : JSON.stringify(body)),
  });
}

async function create(who: Identity, body: CreateChargeRequest) {
  const res = await post('/internal/charges/', who, body);
  if (res.status !== 201) throw new Error(`charge: ${res.status} ${res.text}`);
  return Charge.parse(res.body.data);
}

const act = (who: Identity, orderId: string, action: string, body?: unknown) =>
  post(`/internal/charges/${orderId}/${action}/`, who, body);

async function row(orderId: string) {
  const result = await t.db.query(
    `select charge_status, version, gross_amount::int, fee_amount::int, net_amount::int, amount_components,
            paid_on::text, due_date_terms
       from payments.transactions where order_id = $1`,
    [orderId],
  );
  return result.rows[0] as {
    charge_status: string;
    version: number;
    gross_amount: number;
    fee_amount: number;
    net_amount: number;
    amount_components: AmountComponents | null;
    paid_on: string | null;
    due_date_terms: DueDateTermsRecord | null;
  };
}

function eventOf(orderId: string, routingKey: string): Promise<unknown> {
  return waitFor(
    () => {
      const message = received.find(
        (m) => m.properties.headers?.['x-order-uuid'] === orderId && m.fields.routingKey === routingKey,
      );
      return message ? (JSON.parse(message.content.toString()) as { data?: unknown }) : null;
    },
    { what: `${routingKey} of ${orderId}` },
  ).then((envelope) => ('data' in envelope ? envelope.data : envelope));
}

/** The fee and net of an amount, as the service computes them (PLATFORM_FEE_BPS default, no fixed part). */
const feeOf = (amount: number) => computeFee(amount, FEE_BPS, 0);

/** What a paid charge must show everywhere: the row, payment.approved, internal.charge.paid. */
async function expectPaid(orderId: string, amount: number, components: AmountComponents, day: IsoDate) {
  const { fee_amount, net_amount } = feeOf(amount);
  expect(await row(orderId)).toMatchObject({
    charge_status: 'PAID',
    gross_amount: amount,
    fee_amount,
    net_amount,
    amount_components: components,
    paid_on: day,
  });
  const approved = PaymentApprovedData.parse(await eventOf(orderId, PaymentEvents.APPROVED));
  expect(approved.transaction).toMatchObject({ gross_amount: amount, fee_amount, net_amount, components });
  const state = ChargeState.parse(await eventOf(orderId, 'internal.charge.paid'));
  expect(state).toMatchObject({
    status: 'PAID',
    amount_paid: { amount, date: day, components },
    fee_amount,
    net_amount,
  });
}

describe('due-date charges in the sandbox', () => {
  it('makes a static BR Code with our txid and no amount, and keeps the terms', async () => {
    const who = identity('test');
    const body = dueDateCharge();
    const charge = await create(who, body);
    expect(charge).toMatchObject({ gross_amount: 100_000, status: 'CREATED', expires_at: body.expires_at });
    const code = parseBrCode(charge.copy_and_paste);
    expect(code.valid).toBe(true);
    expect(code.fields['54']).toBeUndefined();
    expect(code.fields['62']).toEqual({ '05': charge.txid });
    expect((await row(body.order_uuid)).due_date_terms).toEqual(body.due_date);
  });

  it('pays early with no body: today, what is owed today (the discount), fee on the amount paid', async () => {
    const who = identity('test');
    const body = dueDateCharge();
    await create(who, body);
    const due = owed(body.due_date, today());
    expect(due.components.discount).toBe(3000);
    const res = await act(who, body.order_uuid, 'sandbox-pay');
    expect(res.status).toBe(200);
    expect(ChargeState.parse(res.body.data)).toMatchObject({
      status: 'PAID',
      amount_paid: { amount: 92_000, date: today(), components: due.components },
      ...feeOf(92_000),
    });
    await expectPaid(body.order_uuid, 92_000, due.components, today());
    // Read back from the row by a later move: the same amount paid.
    const med = await act(who, body.order_uuid, 'sandbox-med');
    expect(med.status).toBe(200);
    expect(ChargeState.parse(med.body.data)).toMatchObject({
      status: 'MED',
      amount_paid: { amount: 92_000, date: today(), components: due.components },
      ...feeOf(92_000),
    });
  });

  it('pays on time and late as if on the day asked, with the fine and interest of that day', async () => {
    const who = identity('test');
    const onTime = dueDateCharge();
    const late = dueDateCharge();
    await create(who, onTime);
    await create(who, late);
    const effective = owed(onTime.due_date, onTime.due_date.due_date).effective_due_date;
    const dueDay = owed(onTime.due_date, effective);
    expect(dueDay.final).toBe(95_000);
    expect((await act(who, onTime.order_uuid, 'sandbox-pay', { date: effective })).status).toBe(200);
    await expectPaid(onTime.order_uuid, 95_000, dueDay.components, effective);

    const lateDay = addDays(effective, 3);
    const lateDue = owed(late.due_date, lateDay);
    expect(lateDue.components.fine).toBe(1900);
    expect(lateDue.components.interest).toBeGreaterThan(0);
    const res = await act(who, late.order_uuid, 'sandbox-pay', { date: lateDay, amount: lateDue.final });
    expect(res.status).toBe(200);
    await expectPaid(late.order_uuid, lateDue.final, lateDue.components, lateDay);

    // The ledger's reconciliation reads the amount paid.
    const operator: Identity = {
      user_id: randomUUID(),
      seller_id: null,
      environment: 'test',
      role: 'operator',
    };
    const path = `/internal/transactions/?environment=test&changed_after=${encodeURIComponent(
      new Date(Date.now() - 60_000).toISOString(),
    )}&limit=500`;
    const list = await call(`${payments()}${path}`, {
      headers: signIdentity(RECONCILER, operator, 'GET', path),
    });
    expect(list.status).toBe(200);
    const listed = (list.body.data as { results: unknown[] }).results.map((r) =>
      ReconciliationCharge.parse(r),
    );
    expect(listed.find((c) => c.order_uuid === late.order_uuid)).toMatchObject({
      gross_amount: lateDue.final,
      ...feeOf(lateDue.final),
    });
  });

  it('refuses another amount or a day it is not payable on with 409, and the charge stays PENDING', async () => {
    const who = identity('test');
    const body = dueDateCharge();
    await create(who, body);
    const before = await row(body.order_uuid);
    const wrong = await act(who, body.order_uuid, 'sandbox-pay', { amount: 12_345 });
    expect(wrong.status).toBe(409);
    expect(wrong.body).toMatchObject({
      code: 'conflict',
      message: `The PSP refuses 12345 cents: 92000 are owed on ${today()}.`,
    });
    const last = lastPayableDate(body.due_date, calendar);
    const after = await act(who, body.order_uuid, 'sandbox-pay', { date: addDays(last, 1) });
    expect(after.status).toBe(409);
    expect(after.body.message).toBe(
      `The charge is not payable on ${addDays(last, 1)}: its last payable date is ${last}.`,
    );
    const earlier = await act(who, body.order_uuid, 'sandbox-pay', { date: addDays(today(), -1) });
    expect(earlier.status).toBe(409);
    expect(earlier.body.message).toContain('is not payable on');
    // Bad input is a 400 on the field, an unknown field refused.
    const bad = await act(who, body.order_uuid, 'sandbox-pay', { date: '2025-13-01', tip: 1 });
    expect(bad.status).toBe(400);
    expect(bad.body).toMatchObject({ code: 'validation_error' });
    expect(Object.keys(bad.body.data as object).sort()).toEqual(['date', 'tip']);
    expect(await row(body.order_uuid)).toEqual(before);
    expect(before.charge_status).toBe('PENDING');
  });

  it('pays an immediate charge today and its amount only, with amount_paid in its state', async () => {
    const who = identity('test');
    const { due_date: _none, ...immediate } = dueDateCharge();
    const body: CreateChargeRequest = {
      ...immediate,
      gross_amount: 15_000,
      expires_at: new Date(Date.now() + 3600_000).toISOString(),
    };
    await create(who, body);
    const tomorrow = await act(who, body.order_uuid, 'sandbox-pay', { date: addDays(today(), 1) });
    expect(tomorrow.status).toBe(409);
    expect(tomorrow.body.message).toContain('Only a due-date charge can be paid on another day');
    const less = await act(who, body.order_uuid, 'sandbox-pay', { amount: 14_999 });
    expect(less.status).toBe(409);
    expect(less.body.message).toBe(`The PSP refuses 14999 cents: 15000 are owed on ${today()}.`);
    expect((await row(body.order_uuid)).charge_status).toBe('PENDING');
    const paid = await act(who, body.order_uuid, 'sandbox-pay', { amount: 15_000 });
    expect(paid.status).toBe(200);
    await expectPaid(
      body.order_uuid,
      15_000,
      { original: 15_000, rebate: 0, discount: 0, fine: 0, interest: 0 },
      today(),
    );
  });

  it('makes due-date charges through the batch route too, and refuses bad terms with a 400', async () => {
    const who = identity('test');
    const good = dueDateCharge();
    const bad = dueDateCharge(terms({ rebate: { type: 'fixed', amount: 100_000 } }));
    const charges = [good, bad].map((charge) => ({
      signed: signedIdentity(ORDERS_KEY, who, 'POST', '/internal/charges/', JSON.stringify(charge)),
      charge,
    }));
    const res = await post('/internal/charges/batch/', who, { charges });
    expect(res.status).toBe(200);
    const [made, refused] = CreateChargesResponse.parse(res.body).data.results;
    expect(made).toMatchObject({ status: 201, charge: { order_uuid: good.order_uuid } });
    expect(refused).toMatchObject({ status: 400, code: 'validation_error' });
    expect((await row(good.order_uuid)).due_date_terms).toEqual(good.due_date);
    expect(await row(bad.order_uuid)).toBeUndefined();
  });

  it('expires a due-date charge at expires_at, the end of its last payable day', async () => {
    const who = identity('test');
    const body = dueDateCharge(terms(), { expires_at: new Date(Date.now() + 500).toISOString() });
    await create(who, body);
    const state = ChargeState.parse(await eventOf(body.order_uuid, 'internal.charge.expired'));
    expect(state).toMatchObject({
      status: 'EXPIRED',
      amount_paid: null,
      fee_amount: 3990,
      net_amount: 96_010,
    });
  });
});

describe('due-date charges at an API Pix PSP', () => {
  const webhook = () => ({ webhookUrl: `${payments()}/psp/webhook`, secret: WEBHOOK_SECRET });

  it("creates the cobv with our txid, answers the PSP's dynamic code, and is paid late at the PSP", async () => {
    const who = identity('live');
    const body = dueDateCharge();
    const charge = await create(who, body);
    const cobv = t.psp.cobvs.get(charge.txid);
    expect(cobv).toMatchObject({
      status: 'ATIVA',
      calendario: { dataDeVencimento: body.due_date.due_date, validadeAposVencimento: 5 },
      valor: { original: '1000.00' },
    });
    expect(charge.copy_and_paste).toBe(cobv?.pixCopiaECola);
    expect(parseBrCode(charge.copy_and_paste).fields['54']).toBeUndefined();
    // The token asked for the cobv scopes.
    const token = t.psp.requests.find((r) => r.path === '/oauth/token');
    expect(new URLSearchParams(token?.body).get('scope')).toContain('cobv.write');

    const day = addDays(owed(body.due_date, body.due_date.due_date).effective_due_date, 2);
    const paid = await t.psp.payCobv(charge.txid, { ...webhook(), date: day });
    expect(paid.status).toBe(200);
    expect(paid.pix.componentesValor).toMatchObject({ multa: { valor: '19.00' } });
    const due = owed(body.due_date, day);
    await expectPaid(body.order_uuid, due.final, due.components, day);
  });

  it("applies the PSP's amount when it differs from ours, and counts it", async () => {
    const who = identity('live');
    const body = dueDateCharge();
    const charge = await create(who, body);
    const ours = owed(body.due_date, today());
    const counted = () =>
      t.system.payments.runtime.metrics.registry
        .getSingleMetric('payments_due_date_amount_differences_total')
        ?.get()
        .then((m) => m.values.find((v) => v.labels.environment === 'live')?.value ?? 0) ?? Promise.resolve(0);
    const before = await counted();
    // 1 real more than ours, with components that do not add up: ours, the difference off the discount.
    const delivery = await t.psp.notify(
      {
        pix: [
          {
            endToEndId: t.psp.newEndToEndId(),
            txid: charge.txid,
            valor: toCobvDecimal(ours.final + 100),
            horario: new Date().toISOString(),
            componentesValor: { original: { valor: '1000.00' } },
          },
        ],
      },
      webhook(),
    );
    expect(delivery.status).toBe(200);
    expect(JSON.parse(delivery.body)).toMatchObject({ data: { outcomes: ['applied'] } });
    await expectPaid(
      body.order_uuid,
      ours.final + 100,
      { ...ours.components, discount: ours.components.discount - 100 },
      today(),
    );
    expect(await counted()).toBe(before + 1);
  });

  it('keeps for an operator an amount no day of the terms can come to, and applies nothing', async () => {
    const who = identity('live');
    const body = dueDateCharge();
    const charge = await create(who, body);
    const notified = (valor: string) => ({
      endToEndId: t.psp.newEndToEndId(),
      txid: charge.txid,
      valor,
      horario: new Date().toISOString(),
    });
    const [zero, cent, huge] = [notified('0.00'), notified('0.01'), notified('99999999.00')];
    const delivery = await t.psp.notify({ pix: [zero, cent, huge] }, webhook());
    expect(delivery.status).toBe(200);
    expect(JSON.parse(delivery.body)).toMatchObject({
      data: { outcomes: ['amount_mismatch', 'amount_mismatch', 'amount_mismatch'] },
    });
    expect((await row(body.order_uuid)).charge_status).toBe('PENDING');
    const recorded = await t.db.query<{ outcome: string; detail: string }>(
      `select outcome, detail from payments.psp_payments where end_to_end_id = any($1) order by amount`,
      [[zero.endToEndId, cent.endToEndId, huge.endToEndId]],
    );
    expect(recorded.rows.map((r) => r.outcome)).toEqual([
      'amount_mismatch',
      'amount_mismatch',
      'amount_mismatch',
    ]);
    expect(recorded.rows[1]?.detail).toMatch(/received 1$/);
  });

  it('refunds a payment the PSP reports for a day after the last payable date; the charge stays PENDING', async () => {
    const who = identity('live');
    const body = dueDateCharge(terms({ days_after_due: 0 }));
    const charge = await create(who, body);
    const last = lastPayableDate(body.due_date, calendar);
    const endToEndId = t.psp.newEndToEndId();
    const delivery = await t.psp.notify(
      {
        pix: [
          {
            endToEndId,
            txid: charge.txid,
            valor: '950.00',
            horario: `${addDays(last, 1)}T15:00:00.000Z`,
          },
        ],
      },
      webhook(),
    );
    expect(delivery.status).toBe(200);
    expect(JSON.parse(delivery.body)).toMatchObject({ data: { outcomes: ['late'] } });
    expect((await row(body.order_uuid)).charge_status).toBe('PENDING');
    // Given back to the payer at the PSP that reported it.
    await waitFor(
      () =>
        t.psp.requests.some((r) => r.method === 'PUT' && r.path.startsWith(`/pix/${endToEndId}/devolucao/`)),
      { what: 'refund of the late payment asked' },
    );
    const recorded = await t.db.query(
      `select outcome, detail from payments.psp_payments where end_to_end_id = $1`,
      [endToEndId],
    );
    expect(recorded.rows[0]).toMatchObject({
      outcome: expect.stringMatching(/^(late|refunded)$/),
      detail: `paid on ${addDays(last, 1)}, after the last payable date ${last}`,
    });
  });

  it('removes the charge at the PSP when cancelled; a PSP outage or a charge paid there leave it PENDING', async () => {
    const who = identity('live');
    const outage = dueDateCharge();
    const outageCharge = await create(who, outage);
    t.psp.failNext(503, 1, 'PATCH');
    const unavailable = await act(who, outage.order_uuid, 'cancel');
    expect(unavailable.status).toBe(503);
    expect(unavailable.body).toMatchObject({ code: 'service_unavailable' });
    expect((await row(outage.order_uuid)).charge_status).toBe('PENDING');
    expect(t.psp.cobvs.get(outageCharge.txid)?.status).toBe('ATIVA');

    const cancelled = await act(who, outage.order_uuid, 'cancel');
    expect(cancelled.status).toBe(200);
    expect(ChargeState.parse(cancelled.body.data).status).toBe('CANCELLED');
    expect(t.psp.cobvs.get(outageCharge.txid)?.status).toBe('REMOVIDA_PELO_USUARIO_RECEBEDOR');
    const patches = t.psp.requests.filter((r) => r.method === 'PATCH' && r.path.endsWith(outageCharge.txid));
    expect(JSON.parse(patches[patches.length - 1]?.body ?? '{}')).toEqual({
      status: 'REMOVIDA_PELO_USUARIO_RECEBEDOR',
    });
    // Cancelled already: the state machine's 409, and the PSP is not asked again.
    const again = await act(who, outage.order_uuid, 'cancel');
    expect(again.status).toBe(409);
    expect(
      t.psp.requests.filter((r) => r.method === 'PATCH' && r.path.endsWith(outageCharge.txid)),
    ).toHaveLength(patches.length);

    // Paid at the PSP, its notification not here yet: not cancelled.
    const paidThere = dueDateCharge();
    const paidCharge = await create(who, paidThere);
    const cobv = t.psp.cobvs.get(paidCharge.txid);
    if (!cobv) throw new Error('no cobv');
    cobv.status = 'CONCLUIDA';
    const refused = await act(who, paidThere.order_uuid, 'cancel');
    expect(refused.status).toBe(409);
    expect(refused.body.message).toContain('already paid at the PSP');
    expect((await row(paidThere.order_uuid)).charge_status).toBe('PENDING');
  });
});
