import { MESSAGES } from '@seller-api/contracts';
import type { EntitySchema, FilterQuery, OrderDefinition } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { badRequest } from './errors';
import type { Scope } from './scope';

/** Keyset position in a newest-first list: the last row's creation time and id. */
export interface Cursor {
  createdAt: Date;
  id: string;
}

export function encodeCursor(cursor: Cursor): string {
  return Buffer.from(`${cursor.createdAt.toISOString()}|${cursor.id}`).toString('base64url');
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** The times a row's creation can have: a forged cursor's year 0 or 275760 never reaches PostgreSQL. */
const EARLIEST = Date.UTC(1970, 0, 1);
const LATEST = Date.UTC(9999, 11, 31);

/**
 * Cursors are opaque to clients; a tampered one is a 400 on `cursor`, never a 500. `idPattern` is the
 * form of the list's ids: UUIDs unless the rows have ids of their own form (`evt_...` events).
 */
export function decodeCursor(value: string, idPattern: RegExp = UUID): Cursor {
  const [iso, id] = Buffer.from(value, 'base64url').toString('utf8').split('|');
  const createdAt = new Date(iso ?? '');
  const time = createdAt.getTime();
  if (!id || !idPattern.test(id) || !(time >= EARLIEST && time <= LATEST)) {
    throw badRequest('Invalid cursor.', { cursor: [MESSAGES.cursor] });
  }
  return { createdAt, id };
}

/** Splits a page fetched with one extra row into results and the next cursor. */
export function page<T extends { createdAt: Date; id: string }>(
  rows: T[],
  limit: number,
): { rows: T[]; next: string | null } {
  if (rows.length <= limit) return { rows, next: null };
  const kept = rows.slice(0, limit);
  const last = kept[kept.length - 1] as T;
  return { rows: kept, next: encodeCursor({ createdAt: last.createdAt, id: last.id }) };
}

/** The filter for rows after `cursor` in newest-first order (empty on the first page). */
export function olderThan(cursor: string | undefined) {
  if (!cursor) return {};
  const { createdAt, id } = decodeCursor(cursor);
  return { $or: [{ createdAt: { $lt: createdAt } }, { createdAt, id: { $lt: id } }] };
}

/** Rows a seller owns in one environment, newest first, one keyset page (`next` is the cursor or null). */
export async function listOwned<
  T extends { id: string; sellerId: string; environment: string; createdAt: Date },
>(
  em: EntityManager,
  entity: EntitySchema<T>,
  scope: Pick<Scope, 'sellerId' | 'environment'>,
  query: { limit: number; cursor?: string },
  where: Record<string, unknown> = {},
): Promise<{ rows: T[]; next: string | null }> {
  const filter = {
    sellerId: scope.sellerId,
    environment: scope.environment,
    ...where,
    ...olderThan(query.cursor),
  };
  const rows = await em.find(entity, filter as FilterQuery<T>, {
    orderBy: { createdAt: 'desc', id: 'desc' } as OrderDefinition<T>,
    limit: query.limit + 1,
  });
  return page(rows as T[], query.limit);
}
