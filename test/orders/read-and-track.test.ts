import { randomUUID } from 'node:crypto';
import {
  CreatedOrder,
  OrderDetail,
  OrderItemDeliveredData,
  OrderItemShippedData,
} from '@seller-api/contracts';
import { captureEvents } from '../support/events';
import { call } from '../support/system';
import { useSystem } from '../support/use-system';
import { address, createOrder, createProduct, customer, standaloneOrder } from './fixtures';

const t = useSystem({ seller: true });
let key: string;
beforeAll(() => {
  key = t.seller.key;
});

async function physicalOrder(k = key, quantityA = 2) {
  const a = await createProduct(t.url, k, {
    name: 'Camiseta',
    price: 5000,
    commission_unit_amount: 500,
    producer_name: 'Produtora X',
  });
  const b = await createProduct(t.url, k, {
    name: 'Boné',
    price: 3000,
    commission_unit_amount: 0,
    producer_name: null,
    images: [],
  });
  const res = await createOrder(t.url, k, {
    customer: customer({ address: address({ complement: 'Bloco B' }) }),
    items: [
      { product_uuid: a, quantity: quantityA },
      { product_uuid: b, quantity: 1 },
    ],
    payment: { shipping_amount: 1000, discount_amount: 0 },
  });
  return { order: CreatedOrder.parse(res.body.data), a, b };
}
const read = (uuid: string, k = key) => call(`${t.url}/sellers/orders/${uuid}/`, { key: k });
const track = (uuid: string, body: unknown, k = key) =>
  call(`${t.url}/sellers/orders/${uuid}/tracking/`, { method: 'PATCH', key: k, body });

describe('order detail', () => {
  it('shows every documented field with its type, the documented fee and no internal ids', async () => {
    const { order, a, b } = await physicalOrder();
    const res = await read(order.uuid);
    expect(res.status).toBe(200);
    const data = OrderDetail.strict().parse(res.body.data);
    expect(data.items).toEqual([
      {
        uuid: a,
        name: 'Camiseta',
        images: ['https://cdn.example.com/a.png'],
        price: 5000,
        quantity: 2,
        line_total_amount: 10000,
        commission_unit_amount: 500,
        commission_total_amount: 1000,
        tracking_code: null,
        shipping_status: 'AWAITING_SHIPMENT',
      },
      expect.objectContaining({ uuid: b, images: [], commission_total_amount: 0 }),
    ]);
    expect(data.customer).toEqual({
      name: 'Maria Silva',
      tax_id: '52998224725',
      tax_id_type: 'CPF',
      email: 'maria.silva@example.com',
      phone: '+5511999990000',
      address: 'Rua das Flores, 123 - Bloco B, Centro, São Paulo, SP, 01001-000, BR',
    });
    // 14000 gross: round(14000 * 399 / 10000) = 559 (rounded half up from 558.6).
    expect(data.payment).toMatchObject({
      subtotal_amount: 13000,
      shipping_amount: 1000,
      discount_amount: 0,
      commission_amount: 1000,
      gross_amount: 14000,
      fee_amount: 559,
      net_amount: 13441,
      method: 'PIX',
      status: 'PENDING',
      // Sent, not defaulted by the schema: null until a refund is asked.
      refund: null,
    });
    expect(res.body.data).toHaveProperty('payment.refund', null);
    expect(data.parties).toEqual({ producer: { name: 'Produtora X' }, seller: { name: expect.any(String) } });
    expect(data.timestamps).toEqual({
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      paid_at: null,
    });
    expect(data.delivery).toEqual({ estimated_delivery_date: null, delivered_at: null, signed_by: null });
    expect(JSON.stringify(res.body)).not.toMatch(/seller_id|customer_id|transaction_id/);
  });

  it('omits parties without data and shows the affiliate only when the order came through one', async () => {
    const plain = CreatedOrder.parse((await createOrder(t.url, key, standaloneOrder())).body.data);
    expect(OrderDetail.parse((await read(plain.uuid)).body.data).parties).toEqual({
      seller: { name: expect.any(String) },
    });

    const code = `promo-${randomUUID().slice(0, 8)}`;
    expect(
      (
        await call(`${t.url}/sellers/affiliates/`, {
          method: 'POST',
          key,
          body: { code, name: 'Joana Afiliada' },
        })
      ).status,
    ).toBe(201);
    const via = CreatedOrder.parse(
      (await createOrder(t.url, key, standaloneOrder({ affiliate_code: code }))).body.data,
    );
    expect(OrderDetail.parse((await read(via.uuid)).body.data).parties.affiliate).toEqual({
      name: 'Joana Afiliada',
    });
    const unknown = await createOrder(t.url, key, standaloneOrder({ affiliate_code: 'nobody' }));
    expect(unknown.body.data).toEqual({ affiliate_code: [expect.any(String)] });
  });

  it('answers 403 for another seller’s order, 404 for another environment’s or an unknown one, 400 for a malformed id', async () => {
    const { order } = await physicalOrder();
    const stranger = await t.newKey();
    expect((await read(order.uuid, stranger.key)).status).toBe(403);
    const live = await t.newKey({ environment: 'live' });
    const liveRes = await read(order.uuid, live.key);
    expect(liveRes.status).toBe(404);
    expect(liveRes.body).toMatchObject({
      code: 'not_found',
      message: expect.stringMatching(/order not found/i),
    });
    expect((await read(randomUUID())).status).toBe(404);
    expect((await read('not-a-uuid')).status).toBe(400);
  });
});

describe('tracking update', () => {
  it('answers 400 with non_field_errors when no field is sent, 404 for an unknown order', async () => {
    const { order } = await physicalOrder();
    const empty = await track(order.uuid, {});
    expect(empty.status).toBe(400);
    expect(empty.body.data).toEqual({ non_field_errors: [expect.any(String)] });
    expect((await track(randomUUID(), { tracking_code: 'BR1' })).status).toBe(404);
    expect((await track(order.uuid, { shipping_status: 'FLYING' })).body.data).toHaveProperty([
      'shipping_status',
    ]);
  });

  it('applies code and status to every item, emits order_item.shipped once per item and not again for the same update', async () => {
    const events = await captureEvents(
      t.env.AMQP_URL as string,
      t.env.AMQP_NAMESPACE as string,
      'orders.events',
      'order_item.*',
    );
    try {
      const { order, a, b } = await physicalOrder();
      const res = await track(order.uuid, { tracking_code: 'BR123456789BR', shipping_status: 'SHIPPED' });
      expect(res.status).toBe(200);
      expect(res.body).toEqual({ message: expect.any(String) });
      const detail = OrderDetail.parse((await read(order.uuid)).body.data);
      for (const item of detail.items)
        expect(item).toMatchObject({ tracking_code: 'BR123456789BR', shipping_status: 'SHIPPED' });

      const shipped = await events.waitFor(
        (m) =>
          m.routingKey === 'order_item.shipped' && (m.payload.order as { uuid: string }).uuid === order.uuid,
        2,
      );
      const payloads = shipped.map((m) => OrderItemShippedData.parse(m.payload));
      expect(payloads.map((p) => p.item.product_uuid).sort()).toEqual([a, b].sort());
      expect(payloads[0]).toMatchObject({
        order: { uuid: order.uuid, status: 'PENDING' },
        item: { shipping_status: 'SHIPPED', tracking_code: 'BR123456789BR', delivered_at: null },
      });

      await track(order.uuid, { tracking_code: 'BR123456789BR', shipping_status: 'SHIPPED' });
      // A marker update afterwards: once its events arrive, any repeat of the first would have too.
      await track(order.uuid, { shipping_status: 'DELIVERED', signed_by: 'João' });
      await events.waitFor(
        (m) =>
          m.routingKey === 'order_item.delivered' &&
          (m.payload.order as { uuid: string }).uuid === order.uuid,
        2,
      );
      const forOrder = events.messages.filter(
        (m) => (m.payload.order as { uuid: string }).uuid === order.uuid,
      );
      expect(forOrder.filter((m) => m.routingKey === 'order_item.shipped')).toHaveLength(2);
    } finally {
      await events.close();
    }
  });

  it('fills delivered_at on the first DELIVERED, keeps it after, shows signed_by and the estimated date', async () => {
    const events = await captureEvents(
      t.env.AMQP_URL as string,
      t.env.AMQP_NAMESPACE as string,
      'orders.events',
      'order_item.delivered',
    );
    try {
      const { order } = await physicalOrder();
      expect((await track(order.uuid, { estimated_delivery_date: '2026-12-24' })).status).toBe(200);
      await track(order.uuid, { shipping_status: 'DELIVERED', signed_by: 'João da Silva' });
      const first = OrderDetail.parse((await read(order.uuid)).body.data);
      expect(first.delivery).toMatchObject({
        estimated_delivery_date: '2026-12-24',
        signed_by: 'João da Silva',
        delivered_at: expect.any(String),
      });
      const delivered = await events.waitFor(
        (m) => (m.payload.order as { uuid: string }).uuid === order.uuid,
        2,
      );
      expect(OrderItemDeliveredData.parse(delivered[0]?.payload).item).toMatchObject({
        shipping_status: 'DELIVERED',
        tracking_code: null,
        shipped_at: null,
      });

      await track(order.uuid, { shipping_status: 'RETURNED' });
      await track(order.uuid, { shipping_status: 'DELIVERED' });
      const later = OrderDetail.parse((await read(order.uuid)).body.data);
      expect(later.delivery.delivered_at).toBe(first.delivery.delivered_at);
      await track(order.uuid, { signed_by: null });
      expect(OrderDetail.parse((await read(order.uuid)).body.data).delivery.signed_by).toBeNull();
    } finally {
      await events.close();
    }
  });

  it('refuses a tracking update on an order without items, and another seller’s order', async () => {
    const plain = CreatedOrder.parse((await createOrder(t.url, key, standaloneOrder())).body.data);
    const res = await track(plain.uuid, { tracking_code: 'X' });
    expect(res.status).toBe(400);
    expect(res.body.data).toEqual({ non_field_errors: [expect.any(String)] });
    const stranger = await t.newKey();
    expect((await track(plain.uuid, { tracking_code: 'X' }, stranger.key)).status).toBe(403);
  });
});
