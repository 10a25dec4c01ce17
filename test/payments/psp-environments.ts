import { CreatedOrder, OrderDetail } from '@seller-api/contracts';
import { createOrder, standaloneOrder } from '../orders/fixtures';
import { startPspSimulator, type PspSimulator } from '../support/psp-simulator';
import { call } from '../support/system';
import type { Harness } from '../withdrawals/helpers';

/*
 * What the tests of the test environment's PSP routing share: a simulator standing for the live PSP,
 * the harness settings that make it the live environment's PSP for charges and payouts, and the
 * calls every such test makes.
 */

export const LIVE_WEBHOOK_SECRET = 'live-psp-webhook-secret-0123';

export const startLivePsp = (): Promise<PspSimulator> =>
  startPspSimulator({ clientId: 'live-client', clientSecret: 'live-secret' });

/**
 * `live` as the live environment's PSP for charges (PIX key `pixKey`) and payouts (paying from
 * `payingKey`), with production's auto-approval: withdrawals below R$ 500,00 go out without an
 * operator.
 */
export function livePspSettings(
  live: PspSimulator,
  keys: { pixKey: string; payingKey: string },
): Record<string, string> {
  return {
    PIX_PSP: 'bacen-api-pix',
    PSP_API_URL: live.url,
    PSP_CLIENT_ID: 'live-client',
    PSP_CLIENT_SECRET: 'live-secret',
    PSP_WEBHOOK_SECRET: LIVE_WEBHOOK_SECRET,
    PIX_KEY: keys.pixKey,
    PAYOUT_PSP: 'bacen-api-pix',
    PAYOUT_PSP_API_URL: live.url,
    PAYOUT_PSP_CLIENT_ID: 'live-client',
    PAYOUT_PSP_CLIENT_SECRET: 'live-secret',
    PAYOUT_PIX_KEY: keys.payingKey,
    WITHDRAWAL_AUTO_APPROVE_BELOW: '50000',
    PAYOUT_INTERVAL_MS: '50',
  };
}

/** A standalone order of `key`'s seller; throws unless it was created. */
export async function order(h: Harness, key: string): Promise<CreatedOrder> {
  const res = await createOrder(h.gateway.url, key, standaloneOrder());
  if (res.status !== 201) throw new Error(`order: ${res.status} ${res.text}`);
  return CreatedOrder.parse(res.body.data);
}

export const paymentStatus = async (h: Harness, key: string, uuid: string) =>
  OrderDetail.parse((await call(`${h.gateway.url}/sellers/orders/${uuid}/`, { key })).body.data).payment
    .status;

/** Where the PSPs' notifications are sent. */
export const pspWebhookUrl = (h: Harness) => `${h.gateway.url}/psp/webhook`;
