// The floor of `npm run bench:create-order`: what one POST costs with nothing but Express, a JSON body
// parser and one INSERT of an orders-like row through a `pg` Pool of the services' size. No
// validation, no pricing, no other service, no outbox: the least any create-order can cost on this
// machine. Started by run.mjs as a child process of its own, like the services.
//
// Environment: PORT, DATABASE_URL (the bench database, which must exist), POOL_MAX (default 10).
// It creates the schema `bench_floor` and its table, and empties the table at start.
import { randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const express = require('express');
const { Pool } = require('pg');

const PORT = Number(process.env.PORT ?? 13090);
const pool = new Pool({
  connectionString: process.env.DATABASE_URL,
  max: Number(process.env.POOL_MAX ?? 10),
  application_name: 'bench_floor',
});

// Sixteen columns, one jsonb: about the shape of orders.orders without its indexes beyond the key.
await pool.query('create schema if not exists bench_floor');
await pool.query(`create table if not exists bench_floor.orders (
  id uuid primary key,
  seller_id uuid not null,
  environment text not null,
  customer_name text not null,
  customer_email text not null,
  customer_phone text not null,
  customer_tax_id text not null,
  address jsonb,
  status text not null,
  product_id uuid,
  quantity int not null,
  gross_amount bigint not null,
  shipping_amount bigint not null,
  discount_amount bigint not null,
  expires_at timestamptz(3) not null,
  created_at timestamptz(3) not null
)`);
await pool.query('truncate bench_floor.orders');

const SELLER = randomUUID();
const INSERT = `insert into bench_floor.orders (id, seller_id, environment, customer_name, customer_email,
  customer_phone, customer_tax_id, address, status, product_id, quantity, gross_amount, shipping_amount,
  discount_amount, expires_at, created_at)
  values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`;

const app = express();
app.disable('x-powered-by');
app.use(express.json());

app.get('/readyz', async (_req, res) => {
  try {
    await pool.query('select 1');
    res.json({ status: 'ok' });
  } catch (err) {
    res.status(503).json({ status: 'unavailable', error: err.message });
  }
});

app.post('/orders', async (req, res) => {
  try {
    const { customer = {}, items = [], payment = {} } = req.body ?? {};
    const item = items[0] ?? {};
    const id = randomUUID();
    const now = new Date();
    const shipping = payment.shipping_amount ?? 0;
    const discount = payment.discount_amount ?? 0;
    await pool.query({
      name: 'floor_insert',
      text: INSERT,
      values: [
        id,
        SELLER,
        'test',
        customer.name,
        customer.email,
        customer.phone ?? '',
        customer.tax_id,
        customer.address ? JSON.stringify(customer.address) : null,
        'PENDING',
        item.product_uuid ?? null,
        item.quantity ?? 1,
        payment.gross_amount ?? 5000 * (item.quantity ?? 1) + shipping - discount,
        shipping,
        discount,
        new Date(now.getTime() + 86_400_000),
        now,
      ],
    });
    res.status(201).json({ message: 'Order created.', data: { uuid: id, status: 'PENDING' } });
  } catch (err) {
    res.status(500).json({ message: err.message });
  }
});

const server = app.listen(PORT, '0.0.0.0');

// run.mjs stops its children with SIGTERM; leave through process.exit so --cpu-prof writes its file.
process.once('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  pool.end().finally(() => process.exit(0));
});
