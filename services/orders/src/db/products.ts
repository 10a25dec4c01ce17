import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { CreateProductRequest, ListQuery } from '@seller-api/contracts';
import { assertOwned, listOwned, type Scope } from '@seller-api/service-kit';
import type { SellerRecords } from '../domain/create-order';
import { findAffiliateByCode } from './affiliates';
import { ProductSchema, type ProductRow } from './entities';

export async function createProduct(
  em: EntityManager,
  scope: Scope,
  input: CreateProductRequest,
): Promise<ProductRow> {
  const product = em.create(ProductSchema, {
    id: randomUUID(),
    sellerId: scope.sellerId,
    environment: scope.environment,
    name: input.name,
    price: input.price,
    images: input.images,
    type: input.type,
    commissionUnitAmount: input.commission_unit_amount,
    producerName: input.producer_name ?? null,
    createdAt: new Date(),
  });
  await em.persist(product).flush();
  return product;
}

export async function getProduct(em: EntityManager, scope: Scope, id: string): Promise<ProductRow> {
  return assertOwned(await em.findOne(ProductSchema, { id }), scope, 'Product');
}

export function listProducts(em: EntityManager, scope: Scope, query: ListQuery) {
  return listOwned(em, ProductSchema, scope, query);
}

/**
 * The seller's products among `ids`, in this environment; unknown ids are simply absent. Products
 * never change once created (there is no route to update or delete one), so each replica keeps the
 * rows it has read (up to `max`, the oldest dropped first) and asks PostgreSQL only for the others:
 * the create-order path reads its products without a round trip.
 */
export class ProductLookup {
  private readonly rows = new Map<string, ProductRow>();

  constructor(private readonly max = 10_000) {}

  /** `em` is asked for only when a product is not kept here. */
  async find(em: () => EntityManager, scope: Scope, ids: string[]): Promise<Map<string, ProductRow>> {
    const found = new Map<string, ProductRow>();
    const missing: string[] = [];
    for (const id of new Set(ids)) {
      const row = this.rows.get(id);
      if (!row) missing.push(id);
      // Another seller's or environment's product does not exist for this one.
      else if (row.sellerId === scope.sellerId && row.environment === scope.environment) found.set(id, row);
    }
    if (missing.length === 0) return found;
    const read = await em().find(ProductSchema, {
      id: { $in: missing },
      sellerId: scope.sellerId,
      environment: scope.environment,
    });
    for (const row of read) {
      const plain = plainProduct(row);
      found.set(plain.id, plain);
      this.remember(plain);
    }
    return found;
  }

  private remember(row: ProductRow): void {
    if (this.rows.size >= this.max) this.rows.delete(this.rows.keys().next().value as string);
    this.rows.set(row.id, row);
  }
}

/**
 * What a new order's rules read of the seller's records (domain/create-order.ts): its products through
 * `products`, its affiliate by code. Forked only if something is read through the ORM: products are
 * usually known already.
 */
export function sellerRecords(em: EntityManager, products: ProductLookup): SellerRecords {
  let forked: EntityManager | undefined;
  const reader = () => (forked ??= em.fork());
  return {
    products: (scope, ids) => products.find(reader, scope, ids),
    affiliateByCode: (scope, code) => findAffiliateByCode(reader(), scope, code),
  };
}

/** The row's own data, without the entity manager that loaded it (kept past the request). */
function plainProduct(row: ProductRow): ProductRow {
  return {
    id: row.id,
    sellerId: row.sellerId,
    environment: row.environment,
    name: row.name,
    price: row.price,
    images: [...row.images],
    type: row.type,
    commissionUnitAmount: row.commissionUnitAmount,
    producerName: row.producerName,
    createdAt: new Date(row.createdAt),
  };
}
