import { randomUUID } from 'node:crypto';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { CreateAffiliateRequest, ListQuery } from '@seller-api/contracts';
import { conflict } from '@seller-api/service-kit';
import { AffiliateSchema, type AffiliateRow } from '../db/entities';
import { olderThan, page } from '@seller-api/service-kit';
import type { Scope } from '@seller-api/service-kit';

export async function createAffiliate(
  em: EntityManager,
  scope: Scope,
  input: CreateAffiliateRequest,
): Promise<AffiliateRow> {
  const affiliate = em.create(AffiliateSchema, {
    id: randomUUID(),
    sellerId: scope.sellerId,
    environment: scope.environment,
    code: input.code,
    name: input.name,
    createdAt: new Date(),
  });
  try {
    await em.persist(affiliate).flush();
  } catch (err) {
    if (err instanceof UniqueConstraintViolationException)
      throw conflict(`An affiliate with code "${input.code}" already exists.`);
    throw err;
  }
  return affiliate;
}

export async function listAffiliates(em: EntityManager, scope: Scope, query: ListQuery) {
  const rows = await em.find(
    AffiliateSchema,
    {
      sellerId: scope.sellerId,
      environment: scope.environment,
      ...olderThan(query.cursor),
    },
    { orderBy: { createdAt: 'desc', id: 'desc' }, limit: query.limit + 1 },
  );
  return page(rows, query.limit);
}

export async function findAffiliateByCode(
  em: EntityManager,
  scope: Scope,
  code: string,
): Promise<AffiliateRow | null> {
  return em.findOne(AffiliateSchema, { sellerId: scope.sellerId, environment: scope.environment, code });
}
