import { randomUUID } from 'node:crypto';
import { OrderDetail, OrderEventData, PaymentApprovedData, PaymentRefundedData } from '@seller-api/contracts';
import { call } from '../support/system';
import { useSystem } from '../support/use-system';
import { waitFor } from '../support/wait';
import { createOrder, standaloneOrder } from '../orders/fixtures';

const t = useSystem({ seller: true });
let key: string;
let orderEvents: Awaited<ReturnType<typeof t.captureEvents>>;
let paymentEvents: Awaited<ReturnType<typeof t.captureEvents>>;

beforeAll(async () => {
  key = t.seller.key;
  orderEvents = await t.captureEvents('orders.events', 'order.*');
  paymentEvents = await t.captureEvents('payments.events', 'payment.*');
});

async function newOrder(overrides: Parameters<typeof standaloneOrder>[0] = {}, k = key) {
  const res = await createOrder(t.url, k, standaloneOrder(overrides));
  if (res.status !== 201) throw new Error(res.text);
  return (res.body.data as { uuid: string }).uuid;
}
const act = (uuid: string, path: string, body?: unknown, k = key) =>
  call(`${t.url}${path.replace(':uuid', uuid)}`, { method: 'POST', key: k, body });
const detail = async (uuid: string) =>
  OrderDetail.parse((await call(`${t.url}/sellers/orders/${uuid}/`, { key })).body.data);
const eventsFor = (uuid: string, name: string) =>
  orderEvents.messages.filter(
    (m) => m.routingKey === name && (m.payload.order as { uuid: string }).uuid === uuid,
  );

/** Waits for a marker event of the order, after which any event of an earlier change has arrived too. */
async function settled(uuid: string, name: string, count = 1) {
  await orderEvents.waitFor(
    (m) => m.routingKey === name && (m.payload.order as { uuid: string }).uuid === uuid,
    count,
    name,
  );
}

describe('payment confirmation', () => {
  it('pays a PENDING order: transaction APPROVED, payment.approved, then order.paid with its payload', async () => {
    const uuid = await newOrder();
    const res = await act(uuid, '/sandbox/orders/:uuid/pay/');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ message: expect.any(String) });
    const order = await detail(uuid);
    expect(order.payment.status).toBe('PAID');
    expect(order.timestamps.paid_at).toEqual(expect.any(String));
    await settled(uuid, 'order.paid');
    const paid = OrderEventData.parse(eventsFor(uuid, 'order.paid')[0]?.payload);
    expect(paid.order).toMatchObject({
      status: 'PAID',
      gross_amount: 15000,
      fee_amount: 599,
      net_amount: 14401,
      paid_at: order.timestamps.paid_at,
    });
    expect(paid.customer.tax_id).toBe('529.***.***-25');
    const [approved] = await paymentEvents.waitFor(
      (m) => m.routingKey === 'payment.approved' && (m.payload.order as { uuid: string }).uuid === uuid,
    );
    expect(PaymentApprovedData.parse(approved?.payload).transaction).toMatchObject({
      status: 'APPROVED',
      gross_amount: 15000,
      fee_amount: 599,
      net_amount: 14401,
    });
  });

  it('changes nothing the second time: no second order.paid', async () => {
    const uuid = await newOrder();
    await act(uuid, '/sandbox/orders/:uuid/pay/');
    expect((await act(uuid, '/sandbox/orders/:uuid/pay/')).status).toBe(200);
    // A later change of the same order is the marker: its event comes after any repeat would have.
    await act(uuid, '/sellers/orders/:uuid/refund/');
    await settled(uuid, 'order.refunded');
    expect(eventsFor(uuid, 'order.paid')).toHaveLength(1);
  });
});

describe('seller actions', () => {
  it('cancels a PENDING order and refuses every other move with 409 naming the status', async () => {
    const uuid = await newOrder();
    expect((await act(uuid, '/sellers/orders/:uuid/cancel/')).status).toBe(200);
    expect((await detail(uuid)).payment.status).toBe('CANCELED');
    await settled(uuid, 'order.cancelled');
    const again = await act(uuid, '/sellers/orders/:uuid/cancel/');
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({ code: 'conflict', message: expect.stringContaining('CANCELLED') });
    expect((await act(uuid, '/sellers/orders/:uuid/refund/')).status).toBe(409);
  });

  it('refunds a PAID order through the PSP: payment.refunded and order.refunded', async () => {
    const uuid = await newOrder();
    expect((await act(uuid, '/sellers/orders/:uuid/refund/')).body.message).toMatch(/PENDING/);
    await act(uuid, '/sandbox/orders/:uuid/pay/');
    expect((await act(uuid, '/sellers/orders/:uuid/cancel/')).body.message).toMatch(/PAID/);
    expect((await act(uuid, '/sellers/orders/:uuid/refund/')).status).toBe(200);
    expect((await detail(uuid)).payment.status).toBe('REFUNDED');
    await settled(uuid, 'order.refunded');
    const [refunded] = await paymentEvents.waitFor(
      (m) => m.routingKey === 'payment.refunded' && (m.payload.order as { uuid: string }).uuid === uuid,
    );
    expect(PaymentRefundedData.parse(refunded?.payload).transaction.status).toBe('REFUNDED');
  });

  it('answers 404 for an unknown order and 403 for another seller’s', async () => {
    expect((await act(randomUUID(), '/sellers/orders/:uuid/cancel/')).status).toBe(404);
    const uuid = await newOrder();
    const other = await t.newKey();
    expect((await act(uuid, '/sellers/orders/:uuid/cancel/', undefined, other.key)).status).toBe(403);
  });
});

describe('MED and chargeback', () => {
  it('opens a MED without an event, and a rejected MED goes back to PAID without a second order.paid', async () => {
    const uuid = await newOrder();
    await act(uuid, '/sandbox/orders/:uuid/pay/');
    expect((await act(uuid, '/sandbox/orders/:uuid/med/')).status).toBe(200);
    expect((await detail(uuid)).payment.status).toBe('MED');
    expect((await act(uuid, '/sandbox/orders/:uuid/med/resolve/', { outcome: 'rejected' })).status).toBe(200);
    expect((await detail(uuid)).payment.status).toBe('PAID');
    await act(uuid, '/sandbox/orders/:uuid/chargeback/');
    await settled(uuid, 'order.chargeback');
    expect(eventsFor(uuid, 'order.paid')).toHaveLength(1);
    expect((await detail(uuid)).payment.status).toBe('CHARGEBACK');
  });

  it('refunds through a MED decided for the payer', async () => {
    const uuid = await newOrder();
    await act(uuid, '/sandbox/orders/:uuid/pay/');
    await act(uuid, '/sandbox/orders/:uuid/med/');
    expect((await act(uuid, '/sandbox/orders/:uuid/med/resolve/', { outcome: 'refunded' })).status).toBe(200);
    await settled(uuid, 'order.refunded');
    expect((await detail(uuid)).payment.status).toBe('REFUNDED');
    expect((await act(uuid, '/sandbox/orders/:uuid/med/resolve/', { outcome: 'maybe' })).status).toBe(400);
  });

  it('keeps sandbox routes to test keys', async () => {
    const live = await t.newKey({ environment: 'live' });
    expect((await act(randomUUID(), '/sandbox/orders/:uuid/pay/', undefined, live.key)).status).toBe(403);
  });
});

describe('expiry', () => {
  it('expires an order past its expiration by the scheduler, with order.expired', async () => {
    const uuid = await newOrder({
      payment: { gross_amount: 100, expiration_date: new Date(Date.now() + 1_500).toISOString() },
    });
    await settled(uuid, 'order.expired');
    expect((await detail(uuid)).payment.status).toBe('EXPIRED');
  });

  it('refunds a payment that arrives after expiry; the order stays EXPIRED', async () => {
    const uuid = await newOrder();
    await act(uuid, '/sandbox/orders/:uuid/expire/');
    expect((await act(uuid, '/sandbox/orders/:uuid/pay/')).status).toBe(200);
    expect((await detail(uuid)).payment.status).toBe('EXPIRED');
    const rows = await t.system.payments.runtime.orm.em
      .fork()
      .execute<Array<{ outcome: string }>>(
        `select p.outcome from payments.psp_payments p join payments.transactions t on t.id = p.transaction_id where t.order_id = ?`,
        [uuid],
      );
    expect(rows.map((r) => r.outcome)).toEqual(['refunded']);
    expect(eventsFor(uuid, 'order.paid')).toEqual([]);
  });

  it('decides a payment racing an expiry in the database: exactly one wins, every time', async () => {
    const uuids = await Promise.all(Array.from({ length: 8 }, () => newOrder()));
    await Promise.all(
      uuids.flatMap((uuid) => [
        act(uuid, '/sandbox/orders/:uuid/pay/'),
        act(uuid, '/sandbox/orders/:uuid/expire/'),
      ]),
    );
    for (const uuid of uuids) {
      const final = (await detail(uuid)).payment.status;
      expect(['PAID', 'EXPIRED']).toContain(final);
      await settled(uuid, final === 'PAID' ? 'order.paid' : 'order.expired');
      expect(eventsFor(uuid, 'order.paid').length + eventsFor(uuid, 'order.expired').length).toBe(1);
    }
  });

  // Last in the file: it stops this system's payments instance.
  it('catches up after downtime: a payments instance that starts later expires what fell due', async () => {
    const expiresAt = Date.now() + 1_500;
    const uuid = await newOrder({
      payment: { gross_amount: 100, expiration_date: new Date(expiresAt).toISOString() },
    });
    await t.system.payments.stop();
    await waitFor(() => Date.now() > expiresAt + 300, { timeoutMs: 5_000, what: 'the expiry time to pass' });
    expect((await detail(uuid)).payment.status).toBe('PENDING');
    await t.system.startPaymentsReplica();
    await settled(uuid, 'order.expired');
    expect((await detail(uuid)).payment.status).toBe('EXPIRED');
  });
});
