import { CreatedOrder, OrderList } from '@seller-api/contracts';
import { call } from '../support/system';
import { useSystem } from '../support/use-system';
import { address, createOrder, createProduct, customer, standaloneOrder } from './fixtures';

const t = useSystem();

const list = async (key: string, query = '') => {
  const res = await call(`${t.url}/sellers/orders/${query}`, { key });
  return { res, data: res.status === 200 ? OrderList.parse(res.body.data) : null };
};

describe('order list', () => {
  it('shows the documented record, newest first, with tracking grouped and shipping_amount', async () => {
    const { key } = await t.newKey();
    const product = await createProduct(t.url, key);
    const first = CreatedOrder.parse((await createOrder(t.url, key, standaloneOrder())).body.data);
    const second = CreatedOrder.parse(
      (
        await createOrder(t.url, key, {
          customer: customer({ address: address() }),
          items: [{ product_uuid: product, quantity: 1 }],
          payment: { shipping_amount: 700 },
        })
      ).body.data,
    );
    await call(`${t.url}/sellers/orders/${second.uuid}/tracking/`, {
      method: 'PATCH',
      key,
      body: { tracking_code: 'BR9', shipping_status: 'SHIPPED' },
    });
    const { data } = await list(key);
    expect(data?.results.map((r) => r.uuid)).toEqual([second.uuid, first.uuid]);
    expect(data?.next_cursor).toBeNull();
    expect(data?.results[0]).toEqual({
      uuid: second.uuid,
      status: 'PENDING',
      created_at: expect.any(String),
      paid_at: null,
      customer: { name: 'Maria Silva', email: 'maria.silva@example.com' },
      payment: { status: 'PENDING', method: 'PIX', gross_amount: 5700, shipping_amount: 700 },
      tracking: { tracking_code: 'BR9', shipping_status: 'SHIPPED' },
    });
    expect(data?.results[1]?.tracking).toEqual({ tracking_code: null, shipping_status: null });
  });

  it('pages with an opaque cursor without gaps or repeats', async () => {
    const { key } = await t.newKey();
    const created: string[] = [];
    for (let i = 0; i < 7; i += 1)
      created.push(
        CreatedOrder.parse(
          (await createOrder(t.url, key, standaloneOrder({ payment: { gross_amount: 100 + i } }))).body.data,
        ).uuid,
      );
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const { data } = await list(key, `?limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      expect(data?.results.length).toBeLessThanOrEqual(3);
      seen.push(...(data?.results.map((r) => r.uuid) ?? []));
      cursor = data?.next_cursor ?? null;
    } while (cursor);
    expect(seen).toEqual([...created].reverse());
  });

  it('filters by status, shipping status and creation dates', async () => {
    const { key } = await t.newKey();
    const product = await createProduct(t.url, key);
    const shipped = CreatedOrder.parse(
      (
        await createOrder(t.url, key, {
          customer: customer({ address: address() }),
          items: [{ product_uuid: product, quantity: 1 }],
          payment: {},
        })
      ).body.data,
    );
    const plain = CreatedOrder.parse((await createOrder(t.url, key, standaloneOrder())).body.data);
    await call(`${t.url}/sellers/orders/${shipped.uuid}/tracking/`, {
      method: 'PATCH',
      key,
      body: { tracking_code: 'BR1', shipping_status: 'SHIPPED' },
    });

    expect((await list(key, '?shipping_status=SHIPPED')).data?.results.map((r) => r.uuid)).toEqual([
      shipped.uuid,
    ]);
    expect((await list(key, '?status=PENDING')).data?.results.map((r) => r.uuid)).toEqual([
      plain.uuid,
      shipped.uuid,
    ]);
    expect((await list(key, '?status=PAID')).data?.results).toEqual([]);
    const tomorrow = new Date(Date.now() + 86400_000).toISOString();
    expect((await list(key, `?created_from=${encodeURIComponent(tomorrow)}`)).data?.results).toEqual([]);
    expect((await list(key, `?created_to=${encodeURIComponent(tomorrow)}`)).data?.results).toHaveLength(2);
  });

  it('refuses bad parameters with 400 and the field name', async () => {
    const { key } = await t.newKey();
    for (const [query, field] of [
      ['?limit=101', 'limit'],
      ['?limit=0', 'limit'],
      ['?status=LOST', 'status'],
      ['?created_from=yesterday', 'created_from'],
      ['?cursor=garbage', 'cursor'],
    ] as const) {
      const { res } = await list(key, query);
      expect(res.status).toBe(400);
      expect(res.body.data).toHaveProperty([field]);
    }
  });

  it('shows only the seller’s own orders of the key’s environment', async () => {
    const mine = await t.newKey();
    const live = await t.newKey({ email: mine.email, environment: 'live' });
    const order = CreatedOrder.parse((await createOrder(t.url, mine.key, standaloneOrder())).body.data);
    expect((await list(mine.key)).data?.results.map((r) => r.uuid)).toEqual([order.uuid]);
    expect((await list(live.key)).data?.results).toEqual([]);
    const other = await t.newKey();
    expect((await list(other.key)).data?.results).toEqual([]);
  });
});
