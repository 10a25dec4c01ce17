import { raw } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { OrderListQuery } from '@seller-api/contracts';
import { OrderItemSchema, OrderSchema, type OrderItemRow, type OrderRow } from '../db/entities';
import { assertOwned, olderThan, page, type Scope } from '@seller-api/service-kit';
import { endOfDayOrInstant, startOfDayOrInstant } from './dates';

/** The order alone, with the ownership rule (404 other environment, 403 other seller). */
export async function findOwnedOrder(em: EntityManager, scope: Scope, id: string): Promise<OrderRow> {
  return assertOwned(await em.findOne(OrderSchema, { id }), scope, 'Order');
}

export async function getOrder(
  em: EntityManager,
  scope: Scope,
  id: string,
): Promise<{ order: OrderRow; items: OrderItemRow[] }> {
  const order = await findOwnedOrder(em, scope, id);
  const items = await em.find(OrderItemSchema, { orderId: id }, { orderBy: { position: 'asc' } });
  return { order, items };
}

/**
 * Newest first, keyset-paginated on (created_at, id) so pages stay fast and stable at any depth, with
 * the list's filters and searches (docs/orders.md, "List orders").
 */
export async function listOrders(em: EntityManager, scope: Scope, query: OrderListQuery) {
  const createdAt = {
    ...(query.created_from ? { $gte: startOfDayOrInstant(query.created_from) } : {}),
    ...(query.created_to ? { $lte: endOfDayOrInstant(query.created_to) } : {}),
  };
  const rows = await em.find(
    OrderSchema,
    {
      sellerId: scope.sellerId,
      environment: scope.environment,
      ...(query.status ? { status: query.status } : {}),
      ...(query.shipping_status ? { shippingStatus: query.shipping_status } : {}),
      // Exact matches, on orders_customer_email_idx (lowercased) and orders_customer_tax_id_idx.
      ...(query.customer_email
        ? { [raw('lower(customer_email)')]: raw('lower(?)', [query.customer_email]) }
        : {}),
      ...(query.customer_tax_id ? { customerTaxId: query.customer_tax_id } : {}),
      ...(Object.keys(createdAt).length ? { createdAt } : {}),
      ...olderThan(query.cursor),
    },
    {
      orderBy: { createdAt: 'desc', id: 'desc' },
      limit: query.limit + 1,
      fields: [
        'id',
        'status',
        'createdAt',
        'paidAt',
        'customerName',
        'customerEmail',
        'method',
        'grossAmount',
        'shippingAmount',
        'trackingCode',
        'shippingStatus',
      ],
    },
  );
  return page(rows, query.limit);
}
