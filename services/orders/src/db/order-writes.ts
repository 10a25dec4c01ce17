import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Environment } from '@seller-api/contracts';
import {
  OutboxMessageSchema,
  WriteBatch,
  insertPart,
  rowsOf,
  type Scope,
  type Sql,
} from '@seller-api/service-kit';
import {
  prepareOrder,
  type CreatedOrderResult,
  type CustomerContact,
  type NewOrder,
  type PrepareDeps,
  type PreparedOrder,
} from '../domain/create-order';
import { OrderItemSchema, OrderSchema, type OrderRow } from './entities';
import { sellerRecords, type ProductLookup } from './products';

const customerKey = (c: Pick<CustomerContact, 'sellerId' | 'environment' | 'taxId'>) =>
  `${c.sellerId}|${c.environment}|${c.taxId}`;

// Customers are kept per seller and reused by tax id; the latest contact data wins, and an address
// once given is kept when a later order of the customer has none. A customer whose stored data the
// order leaves as it is (a returning buyer, the usual case) is read, not written: no row lock, so the
// orders of one busy customer do not queue behind each other's commits (their foreign keys take only
// key-share locks, which do not conflict). Parameter $1: the customers' rows; CTE `c`: every
// customer of the batch with its id.
const UPSERT_CUSTOMERS = `incoming as (
    select * from json_populate_recordset(null::orders.customers, $1::json)),
  unchanged as (
    select s.id, s.seller_id, s.environment, s.tax_id
      from incoming i join orders.customers s using (seller_id, environment, tax_id)
     where s.tax_id_type = i.tax_id_type and s.name = i.name and s.email = i.email and s.phone = i.phone
       and (i.address is null or s.address = i.address)),
  upserted as (
    insert into orders.customers (id, seller_id, environment, tax_id, tax_id_type, name, email, phone, address, created_at, updated_at)
    select id, seller_id, environment, tax_id, tax_id_type, name, email, phone, address, created_at, updated_at
      from incoming i
     where not exists (select 1 from unchanged u
                        where u.seller_id = i.seller_id and u.environment = i.environment and u.tax_id = i.tax_id)
    on conflict (seller_id, environment, tax_id) do update set
      tax_id_type = excluded.tax_id_type, name = excluded.name, email = excluded.email, phone = excluded.phone,
      address = coalesce(excluded.address, orders.customers.address), updated_at = excluded.updated_at
    returning id, seller_id, environment, tax_id),
  c as (select * from unchanged union all select * from upserted)`;

// An order's customer, from the upsert of the same statement (CTE `c`).
const CUSTOMER_OF_ORDER = `(select c.id from c where c.seller_id = r.seller_id and c.environment = r.environment and c.tax_id = r.customer_tax_id)`;

/** Stores an order, its items, its event and its customer atomically; answers the customer's id. */
export interface OrderWriter {
  insertOrder(order: NewOrder): Promise<string>;
}

/**
 * The create-order path's write, batched across concurrent requests (WriteBatch): the customers'
 * upsert, the orders (each with its customer's id, new or reused), their items and their
 * order.created events, in one statement: atomic, one round trip and one commit.
 */
export class OrderWrites implements OrderWriter {
  private readonly orders: WriteBatch<NewOrder, string>;

  constructor(sql: Sql) {
    this.orders = new WriteBatch((batch) => writeOrders(sql, batch));
  }

  /** Stores the order, its items, its event and its customer atomically; answers the customer's id. */
  insertOrder(order: NewOrder): Promise<string> {
    return this.orders.submit(order);
  }
}

/**
 * The same statement for one order, on `sql` as it is: a keyed request's transaction (its
 * Idempotency-Key record commits with the order), so no batching with other requests.
 */
export function orderWriterIn(sql: Sql): OrderWriter {
  return {
    insertOrder: async (order) => {
      const [customerId] = await writeOrders(sql, [order]);
      if (!customerId) throw new Error('customer upsert returned no row');
      return customerId;
    },
  };
}

/**
 * One statement for the batch. A row may be upserted once per statement, so a customer who appears
 * twice is written once, with what the same orders one after another would have left: the last
 * contact data, and the last address given.
 */
async function writeOrders(sql: Sql, batch: NewOrder[]): Promise<string[]> {
  const merged = new Map<string, CustomerContact>();
  for (const { contact } of batch) {
    const key = customerKey(contact);
    const before = merged.get(key);
    merged.set(key, before && !contact.address ? { ...contact, address: before.address } : contact);
  }
  // In one order of keys, so that two batches in flight lock the customers they share in the same
  // order and never deadlock.
  const contacts = [...merged.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, c]) => c);
  const customers = contacts.map((c) => ({
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
  const orders = insertPart(
    sql,
    rowsOf<OrderRow, 'customerId'>(
      OrderSchema,
      batch.map((b) => b.order),
    ),
    2,
    { customer_id: CUSTOMER_OF_ORDER },
  );
  const items = insertPart(
    sql,
    rowsOf(
      OrderItemSchema,
      batch.flatMap((b) => b.items),
    ),
    3,
  );
  const events = insertPart(
    sql,
    rowsOf(
      OutboxMessageSchema,
      batch.map((b) => b.event),
    ),
    4,
  );
  // Every data-modifying CTE runs to completion; the foreign key of a new customer's order is checked
  // at the end of the statement, when the customer's row is there.
  const stored = await sql.query<{ id: string; seller_id: string; environment: Environment; tax_id: string }>(
    `with ${UPSERT_CUSTOMERS}, o as (${orders.text}), i as (${items.text}), e as (${events.text})
     select id, seller_id, environment, tax_id from c`,
    [JSON.stringify(customers), orders.value, items.value, events.value],
  );
  const ids = new Map(
    stored.map((r) => [
      customerKey({ sellerId: r.seller_id, environment: r.environment, taxId: r.tax_id }),
      r.id,
    ]),
  );
  return batch.map(({ contact }) => {
    const id = ids.get(customerKey(contact));
    if (!id) throw new Error('customer upsert returned no row');
    return id;
  });
}

export interface CreateOrderDeps extends PrepareDeps {
  products: ProductLookup;
  writes: OrderWriter;
  /** Told when the order's event is stored, to wake the outbox relay. */
  outboxStored?: () => void;
}

/**
 * `POST /sellers/orders/`: prepareOrder, then storeOrder. Nothing is stored when payments fails.
 */
export async function createOrder(
  em: EntityManager,
  scope: Scope,
  body: unknown,
  deps: CreateOrderDeps,
): Promise<CreatedOrderResult> {
  return storeOrder(
    await prepareOrder(sellerRecords(em, deps.products), scope, body, deps),
    deps.writes,
    deps.outboxStored,
  );
}

/**
 * Stores the customer, the order, its items and order.created in one statement (atomic, one round
 * trip; batched with the concurrent requests' by OrderWrites, or in a keyed request's transaction).
 */
export async function storeOrder(
  { write, charge }: PreparedOrder,
  writer: OrderWriter,
  outboxStored?: () => void,
): Promise<CreatedOrderResult> {
  const customerId = await writer.insertOrder(write);
  outboxStored?.();
  return { order: { ...write.order, customerId }, items: write.items, customerId, charge };
}
