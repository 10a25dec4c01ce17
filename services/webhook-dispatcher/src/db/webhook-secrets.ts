import type { Sql } from '@seller-api/service-kit';

/** A webhook's secret as stored: clear (a row of before sealing) or sealed. */
export interface StoredSecret {
  id: string;
  secret: string | null;
  secret_sealed: string | null;
}

/**
 * Up to `limit` webhooks, after the id `after` (null: from the first), whose secret is not sealed with the current key (`currentPrefix`): clear ones,
 * and those sealed with the previous key. Every status: a retired or deleted webhook's secret is a
 * secret all the same. The table is small (at most 50 live webhooks per seller and environment), so
 * this reads it whole rather than keep an index for a job that mostly finds nothing.
 */
export async function unsealedSecrets(
  sql: Sql,
  currentPrefix: string,
  after: string | null,
  limit: number,
): Promise<StoredSecret[]> {
  return sql.query<StoredSecret>(
    `select id, secret, secret_sealed from webhooks.webhooks
      where (secret is not null or not starts_with(secret_sealed, $1))
        and ($2::uuid is null or id > $2::uuid)
      order by id limit $3`,
    [currentPrefix, after, limit],
  );
}

/**
 * Stores each webhook's secret sealed anew and clears the clear one, where the row still holds what
 * was read (a compare and set: a replica doing the same at once, or a new registration, wins; no lock
 * is held between the read and this). Answers how many rows changed.
 */
export async function storeSealedSecrets(
  sql: Sql,
  rows: Array<StoredSecret & { sealed: string }>,
): Promise<number> {
  if (rows.length === 0) return 0;
  const [result] = await sql.query<{ n: number }>(
    `with v as (
       select * from unnest($1::uuid[], $2::text[], $3::text[], $4::text[]) as v(id, secret, secret_sealed, sealed)),
     changed as (
       update webhooks.webhooks w set secret_sealed = v.sealed, secret = null
         from v
        where w.id = v.id and w.secret is not distinct from v.secret
          and w.secret_sealed is not distinct from v.secret_sealed
       returning 1)
     select count(*)::int as n from changed`,
    [
      rows.map((r) => r.id),
      rows.map((r) => r.secret),
      rows.map((r) => r.secret_sealed),
      rows.map((r) => r.sealed),
    ],
  );
  return result?.n ?? 0;
}
