import { randomUUID } from 'node:crypto';
import { ErrorBody, MAX_AMOUNT, MAX_INT_COLUMN, ValidationErrorBody } from '@seller-api/contracts';
import { call } from '../support/system';
import { useSystem } from '../support/use-system';
import { createOrder, createProduct, customer, standaloneOrder } from './fixtures';

// Every integer field is bounded by its column and the money limits (400 on the field, docs/limits.md),
// checked before payments is asked for the charge; and a create that fails after the charge leaves no
// payable charge without its order (docs/payments.md, "Limits and a charge without its order").
const t = useSystem({ db: true });

beforeAll(async () => {
  // A database fault on the order's insert, after the charge: orders named 'Fail After Charge' fail.
  await t.db
    .query(`create or replace function public.fail_after_charge() returns trigger language plpgsql as $$
    begin
      if new.customer_name = 'Fail After Charge' then raise exception 'forced failure'; end if;
      return new;
    end $$`);
  await t.db.query(`drop trigger if exists fail_after_charge on orders.orders`);
  await t.db.query(`create trigger fail_after_charge before insert on orders.orders
    for each row execute function public.fail_after_charge()`);
  t.cleanup(() => t.db.query(`drop trigger if exists fail_after_charge on orders.orders`));
});

/** Payments' charges of a seller, with whether their order exists. */
async function chargesOf(sellerId: string | null) {
  const { rows } = await t.db.query<{
    order_id: string;
    charge_status: string;
    gross_amount: string;
    stored: boolean;
  }>(
    `select t.order_id, t.charge_status, t.gross_amount,
            exists (select 1 from orders.orders o where o.id = t.order_id) as stored
       from payments.transactions t where t.seller_id = $1`,
    [sellerId],
  );
  return rows;
}

describe('integer bounds on create order', () => {
  it('answers 400 on items.0.quantity for 2^31, and payments holds no charge for it', async () => {
    const { key, sellerId } = await t.newKey();
    const product = await createProduct(t.url, key, {
      price: 1,
      type: 'DIGITAL',
      commission_unit_amount: 0,
    });
    const res = await createOrder(t.url, key, {
      customer: customer(),
      items: [{ product_uuid: product, quantity: 2 ** 31 }],
      payment: { gross_amount: 100 },
    });
    expect(res.status).toBe(400);
    const body = ValidationErrorBody.parse(res.body);
    expect(Object.keys(body.data)).toEqual(['items.0.quantity']);
    expect(await chargesOf(sellerId)).toEqual([]);
  });

  it('accepts the largest quantity its column holds', async () => {
    const { key } = await t.newKey();
    const product = await createProduct(t.url, key, {
      price: 1,
      type: 'DIGITAL',
      commission_unit_amount: 0,
    });
    const res = await createOrder(t.url, key, {
      customer: customer(),
      items: [{ product_uuid: product, quantity: MAX_INT_COLUMN }],
      payment: {},
    });
    expect(res.status).toBe(201);
    expect(res.body.data).toMatchObject({ gross_amount: MAX_INT_COLUMN });
  });

  it('refuses quantity times price, or a subtotal, above the money limit before any charge, even with gross_amount sent', async () => {
    const { key, sellerId } = await t.newKey();
    const dear = await createProduct(t.url, key, {
      price: MAX_AMOUNT,
      type: 'DIGITAL',
      commission_unit_amount: 0,
    });
    const cheap = await createProduct(t.url, key, {
      price: 1,
      type: 'DIGITAL',
      commission_unit_amount: 0,
    });
    const line = await createOrder(t.url, key, {
      customer: customer(),
      items: [{ product_uuid: dear, quantity: 2 }],
      payment: { gross_amount: 100 },
    });
    expect(line.status).toBe(400);
    expect(Object.keys(ValidationErrorBody.parse(line.body).data)).toEqual(['items.0.quantity']);
    const subtotal = await createOrder(t.url, key, {
      customer: customer(),
      items: [
        { product_uuid: dear, quantity: 1 },
        { product_uuid: cheap, quantity: 1 },
      ],
      payment: { gross_amount: 100 },
    });
    expect(subtotal.status).toBe(400);
    expect(Object.keys(ValidationErrorBody.parse(subtotal.body).data)).toEqual(['items']);
    expect(await chargesOf(sellerId)).toEqual([]);
  });
});

describe('a create that fails after its charge', () => {
  it('cancels the charge of an order that could not be stored', async () => {
    const { key, sellerId } = await t.newKey();
    const res = await createOrder(
      t.url,
      key,
      standaloneOrder({ customer: customer({ name: 'Fail After Charge' }) }),
    );
    expect(res.status).toBeGreaterThanOrEqual(500);
    ErrorBody.parse(res.body);
    expect(res.text).not.toMatch(/forced failure|\bat \S+:\d+:\d+/);
    const charges = await chargesOf(sellerId);
    // The charge was made (payments was asked) and is no longer payable.
    expect(charges).toEqual([expect.objectContaining({ stored: false, charge_status: 'CANCELLED' })]);
  });

  it("keeps a keyed request's charge for its retry, which stores the order on it", async () => {
    const { key, sellerId } = await t.newKey();
    const idem = randomUUID();
    const body = standaloneOrder({ customer: customer({ name: 'Fail After Charge' }) });
    const failed = await createOrder(t.url, key, body, { 'idempotency-key': idem });
    expect(failed.status).toBeGreaterThanOrEqual(500);
    const [left] = await chargesOf(sellerId);
    expect(left).toMatchObject({ stored: false, charge_status: 'PENDING' });

    await t.db.query(`alter table orders.orders disable trigger fail_after_charge`);
    try {
      const retried = await createOrder(t.url, key, body, { 'idempotency-key': idem });
      expect(retried.status).toBe(201);
      expect(retried.body.data).toMatchObject({ uuid: left?.order_id });
    } finally {
      await t.db.query(`alter table orders.orders enable trigger fail_after_charge`);
    }
    expect(await chargesOf(sellerId)).toEqual([
      expect.objectContaining({ stored: true, charge_status: 'PENDING' }),
    ]);
    const listed = await call(`${t.url}/sellers/orders/`, { key });
    expect((listed.body.data as { results: unknown[] }).results).toHaveLength(1);
  });
});
