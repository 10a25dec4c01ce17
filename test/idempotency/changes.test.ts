import { randomUUID } from 'node:crypto';
import { call } from '../support/system';
import { waitFor } from '../support/wait';
import {
  balanceBecomes,
  fund,
  newOperator,
  newOrder,
  newSeller,
  useHarness,
  SALE_NET,
} from '../withdrawals/helpers';

/**
 * Idempotency-Key on every other change: each kept by the service that makes it, with the change. A
 * retry with the same key gets the first answer and changes nothing more; another body is a 409.
 */

const h = useHarness({ WITHDRAWAL_AUTO_APPROVE_BELOW: '0' });

const db = () => h.system.payments.runtime.orm.em.fork();

async function count(sql: string, values: unknown[]): Promise<number> {
  const rows = await db().execute<Array<{ n: string }>>(sql, values);
  return Number(rows[0]?.n ?? 0);
}

/** The same POST twice with one key: both answers, the second a replay of the first. */
async function twice(key: string, path: string, body?: unknown) {
  const idem = randomUUID();
  const send = () =>
    call(`${h.gateway.url}${path}`, { method: 'POST', key, body, headers: { 'idempotency-key': idem } });
  const first = await send();
  const again = await send();
  return { first, again, idem };
}

function expectReplay({ first, again }: Awaited<ReturnType<typeof twice>>, status: number) {
  expect(first.status).toBe(status);
  expect(again.status).toBe(status);
  expect(again.text).toBe(first.text);
  expect(again.headers.get('idempotent-replayed')).toBe('true');
}

describe('Idempotency-Key on the other changes', () => {
  it('pays a sandbox order once: the retry replays, the PSP payment is recorded once', async () => {
    const seller = await newSeller(h);
    const order = await newOrder(h, seller.key);
    const res = await twice(seller.key, `/sandbox/orders/${order}/pay/`);
    expectReplay(res, 200);
    const txid = await db().execute<Array<{ txid: string }>>(
      'select txid from payments.transactions where order_id = ?',
      [order],
    );
    expect(
      await count('select count(*) as n from payments.psp_payments where txid = ?', [txid[0]?.txid]),
    ).toBe(1);
    await balanceBecomes(h, seller.key, { available_amount: SALE_NET });
  });

  it('takes one connection per keyed request: more concurrent keyed pays than the pool holds all succeed', async () => {
    const seller = await newSeller(h);
    const orders = await Promise.all(Array.from({ length: 25 }, () => newOrder(h, seller.key)));
    const paid = await Promise.all(
      orders.map((order) =>
        call(`${h.gateway.url}/sandbox/orders/${order}/pay/`, {
          method: 'POST',
          key: seller.key,
          headers: { 'idempotency-key': randomUUID() },
        }),
      ),
    );
    expect(paid.map((r) => r.status)).toEqual(orders.map(() => 200));
  });

  it('refunds once: the retry replays instead of answering that the order is already refunded', async () => {
    const seller = await newSeller(h);
    const order = await fund(h, seller);
    const res = await twice(seller.key, `/sellers/orders/${order}/refund/`);
    expectReplay(res, 200);
    await balanceBecomes(h, seller.key, { available_amount: 0 });
    // The net was reserved once, and the reversal (asynchronous) takes it once.
    const kinds = (kind: string) =>
      count(`select count(*) as n from withdrawals.ledger_entries where order_id = ? and kind = ?`, [
        order,
        kind,
      ]);
    await waitFor(async () => (await kinds('payment_reversed')) > 0, { what: 'the reversal' });
    expect(await kinds('payment_reversed')).toBe(1);
    expect(await kinds('refund_held')).toBe(1);
  });

  it('refuses the same key for another MED outcome of the same order', async () => {
    const seller = await newSeller(h);
    const order = await fund(h, seller);
    const opened = await call(`${h.gateway.url}/sandbox/orders/${order}/med/`, {
      method: 'POST',
      key: seller.key,
    });
    expect(opened.status).toBe(200);
    const idem = randomUUID();
    const resolve = (outcome: string) =>
      call(`${h.gateway.url}/sandbox/orders/${order}/med/resolve/`, {
        method: 'POST',
        key: seller.key,
        body: { outcome },
        headers: { 'idempotency-key': idem },
      });
    expect((await resolve('rejected')).status).toBe(200);
    const other = await resolve('refunded');
    expect(other.status).toBe(409);
    expect(other.body.code).toBe('idempotency_conflict');
    await balanceBecomes(h, seller.key, { available_amount: SALE_NET });
  });

  it('holds one withdrawal for a repeated request, and decides it once for a repeated approval', async () => {
    const seller = await newSeller(h);
    await fund(h, seller);
    const request = await twice(seller.key, '/finance/withdrawals/', {
      amount: 5000,
      pix_key: 'maria@example.com',
      pix_key_type: 'email',
    });
    expectReplay(request, 201);
    await balanceBecomes(h, seller.key, { available_amount: SALE_NET - 5000, pending_amount: 5000 });
    const uuid = (request.first.body.data as { uuid: string }).uuid;
    const operator = await newOperator(h);
    expectReplay(await twice(operator, `/ops/withdrawals/${uuid}/approve/`), 200);
  });

  it('registers one webhook for a repeated registration, with the same secret in both answers', async () => {
    const seller = await newSeller(h);
    const res = await twice(seller.key, '/config/webhooks/', {
      url: 'https://example.com/hooks/idem',
      event: 'order.paid',
    });
    expectReplay(res, 201);
    const list = await call(`${h.gateway.url}/config/webhooks/`, { key: seller.key });
    expect((list.body.data as { results: unknown[] }).results).toHaveLength(1);
  });

  it('creates one product for a repeated creation', async () => {
    const seller = await newSeller(h);
    const res = await twice(seller.key, '/sellers/products/', {
      name: 'Caneca',
      price: 3000,
      type: 'DIGITAL',
      images: ['https://cdn.example.com/c.png'],
    });
    expectReplay(res, 201);
    const list = await call(`${h.gateway.url}/sellers/products/`, { key: seller.key });
    expect((list.body.data as { results: unknown[] }).results).toHaveLength(1);
  });
});
