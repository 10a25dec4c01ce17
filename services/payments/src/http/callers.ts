import type { AccessTable } from '@seller-api/service-kit';

/**
 * Who may call what on payments (docs/deploy.md, "Internal keys"). A PSP's notifications are not here:
 * they authenticate themselves (psp-senders.ts), and only the gateway's key vouches for a PSP's
 * certificate (kit psp-client.ts).
 */
export const PAYMENTS_ACCESS: AccessTable = {
  // The panel's order page shows a pending order's QR code.
  gateway: [{ roles: ['seller'], routes: ['GET /internal/charges/:uuid/'] }],
  // An order's charge: made, cancelled, refunded and simulated in the sandbox for the seller.
  orders: [
    {
      roles: ['seller'],
      routes: [
        'POST /internal/charges/',
        'POST /internal/charges/batch/',
        'POST /internal/charges/:uuid/:action/',
      ],
    },
  ],
  withdrawals: [
    // The sweep of refund holds reads the charge of the hold's order.
    { roles: ['seller'], routes: ['GET /internal/charges/:uuid/'] },
    // The ledger's reconciliation reads the paid charges of one environment.
    { roles: ['operator'], routes: ['GET /internal/transactions/'] },
  ],
};
