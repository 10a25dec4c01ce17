// The things the fuzzer aims at, made through the API before a run (docs/fuzz.md): products, orders
// (one paid, through the sandbox), a webhook and its deliveries, a withdrawal. Whatever cannot be made
// (a target the system refuses, a balance not yet credited) is left out: its routes get random ids.
import type { FuzzContext } from './requests';

interface Made {
  status: number;
  data: Record<string, unknown> | null;
}

async function post(baseUrl: string, key: string, path: string, body?: unknown): Promise<Made> {
  const res = await fetch(`${baseUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const parsed = (await res.json().catch(() => null)) as { data?: Record<string, unknown> } | null;
  return { status: res.status, data: parsed?.data ?? null };
}

async function get(baseUrl: string, key: string, path: string): Promise<Record<string, unknown> | null> {
  const res = await fetch(`${baseUrl}${path}`, { headers: { authorization: `Bearer ${key}` } });
  const parsed = (await res.json().catch(() => null)) as { data?: Record<string, unknown> } | null;
  return res.ok ? (parsed?.data ?? null) : null;
}

const idOf = (made: Made, field = 'uuid'): string[] =>
  made.status < 300 && typeof made.data?.[field] === 'string' ? [made.data[field] as string] : [];

const CUSTOMER = {
  name: 'Fuzz Buyer',
  tax_id: '529.982.247-25',
  email: 'fuzz.buyer@example.com',
  address: {
    street: 'Rua das Flores',
    number: '1',
    neighborhood: 'Centro',
    city: 'São Paulo',
    state: 'SP',
    postal_code: '01001-000',
  },
};

/** Makes what the run aims at with the seller's test key; answers the fuzzer's context. */
export async function prepareContext(
  baseUrl: string,
  keys: FuzzContext['keys'],
  pspSecret: string | null,
): Promise<FuzzContext> {
  const { seller } = keys;
  const products = [
    ...idOf(
      await post(baseUrl, seller, '/sellers/products/', {
        name: 'Fuzz shirt',
        price: 5000,
        type: 'PHYSICAL',
      }),
    ),
    ...idOf(
      await post(baseUrl, seller, '/sellers/products/', {
        name: 'Fuzz e-book',
        price: 1990,
        type: 'DIGITAL',
      }),
    ),
  ];
  const orders: string[] = [];
  for (let i = 0; i < 3; i += 1) {
    orders.push(
      ...idOf(
        await post(baseUrl, seller, '/sellers/orders/', {
          customer: CUSTOMER,
          items: products.map((product_uuid) => ({ product_uuid, quantity: 1 })),
          payment: products.length ? {} : { gross_amount: 10_000 },
        }),
      ),
    );
  }
  // Paid orders (refunds, MED and chargeback have something to act on) and some balance.
  for (const order of orders.slice(0, 2)) await post(baseUrl, seller, `/sandbox/orders/${order}/pay/`);
  const affiliates = idOf(
    await post(baseUrl, seller, '/sellers/affiliates/', { code: 'fuzz-affiliate', name: 'Fuzz Affiliate' }),
    'code',
  );
  const webhooks: string[] = [];
  for (const url of ['http://127.0.0.1:9/fuzz', 'https://93.184.216.34/fuzz']) {
    const made = await post(baseUrl, seller, '/config/webhooks/', { url, event: 'order.created' });
    webhooks.push(...idOf(made, 'id'));
    if (webhooks.length) break;
  }
  // An order after the webhook, so that it has a delivery.
  await post(baseUrl, seller, '/sellers/orders/', { customer: CUSTOMER, payment: { gross_amount: 1234 } });
  const deliveries: string[] = [];
  if (webhooks[0]) {
    const list = await get(baseUrl, seller, `/config/webhooks/${webhooks[0]}/deliveries/`);
    const results = Array.isArray(list?.results) ? (list.results as Array<{ id?: unknown }>) : [];
    deliveries.push(...results.map((d) => d.id).filter((id): id is string => typeof id === 'string'));
  }
  const withdrawals = idOf(
    await post(baseUrl, seller, '/finance/withdrawals/', {
      amount: 100,
      pix_key: 'fuzz@example.com',
      pix_key_type: 'email',
    }),
  );
  const listed = await get(baseUrl, seller, '/events/?limit=20');
  const events = (Array.isArray(listed?.results) ? (listed.results as Array<{ id?: unknown }>) : [])
    .map((e) => e.id)
    .filter((id): id is string => typeof id === 'string');
  return {
    keys,
    pspSecret,
    ids: { orders, products, webhooks, deliveries, withdrawals, affiliates, events },
  };
}
