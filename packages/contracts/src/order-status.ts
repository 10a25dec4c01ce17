import { z } from 'zod';

// Its own module: payments' internal charge state uses it too, and orders imports payments.
/** Order status in event spelling (CANCELLED, two L); MED is internal: it has no event (docs/orders.md). */
export const OrderStatus = z.enum([
  'PENDING',
  'PAID',
  'EXPIRED',
  'CANCELLED',
  'REFUNDED',
  'CHARGEBACK',
  'MED',
]);
export type OrderStatus = z.infer<typeof OrderStatus>;
