import { HttpError } from '@seller-api/service-kit';
import type { OrderItemRow, OrderRow } from '../db/entities';
import { applyTracking, trackingEvents } from './tracking';

const ORDER_ID = '7d5c7069-1b2a-4c3d-8e9f-0a1b2c3d4e5f';
const EARLIER = new Date('2026-06-14T10:00:00.000Z');
const NOW = new Date('2026-06-15T12:00:00.000Z');

const order = (): OrderRow => ({
  id: ORDER_ID,
  sellerId: '0b7e8a52-6c1d-4f3e-9a2b-1c2d3e4f5a6b',
  environment: 'test',
  sellerName: 'Loja',
  customerId: '5f1e2d3c-4b5a-4697-8877-665544332211',
  customerName: 'Maria',
  customerEmail: 'maria@example.com',
  customerPhone: '11999999999',
  customerTaxId: '52998224725',
  customerTaxIdType: 'CPF',
  address: null,
  addressText: null,
  status: 'PAID',
  method: 'PIX',
  subtotalAmount: 10000,
  shippingAmount: 0,
  discountAmount: 0,
  commissionAmount: 0,
  grossAmount: 10000,
  feeAmount: 100,
  netAmount: 9900,
  postbackUrl: 'https://example.com/postback',
  affiliateName: null,
  producerName: null,
  debtorName: null,
  debtorDocument: null,
  transactionId: '9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
  pixTxid: 'txid',
  pixCopyAndPaste: '000201',
  pixQrCodeImageBase64: null,
  expiresAt: NOW,
  createdAt: EARLIER,
  paidAt: EARLIER,
  trackingCode: null,
  shippingStatus: 'AWAITING_SHIPMENT',
  estimatedDeliveryDate: null,
  deliveredAt: null,
  signedBy: null,
  chargeVersion: 1,
  refundStatus: null,
  refundAttempt: null,
  refundAmount: null,
  refundRequestedAt: null,
  refundUpdatedAt: null,
  refundFailureReason: null,
  dueDateTerms: null,
  effectiveDueDate: null,
  lastPayableDate: null,
  overdueNotifiedAt: null,
  amountPaid: null,
});

const item = (position: number, overrides: Partial<OrderItemRow> = {}): OrderItemRow => ({
  id: `1c2d3e4f-5a6b-4c7d-8e9f-00000000000${position}`,
  orderId: ORDER_ID,
  position,
  productId: `2d3e4f5a-6b7c-4d8e-9f0a-00000000000${position}`,
  productType: 'PHYSICAL',
  name: `Item ${position}`,
  images: [],
  price: 5000,
  quantity: 1,
  lineTotalAmount: 5000,
  commissionUnitAmount: 0,
  commissionTotalAmount: 0,
  trackingCode: null,
  shippingStatus: 'AWAITING_SHIPMENT',
  shippedAt: null,
  deliveredAt: null,
  ...overrides,
});

describe('applyTracking', () => {
  it('ships every item with the code, and copies the first item to the order', () => {
    const o = order();
    const items = [item(0), item(1)];
    const changes = applyTracking(o, items, { tracking_code: 'BR123', shipping_status: 'SHIPPED' }, NOW);
    expect(changes.map((c) => c.events)).toEqual([['order_item.shipped'], ['order_item.shipped']]);
    expect(items.map((i) => [i.trackingCode, i.shippingStatus, i.shippedAt])).toEqual([
      ['BR123', 'SHIPPED', NOW],
      ['BR123', 'SHIPPED', NOW],
    ]);
    expect(o).toMatchObject({ trackingCode: 'BR123', shippingStatus: 'SHIPPED', deliveredAt: null });
  });

  it('emits nothing when a shipped item is sent the same code again', () => {
    const items = [item(0, { trackingCode: 'BR123', shippingStatus: 'SHIPPED', shippedAt: EARLIER })];
    const changes = applyTracking(
      order(),
      items,
      { tracking_code: 'BR123', shipping_status: 'SHIPPED' },
      NOW,
    );
    expect(changes.map((c) => c.events)).toEqual([[]]);
    expect(items[0]?.shippedAt).toBe(EARLIER);
  });

  it('needs a code to ship: SHIPPED without one emits nothing', () => {
    const changes = applyTracking(order(), [item(0)], { shipping_status: 'SHIPPED' }, NOW);
    expect(changes.map((c) => c.events)).toEqual([[]]);
  });

  it('delivers once: the first DELIVERED fills the dates, a second keeps them', () => {
    const o = order();
    const items = [item(0, { trackingCode: 'BR123', shippingStatus: 'SHIPPED', shippedAt: EARLIER })];
    const first = applyTracking(o, items, { shipping_status: 'DELIVERED', signed_by: 'João' }, EARLIER);
    expect(first.map((c) => c.events)).toEqual([['order_item.delivered']]);
    const again = applyTracking(o, items, { shipping_status: 'DELIVERED' }, NOW);
    expect(again.map((c) => c.events)).toEqual([[]]);
    expect(items[0]?.deliveredAt).toBe(EARLIER);
    expect(o).toMatchObject({ deliveredAt: EARLIER, signedBy: 'João', shippingStatus: 'DELIVERED' });
  });

  it('keeps the item status when only the estimated delivery date is sent', () => {
    const o = order();
    const items = [item(0)];
    applyTracking(o, items, { estimated_delivery_date: '2026-06-20' }, NOW);
    expect(items[0]?.shippingStatus).toBe('AWAITING_SHIPMENT');
    expect(o.estimatedDeliveryDate).toBe('2026-06-20');
  });

  it('refuses an order without items', () => {
    let thrown: unknown;
    try {
      applyTracking(order(), [], { tracking_code: 'BR123' }, NOW);
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(HttpError);
    expect(thrown).toMatchObject({ status: 400, message: 'This order has no items to track.' });
  });
});

describe('trackingEvents', () => {
  it('makes one message per event, item by item, with the order headers', () => {
    const o = order();
    const items = [item(0), item(1, { trackingCode: 'OLD', shippingStatus: 'SHIPPED', shippedAt: EARLIER })];
    const changes = applyTracking(o, items, { tracking_code: 'OLD', shipping_status: 'DELIVERED' }, NOW);
    const messages = trackingEvents(o, changes);
    expect(messages.map((m) => [m.exchange, m.routingKey])).toEqual([
      ['orders.events', 'order_item.delivered'],
      ['orders.events', 'order_item.delivered'],
    ]);
    expect(messages[1]?.payload).toMatchObject({
      order: { uuid: ORDER_ID },
      item: { product_name: 'Item 1', tracking_code: 'OLD', delivered_at: NOW.toISOString() },
    });
    expect(messages[0]?.headers).toMatchObject({
      'x-order-uuid': ORDER_ID,
      'x-postback-url': 'https://example.com/postback',
    });
  });
});
