import { CreatedOrder, OrderList } from '@seller-api/contracts';
import { LogCapture } from '../support/logs';
import { call } from '../support/system';
import { useSystem } from '../support/use-system';
import { CNPJ, CPF, createOrder, customer, standaloneOrder } from './fixtures';

/** The order list's searches by the customer's e-mail and tax id (docs/orders.md, "List orders"). */
const logs = new LogCapture();

const t = useSystem({ env: { LOG_LEVEL: 'trace' }, logs });

const list = async (key: string, query: Record<string, string>) => {
  const res = await call(`${t.url}/sellers/orders/?${new URLSearchParams(query)}`, { key });
  return { res, data: res.status === 200 ? OrderList.parse(res.body.data) : null };
};

async function order(key: string, email: string, taxId: string): Promise<string> {
  const res = await createOrder(
    t.url,
    key,
    standaloneOrder({ customer: customer({ email, tax_id: taxId }) } as never),
  );
  if (res.status !== 201) throw new Error(`order not created: ${res.status} ${res.text}`);
  return CreatedOrder.parse(res.body.data).uuid;
}

describe('order search', () => {
  it('finds orders by e-mail (any case) and by tax id (any punctuation), with status and cursor', async () => {
    const { key, email: sellerEmail } = await t.newKey();
    const first = await order(key, 'Ana.Souza@Example.com', CPF);
    const paid = await order(key, 'ana.souza@example.com', CPF.replace(/\D/g, ''));
    const third = await order(key, 'ana.souza@example.com', CPF);
    const company = await order(key, 'bruno@example.com', CNPJ);
    const pay = await call(`${t.url}/sandbox/orders/${paid}/pay/`, { method: 'POST', key });
    expect(pay.status).toBe(200);
    // The same customer at another seller, and in the seller's live environment, is not found.
    const other = await t.newKey();
    await order(other.key, 'ana.souza@example.com', CPF);
    const live = await t.newKey({ email: sellerEmail, environment: 'live' });

    const uuids = async (query: Record<string, string>, k = key) =>
      (await list(k, query)).data?.results.map((r) => r.uuid);
    expect(await uuids({ customer_email: 'ANA.SOUZA@example.COM' })).toEqual([third, paid, first]);
    expect(await uuids({ customer_email: ' ana.souza@example.com ' })).toEqual([third, paid, first]);
    expect(await uuids({ customer_tax_id: CPF })).toEqual([third, paid, first]);
    expect(await uuids({ customer_tax_id: '52998224725' })).toEqual([third, paid, first]);
    expect(await uuids({ customer_tax_id: CNPJ })).toEqual([company]);
    expect(await uuids({ customer_tax_id: '11222333000181' })).toEqual([company]);
    expect(await uuids({ customer_email: 'ana.souza@example' })).toEqual([]);
    expect(await uuids({ customer_tax_id: CPF, customer_email: 'bruno@example.com' })).toEqual([]);
    expect(await uuids({ customer_tax_id: CPF, status: 'PAID' })).toEqual([paid]);
    expect(await uuids({ customer_email: 'ana.souza@example.com' }, live.key)).toEqual([]);

    // Status and search together, a page at a time.
    const query = { customer_email: 'ana.souza@EXAMPLE.com', status: 'PENDING', limit: '1' };
    const page1 = await list(key, query);
    expect(page1.data?.results.map((r) => r.uuid)).toEqual([third]);
    expect(page1.data?.next_cursor).toEqual(expect.any(String));
    const page2 = await list(key, { ...query, cursor: page1.data?.next_cursor ?? '' });
    expect(page2.data?.results.map((r) => r.uuid)).toEqual([first]);
    const page3 = page2.data?.next_cursor
      ? await list(key, { ...query, cursor: page2.data.next_cursor })
      : null;
    expect(page3?.data?.results ?? []).toEqual([]);
    expect(page3?.data?.next_cursor ?? null).toBeNull();

    // The searches went through every log as paths: none holds the tax ids or the e-mail in full.
    const text = logs.text();
    expect(text).toContain('customer_tax_id=[REDACTED]');
    expect(text).not.toContain('52998224725');
    expect(text).not.toContain('529.982.247-25');
    expect(text).not.toContain('11222333000181');
    expect(text).not.toContain('11.222.333%2F0001-81');
    expect(text.toLowerCase()).not.toContain('ana.souza%40example.com');
  });

  it('refuses a search that cannot match an order with 400 on the field', async () => {
    const { key } = await t.newKey();
    for (const [query, field] of [
      [{ customer_tax_id: '123' }, 'customer_tax_id'],
      [{ customer_tax_id: '529.982.247-2' }, 'customer_tax_id'],
      [{ customer_tax_id: '' }, 'customer_tax_id'],
      [{ customer_email: '' }, 'customer_email'],
      [{ customer_email: 'x'.repeat(255) }, 'customer_email'],
    ] as const) {
      const { res } = await list(key, query);
      expect({ query, status: res.status }).toEqual({ query, status: 400 });
      expect(res.body.data).toHaveProperty([field]);
    }
  });
});
