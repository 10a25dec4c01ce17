import type { AccessTable } from '@seller-api/service-kit';

/**
 * Who may call what on withdrawals (docs/deploy.md, "Internal keys"): the gateway for sellers' and
 * operators' public routes; orders only to reserve and release a refund's hold. Only the gateway may
 * present an operator, so only it can approve a withdrawal.
 */
export const WITHDRAWALS_ACCESS: AccessTable = {
  gateway: [
    {
      roles: ['seller'],
      routes: [
        'GET /finance/balance/',
        'POST /finance/withdrawals/',
        'GET /finance/withdrawals/',
        'GET /finance/withdrawals/:uuid/',
      ],
    },
    {
      roles: ['operator'],
      routes: [
        'GET /ops/withdrawals/',
        'GET /ops/withdrawals/suspensions/',
        'POST /ops/withdrawals/sellers/:seller_id/suspend/',
        'POST /ops/withdrawals/sellers/:seller_id/unsuspend/',
        'GET /ops/withdrawals/:uuid/',
        'POST /ops/withdrawals/:uuid/approve/',
        'POST /ops/withdrawals/:uuid/deny/',
        'POST /ops/withdrawals/:uuid/cancel/',
      ],
    },
  ],
  orders: [
    {
      roles: ['seller'],
      routes: ['POST /internal/refund-holds/:uuid/', 'POST /internal/refund-holds/:uuid/release/'],
    },
  ],
};
