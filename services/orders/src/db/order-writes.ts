import { randomUUID } from 'node:crypto';
import type { AddressInput, Environment, TaxIdType } from '@seller-api/contracts';
import {
  OutboxMessageSchema,
  WriteBatch,
  insertBatch,
  rowsOf,
  type OutboxMessage,
  type Sql,
} from '@seller-api/service-kit';
import { OrderItemSchema, OrderSchema, type OrderItemRow, type OrderRow } from './entities';

export interface CustomerContact {
  sellerId: string;
  environment: Environment;
  taxId: string;
  taxIdType: TaxIdType;
  name: string;
  email: string;
  phone: string;
  address: AddressInput | null;
  at: Date;
}

export interface NewOrder {
  order: OrderRow;
  items: OrderItemRow[];
  event: OutboxMessage;
}

const customerKey = (c: Pick<CustomerContact, 'sellerId' | 'environment' | 'taxId'>) =>
  `${c.sellerId}|${c.environment}|${c.taxId}`;

// Customers are kept per seller and reused by tax id; the latest contact data wins, and an address
// once given is kept when a later order of the customer has none.
const UPSERT_CUSTOMERS = `insert into orders.customers (id, seller_id, environment, tax_id, tax_id_type, name, email, phone, address, created_at, updated_at)
  select id, seller_id, environment, tax_id, tax_id_type, name, email, phone, address, created_at, updated_at
    from jsonb_populate_recordset(null::orders.customers, $1::jsonb)
  on conflict (seller_id, environment, tax_id) do update set
    tax_id_type = excluded.tax_id_type, name = excluded.name, email = excluded.email, phone = excluded.phone,
    address = coalesce(excluded.address, orders.customers.address), updated_at = excluded.updated_at
  returning id, seller_id, environment, tax_id`;

/**
 * The create-order path's writes, each batched across concurrent requests (WriteBatch): the
 * customers' upsert, then the order, its items and its order.created event in one statement.
 */
export class OrderWrites {
  private readonly customers: WriteBatch<CustomerContact, string>;
  private readonly orders: WriteBatch<NewOrder, void>;

  constructor(sql: Sql) {
    this.customers = new WriteBatch((batch) => upsertCustomers(sql, batch));
    this.orders = insertBatch(sql, (batch) => [
      rowsOf(
        OrderSchema,
        batch.map((b) => b.order),
      ),
      rowsOf(
        OrderItemSchema,
        batch.flatMap((b) => b.items),
      ),
      rowsOf(
        OutboxMessageSchema,
        batch.map((b) => b.event),
      ),
    ]);
  }

  /** The customer's id, new or reused, once its contact data is stored. */
  upsertCustomer(contact: CustomerContact): Promise<string> {
    return this.customers.submit(contact);
  }

  /** The order, its items and its event, atomically. */
  insertOrder(order: NewOrder): Promise<void> {
    return this.orders.submit(order);
  }
}

/**
 * One statement for the batch. A row may be upserted once per statement, so a customer who appears
 * twice is written once, with what the same orders one after another would have left: the last
 * contact data, and the last address given.
 */
async function upsertCustomers(sql: Sql, batch: CustomerContact[]): Promise<string[]> {
  const merged = new Map<string, CustomerContact>();
  for (const contact of batch) {
    const key = customerKey(contact);
    const before = merged.get(key);
    merged.set(key, before && !contact.address ? { ...contact, address: before.address } : contact);
  }
  // In one order of keys, so that two batches in flight lock the customers they share in the same
  // order and never deadlock.
  const contacts = [...merged.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, c]) => c);
  const rows = contacts.map((c) => ({
    id: randomUUID(),
    seller_id: c.sellerId,
    environment: c.environment,
    tax_id: c.taxId,
    tax_id_type: c.taxIdType,
    name: c.name,
    email: c.email,
    phone: c.phone,
    address: c.address,
    created_at: c.at.toISOString(),
    updated_at: c.at.toISOString(),
  }));
  const stored = await sql.query<{ id: string; seller_id: string; environment: Environment; tax_id: string }>(
    UPSERT_CUSTOMERS,
    [JSON.stringify(rows)],
  );
  const ids = new Map(
    stored.map((r) => [
      customerKey({ sellerId: r.seller_id, environment: r.environment, taxId: r.tax_id }),
      r.id,
    ]),
  );
  return batch.map((contact) => {
    const id = ids.get(customerKey(contact));
    if (!id) throw new Error('customer upsert returned no row');
    return id;
  });
}
