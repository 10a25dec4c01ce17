import type { AccessTable } from '@seller-api/service-kit';

/**
 * Who may call what on orders (docs/deploy.md, "Internal keys"): the gateway only, for a seller's
 * public routes. No other service calls orders.
 */
export const ORDERS_ACCESS: AccessTable = {
  gateway: [
    {
      roles: ['seller'],
      routes: [
        'POST /sellers/products/',
        'GET /sellers/products/',
        'GET /sellers/products/:uuid/',
        'POST /sellers/affiliates/',
        'GET /sellers/affiliates/',
        'POST /sellers/orders/',
        'GET /sellers/orders/',
        'GET /sellers/orders/summary/',
        'GET /sellers/orders/:uuid/',
        'GET /sellers/orders/:uuid/amount-due/',
        'PATCH /sellers/orders/:uuid/tracking/',
        'POST /sellers/orders/:uuid/cancel/',
        'POST /sellers/orders/:uuid/refund/',
        'POST /sandbox/orders/:uuid/pay/',
        'POST /sandbox/orders/:uuid/expire/',
        'POST /sandbox/orders/:uuid/med/',
        'POST /sandbox/orders/:uuid/chargeback/',
        'POST /sandbox/orders/:uuid/med/resolve/',
      ],
    },
  ],
};
