import { randomUUID } from 'node:crypto';
import amqp from 'amqplib';
import {
  CreatedOrder,
  OrderDetail,
  type ChargeRefund,
  type ChargeState,
  type OrderStatus,
} from '@seller-api/contracts';
import { applyChargeState } from '../../services/orders/src/db/charge-mirror';
import { call } from '../support/system';
import { useSystem } from '../support/use-system';
import { waitFor } from '../support/wait';
import { createOrder, standaloneOrder } from './fixtures';

/*
 * Orders mirror where a refund stands at the PSP (docs/orders.md, "Refund an order"): payments
 * publishes every change of the refund as a new version of the charge's state, on
 * `internal.charge.<status>`; a refund in progress or failed keeps the status (PAID). These tests
 * publish those messages as payments does, on its exchange, and read the order detail.
 */

const t = useSystem({ seller: true });
let key: string;
let sellerId: string;
let orderEvents: Awaited<ReturnType<typeof t.captureEvents>>;
let connection: amqp.ChannelModel;
let channel: amqp.ConfirmChannel;

beforeAll(async () => {
  ({ key, sellerId } = t.seller);
  orderEvents = await t.captureEvents('orders.events', 'order.*');
  connection = await amqp.connect(t.env.AMQP_URL as string);
  t.cleanup(() => connection.close());
  channel = await connection.createConfirmChannel();
});

const ordersDb = () => t.system.orders.runtime.orm.em.fork();

/** A test order paid in the sandbox, and the version of its charge state the order shows. */
async function paidOrder(): Promise<{ uuid: string; version: number }> {
  const res = await createOrder(t.url, key, standaloneOrder());
  if (res.status !== 201) throw new Error(`order: ${res.status} ${res.text}`);
  const { uuid } = CreatedOrder.parse(res.body.data);
  const paid = await call(`${t.url}/sandbox/orders/${uuid}/pay/`, { method: 'POST', key });
  if (paid.status !== 200) throw new Error(`pay: ${paid.status} ${paid.text}`);
  const [row] = await ordersDb().execute<Array<{ charge_version: number; status: string }>>(
    `select charge_version, status from orders.orders where id = ?`,
    [uuid],
  );
  if (row?.status !== 'PAID') throw new Error(`the order is ${row?.status}, not PAID`);
  return { uuid, version: row.charge_version };
}

const detail = async (uuid: string) =>
  OrderDetail.parse((await call(`${t.url}/sellers/orders/${uuid}/`, { key })).body.data).payment;

const REQUESTED_1 = '2026-06-15T12:05:00.000Z';
const REQUESTED_2 = '2026-06-16T09:00:00.000Z';
const REASON = 'Conta do pagador encerrada';

const refund = (overrides: Partial<ChargeRefund>): ChargeRefund => ({
  status: 'PROCESSING',
  attempt: 1,
  amount: 15000,
  requested_at: REQUESTED_1,
  updated_at: REQUESTED_1,
  failure_reason: null,
  hold_seq: 0,
  ...overrides,
});

/** The charge state payments publishes for a version of the order's money state. */
const chargeState = (
  uuid: string,
  version: number,
  status: OrderStatus,
  refundState: ChargeRefund | null | undefined,
): ChargeState => ({
  order_uuid: uuid,
  status,
  previous_status: 'PAID',
  version,
  paid_at: '2026-06-15T12:00:00.000Z',
  changed_at: refundState?.updated_at ?? new Date().toISOString(),
  ...(refundState === undefined ? {} : { refund: refundState }),
});

/**
 * Publishes `state` on payments' exchange as `internal.charge.<status>`, with the headers payments
 * sets, and waits until orders has consumed it (its id among orders' processed messages).
 */
async function publish(state: ChargeState): Promise<void> {
  const messageId = randomUUID();
  await send(state, messageId);
  await consumed([messageId], `orders to consume version ${state.version}`);
}

/** Publishes `state` as payments does, under `messageId`, without waiting for orders. */
async function send(state: ChargeState, messageId: string): Promise<void> {
  await new Promise<void>((resolve, reject) =>
    channel.publish(
      `${t.env.AMQP_NAMESPACE}payments.events`,
      `internal.charge.${state.status.toLowerCase()}`,
      Buffer.from(JSON.stringify(state)),
      {
        messageId,
        headers: { 'x-seller-id': sellerId, 'x-environment': 'test', 'x-order-uuid': state.order_uuid },
        contentType: 'application/json',
        persistent: true,
      },
      (err) => (err ? reject(err) : resolve()),
    ),
  );
}

/** Waits until orders has consumed every message id (among its processed messages). */
async function consumed(messageIds: string[], what: string): Promise<void> {
  await waitFor(
    async () => {
      const [row] = await ordersDb().execute<Array<{ n: string }>>(
        `select count(*) as n from orders.processed_messages where message_id = any(?::text[])`,
        [`{${messageIds.join(',')}}`],
      );
      return Number(row?.n) === new Set(messageIds).size;
    },
    { what },
  );
}

/** order.refunded of the order: published, or still in orders' outbox (written with the change). */
async function orderRefundedEvents(uuid: string): Promise<number> {
  // Distinct ids, published or still in the outbox: the relay deletes a row after its message is
  // published, so one message may be seen in both places for a moment.
  const published = orderEvents.messages
    .filter((m) => m.routingKey === 'order.refunded' && m.headers['x-order-uuid'] === uuid)
    .map((m) => m.messageId);
  const pending = await ordersDb().execute<Array<{ id: string }>>(
    `select id from orders.outbox where routing_key = 'order.refunded' and headers->>'x-order-uuid' = ?`,
    [uuid],
  );
  return new Set([...published, ...pending.map((row) => row.id)]).size;
}

describe('the refund of an order, as payments reports it', () => {
  it('in progress, failed with the reason, asked again and made: PAID until the PSP confirms', async () => {
    const { uuid, version } = await paidOrder();
    expect((await detail(uuid)).refund).toBeNull();

    await publish(chargeState(uuid, version + 1, 'PAID', refund({ status: 'PROCESSING' })));
    expect(await detail(uuid)).toMatchObject({
      status: 'PAID',
      refund: {
        status: 'PROCESSING',
        amount: 15000,
        requested_at: REQUESTED_1,
        updated_at: REQUESTED_1,
        failure_reason: null,
      },
    });

    const failedAt = '2026-06-15T12:07:30.000Z';
    await publish(
      chargeState(
        uuid,
        version + 2,
        'PAID',
        refund({ status: 'FAILED', updated_at: failedAt, failure_reason: REASON }),
      ),
    );
    expect(await detail(uuid)).toMatchObject({
      status: 'PAID',
      refund: { status: 'FAILED', requested_at: REQUESTED_1, updated_at: failedAt, failure_reason: REASON },
    });
    // The order list shows the status only: still PAID.
    const list = await call(`${t.url}/sellers/orders/?status=PAID`, { key });
    expect(JSON.stringify(list.body)).toContain(uuid);

    const second = { attempt: 2, requested_at: REQUESTED_2, updated_at: REQUESTED_2 };
    await publish(chargeState(uuid, version + 3, 'PAID', refund({ ...second, status: 'PROCESSING' })));
    expect(await detail(uuid)).toMatchObject({
      status: 'PAID',
      refund: { status: 'PROCESSING', requested_at: REQUESTED_2, failure_reason: null },
    });
    expect(await orderRefundedEvents(uuid)).toBe(0);

    const madeAt = '2026-06-16T09:00:04.000Z';
    await publish(
      chargeState(
        uuid,
        version + 4,
        'REFUNDED',
        refund({ ...second, status: 'REFUNDED', updated_at: madeAt }),
      ),
    );
    expect(await detail(uuid)).toEqual(
      expect.objectContaining({
        status: 'REFUNDED',
        refund: {
          status: 'REFUNDED',
          amount: 15000,
          requested_at: REQUESTED_2,
          updated_at: madeAt,
          failure_reason: null,
        },
      }),
    );
    await orderEvents.waitFor(
      (m) => m.routingKey === 'order.refunded' && m.headers['x-order-uuid'] === uuid,
      1,
      'order.refunded',
    );
  });

  it('late and repeated reports change nothing: only a newer version applies', async () => {
    const { uuid, version } = await paidOrder();
    const failed = refund({
      status: 'FAILED',
      updated_at: '2026-06-15T12:06:00.000Z',
      failure_reason: REASON,
    });
    // The failure arrives before the report that the refund was in progress.
    await publish(chargeState(uuid, version + 2, 'PAID', failed));
    await publish(chargeState(uuid, version + 1, 'PAID', refund({ status: 'PROCESSING' })));
    expect((await detail(uuid)).refund).toMatchObject({ status: 'FAILED', failure_reason: REASON });

    // The second attempt is made; its PROCESSING report comes after, and the completion twice.
    const second = { attempt: 2, requested_at: REQUESTED_2, updated_at: '2026-06-16T09:00:04.000Z' };
    const made = chargeState(uuid, version + 4, 'REFUNDED', refund({ ...second, status: 'REFUNDED' }));
    await publish(made);
    await publish(chargeState(uuid, version + 3, 'PAID', refund({ ...second, status: 'PROCESSING' })));
    await publish(made);
    expect(await detail(uuid)).toMatchObject({
      status: 'REFUNDED',
      refund: { status: 'REFUNDED', requested_at: REQUESTED_2, failure_reason: null },
    });
    // One order.refunded, not one per report.
    await orderEvents.waitFor(
      (m) => m.routingKey === 'order.refunded' && m.headers['x-order-uuid'] === uuid,
      1,
      'order.refunded',
    );
    expect(await orderRefundedEvents(uuid)).toBe(1);
  });

  it('a state without a refund (a payments of an earlier release) keeps the stored refund', async () => {
    const { uuid, version } = await paidOrder();
    const failedAt = '2026-06-15T12:07:30.000Z';
    await publish(
      chargeState(
        uuid,
        version + 1,
        'PAID',
        refund({ status: 'FAILED', updated_at: failedAt, failure_reason: null }),
      ),
    );
    await publish(chargeState(uuid, version + 2, 'PAID', undefined));
    await publish(chargeState(uuid, version + 3, 'PAID', null));
    expect(await detail(uuid)).toMatchObject({
      status: 'PAID',
      refund: { status: 'FAILED', updated_at: failedAt, failure_reason: null },
    });
  });

  it('the action answer and the message that follows it apply once, whichever comes first', async () => {
    const { uuid, version } = await paidOrder();
    const state = chargeState(uuid, version + 1, 'PAID', refund({ status: 'PROCESSING' }));
    // As the refund route mirrors payments' answer (http/charge-action-routes.ts).
    expect(await applyChargeState(t.system.orders.runtime.sql, state)).toBe(true);
    expect(await applyChargeState(t.system.orders.runtime.sql, state)).toBe(false);
    await publish(state);
    const [row] = await ordersDb().execute<Array<{ charge_version: number; refund_attempt: number }>>(
      `select charge_version, refund_attempt from orders.orders where id = ?`,
      [uuid],
    );
    expect(row).toEqual({ charge_version: version + 1, refund_attempt: 1 });
    expect((await detail(uuid)).refund?.status).toBe('PROCESSING');
  });
  it('a burst in one batch: states the order holds are only recorded, a newer one applies once', async () => {
    const { uuid, version } = await paidOrder();
    const made = refund({ status: 'REFUNDED', requested_at: REQUESTED_1, updated_at: REQUESTED_2 });
    const newer = chargeState(uuid, version + 1, 'REFUNDED', made);
    const twice = randomUUID();
    const burst: Array<[ChargeState, string]> = [
      ...Array.from({ length: 10 }, (): [ChargeState, string] => [
        chargeState(uuid, version, 'PAID', null),
        randomUUID(),
      ]),
      [newer, twice],
      [newer, twice],
      [newer, randomUUID()],
      [chargeState(uuid, version - 1, 'PENDING', undefined), randomUUID()],
    ];
    // Sent back to back without waiting: the consumer meets them in batches.
    await Promise.all(burst.map(([state, id]) => send(state, id)));
    await consumed(
      burst.map(([, id]) => id),
      'orders to consume the burst',
    );
    expect(await detail(uuid)).toEqual(
      expect.objectContaining({
        status: 'REFUNDED',
        refund: expect.objectContaining({ status: 'REFUNDED' }),
      }),
    );
    expect(await orderRefundedEvents(uuid)).toBe(1);
  });
  it('order.paid, written by the mirror, says of the order what order.created said', async () => {
    const { uuid } = await paidOrder();
    const ofOrder = (name: string) =>
      orderEvents.waitFor((m) => m.routingKey === name && m.headers['x-order-uuid'] === uuid, 1, name);
    const [[created], [paid]] = await Promise.all([ofOrder('order.created'), ofOrder('order.paid')]);
    const createdData = created?.payload as Record<string, Record<string, unknown>>;
    const paidData = paid?.payload as Record<string, Record<string, unknown>>;
    expect(paidData.items).toEqual(createdData.items);
    expect(paidData.seller).toEqual(createdData.seller);
    expect(paidData.customer).toEqual(createdData.customer);
    const gross = createdData.order?.gross_amount as number;
    expect(paidData.order).toEqual({
      ...createdData.order,
      status: 'PAID',
      paid_at: expect.any(String),
      // An immediate charge pays its amount, with no due-date components (docs/pix.md).
      amount_paid: {
        amount: gross,
        date: expect.any(String),
        components: { original: gross, rebate: 0, discount: 0, fine: 0, interest: 0 },
      },
    });
    expect(paid?.headers).toMatchObject({ 'x-seller-id': sellerId, 'x-environment': 'test' });
  });

  it('the same newer state mirrored ten times at once applies once, with one event', async () => {
    const { uuid, version } = await paidOrder();
    const made = refund({ status: 'REFUNDED', requested_at: REQUESTED_1, updated_at: REQUESTED_2 });
    const state = chargeState(uuid, version + 1, 'REFUNDED', made);
    const applied = await Promise.all(
      Array.from({ length: 10 }, () => applyChargeState(t.system.orders.runtime.sql, state)),
    );
    expect(applied.filter(Boolean)).toHaveLength(1);
    expect(await orderRefundedEvents(uuid)).toBe(1);
    expect((await detail(uuid)).status).toBe('REFUNDED');
  });
});
