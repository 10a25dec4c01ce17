import type { EntityManager } from '@mikro-orm/postgresql';
import type { Sql } from '@seller-api/service-kit';
import { NoSellerError } from '../domain/accounts';
import { SellerSchema, UserSchema, type User } from './entities';
import type { KeyVersions } from './key-holders';

/** A key change (KeyVersions): the replicas' cached key holders carry the seller's status. */
export async function setSellerStatus(
  sql: Sql,
  versions: KeyVersions,
  sellerId: string,
  status: 'ACTIVE' | 'SUSPENDED',
): Promise<void> {
  await versions.change(() =>
    sql.query('update gateway.sellers set status = $1 where id = $2', [status, sellerId]),
  );
}

/**
 * Renames the seller of a seller user. Orders, charges and withdrawals keep the seller's name as it was
 * when they were made (a receipt does not change), so the new name shows in those made from now on and
 * in their webhooks (docs/orders.md, "The seller's name"). A key change (KeyVersions): every gateway
 * replica's cached key holder carries the name it forwards to the services.
 */
export async function renameSeller(
  sql: Sql,
  em: EntityManager,
  versions: KeyVersions,
  rawEmail: string,
  name: string,
): Promise<{ user: User; previous: string }> {
  const email = rawEmail.trim().toLowerCase();
  const user = await em.findOne(UserSchema, { email });
  if (!user) throw new NoSellerError(`no user has the e-mail ${email} (nothing was changed)`);
  const seller = user.sellerId ? await em.findOne(SellerSchema, { id: user.sellerId }) : null;
  if (!seller)
    throw new NoSellerError(
      `${email} is a ${user.role} user, without a seller to name (nothing was changed)`,
    );
  const previous = seller.name;
  await versions.change(() =>
    sql.query('update gateway.sellers set name = $1 where id = $2', [name.trim(), seller.id]),
  );
  return { user, previous };
}
