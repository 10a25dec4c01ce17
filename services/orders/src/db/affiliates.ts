import { randomUUID } from 'node:crypto';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { CreateAffiliateRequest, ListQuery } from '@seller-api/contracts';
import { conflict, listOwned, type Scope } from '@seller-api/service-kit';
import { AffiliateSchema, type AffiliateRow } from './entities';

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

export function listAffiliates(em: EntityManager, scope: Scope, query: ListQuery) {
  return listOwned(em, AffiliateSchema, scope, query);
}

export async function findAffiliateByCode(
  em: EntityManager,
  scope: Scope,
  code: string,
): Promise<AffiliateRow | null> {
  return em.findOne(AffiliateSchema, { sellerId: scope.sellerId, environment: scope.environment, code });
}
