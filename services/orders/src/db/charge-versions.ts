import type { Sql } from '@seller-api/service-kit';

/** The charge version each of these orders mirrors (domain/order-status.ts), for those that exist. */
export async function chargeVersionsOf(sql: Sql, orderIds: string[]): Promise<Map<string, number>> {
  const rows = await sql.query<{ id: string; charge_version: number }>(
    `select id, charge_version from orders.orders where id = any($1::uuid[])`,
    [orderIds],
  );
  return new Map(rows.map((row) => [row.id, row.charge_version]));
}
