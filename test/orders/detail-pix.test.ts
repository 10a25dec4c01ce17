import { CreatedOrder, OrderDetail, type PixCharge } from '@seller-api/contracts';
import { decodeQrPng } from '../support/pix';
import { call } from '../support/system';
import { useSystem } from '../support/use-system';
import { createOrder, standaloneOrder } from './fixtures';

/*
 * The order detail shows the order's PIX charge while it can be paid, as the create answer gave it
 * (docs/orders.md, "Read an order"; docs/pix.md, "The charge of an order"), and null otherwise.
 */

const t = useSystem({ seller: true });
let key: string;
beforeAll(() => {
  key = t.seller.key;
});

async function newOrder(): Promise<CreatedOrder> {
  const res = await createOrder(t.url, key, standaloneOrder());
  if (res.status !== 201) throw new Error(`order: ${res.status} ${res.text}`);
  return CreatedOrder.parse(res.body.data);
}

async function detail(uuid: string): Promise<OrderDetail> {
  const res = await call(`${t.url}/sellers/orders/${uuid}/`, { key });
  expect(res.status).toBe(200);
  // Sent by orders, never filled in by the schema's default.
  expect(res.body.data).toHaveProperty('pix');
  return OrderDetail.strict().parse(res.body.data);
}

async function act(uuid: string, path: string): Promise<void> {
  const res = await call(`${t.url}${path.replace(':uuid', uuid)}`, { method: 'POST', key });
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${res.text}`);
}

describe('order detail: pix', () => {
  it('shows a PENDING order the same charge, BR Code and QR image as the create answer', async () => {
    const created = await newOrder();
    const { pix, payment } = await detail(created.uuid);
    expect(payment.status).toBe('PENDING');
    expect(pix).toEqual<PixCharge>(created.pix);
    expect(pix?.copy_and_paste).toMatch(/^000201/);
    expect(decodeQrPng(pix?.qr_code_image_base64 as string)).toBe(pix?.copy_and_paste);
  });

  it('is null once the order is paid', async () => {
    const { uuid } = await newOrder();
    await act(uuid, '/sandbox/orders/:uuid/pay/');
    const { pix, payment } = await detail(uuid);
    expect(payment.status).toBe('PAID');
    expect(pix).toBeNull();
  });

  it('is null once the order is cancelled', async () => {
    const { uuid } = await newOrder();
    await act(uuid, '/sellers/orders/:uuid/cancel/');
    const { pix, payment } = await detail(uuid);
    expect(payment.status).toBe('CANCELED');
    expect(pix).toBeNull();
  });

  it('is null once the order has expired', async () => {
    const { uuid } = await newOrder();
    await act(uuid, '/sandbox/orders/:uuid/expire/');
    const { pix, payment } = await detail(uuid);
    expect(payment.status).toBe('EXPIRED');
    expect(pix).toBeNull();
  });

  it('is null for a PENDING order whose expires_at has passed, before it is marked EXPIRED', async () => {
    const { uuid } = await newOrder();
    // Only orders' copy is moved: payments' scheduler does not see it, so the order stays PENDING.
    await t.system.orders.runtime.orm.em
      .fork()
      .execute(`update orders.orders set expires_at = now() - interval '1 second' where id = ?`, [uuid]);
    const { pix, payment } = await detail(uuid);
    expect(payment.status).toBe('PENDING');
    expect(pix).toBeNull();
  });
});
