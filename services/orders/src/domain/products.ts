import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { CreateProductRequest, ListQuery } from '@seller-api/contracts';
import { ProductSchema, type ProductRow } from '../db/entities';
import { assertOwned, listOwned, type Scope } from '@seller-api/service-kit';

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

/** The seller's products among `ids`, in this environment; unknown ids are simply absent. */
export async function findProducts(
  em: EntityManager,
  scope: Scope,
  ids: string[],
): Promise<Map<string, ProductRow>> {
  if (ids.length === 0) return new Map();
  const rows = await em.find(ProductSchema, {
    id: { $in: [...new Set(ids)] },
    sellerId: scope.sellerId,
    environment: scope.environment,
  });
  return new Map(rows.map((row) => [row.id, row]));
}
