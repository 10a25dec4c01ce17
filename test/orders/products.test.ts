import { randomUUID } from 'node:crypto';
import { Product, ProductList } from '@seller-api/contracts';
import { useSystem } from '../support/use-system';

const t = useSystem();

const post = (key: string, body: unknown) => t.api(`/sellers/products/`, { method: 'POST', key, body });

describe('products', () => {
  it('creates a product with its defaults and reads it back', async () => {
    const { key } = await t.newKey();
    const res = await post(key, { name: 'Caneca', price: 3500, type: 'PHYSICAL' });
    expect(res.status).toBe(201);
    const product = Product.strict().parse(res.body.data);
    expect(product).toMatchObject({
      name: 'Caneca',
      price: 3500,
      type: 'PHYSICAL',
      images: [],
      commission_unit_amount: 0,
      producer_name: null,
    });
    const read = await t.api(`/sellers/products/${product.uuid}/`, { key });
    expect(read.body.data).toEqual(res.body.data);
  });

  it('refuses bad products with every field named', async () => {
    const { key } = await t.newKey();
    const res = await post(key, { name: '', price: 1.5, type: 'SERVICE', images: ['ftp://x'] });
    expect(res.status).toBe(400);
    expect(Object.keys(res.body.data as object).sort()).toEqual(['images.0', 'name', 'price', 'type']);
  });

  it('lists only the seller’s products, newest first, and hides others', async () => {
    const a = await t.newKey();
    const b = await t.newKey();
    const first = Product.parse((await post(a.key, { name: 'A1', price: 1, type: 'DIGITAL' })).body.data);
    const second = Product.parse((await post(a.key, { name: 'A2', price: 2, type: 'DIGITAL' })).body.data);
    await post(b.key, { name: 'B1', price: 3, type: 'DIGITAL' });
    const list = ProductList.parse((await t.api(`/sellers/products/`, { key: a.key })).body.data);
    expect(list.results.map((p) => p.uuid)).toEqual([second.uuid, first.uuid]);
    expect((await t.api(`/sellers/products/${first.uuid}/`, { key: b.key })).status).toBe(403);
    const live = await t.newKey({ email: a.email, environment: 'live' });
    expect((await t.api(`/sellers/products/${first.uuid}/`, { key: live.key })).status).toBe(404);
    expect((await t.api(`/sellers/products/${randomUUID()}/`, { key: a.key })).status).toBe(404);
  });

  it('registers affiliates with unique codes', async () => {
    const { key } = await t.newKey();
    const body = { code: 'ana-10', name: 'Ana' };
    expect((await t.api(`/sellers/affiliates/`, { method: 'POST', key, body })).status).toBe(201);
    const again = await t.api(`/sellers/affiliates/`, { method: 'POST', key, body });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe('conflict');
    const list = await t.api(`/sellers/affiliates/`, { key });
    expect((list.body.data as { results: unknown[] }).results).toEqual([
      expect.objectContaining({ code: 'ana-10', name: 'Ana' }),
    ]);
  });
});
