import { CreatedOrder, OrderDetail } from '@seller-api/contracts';
import { createOrder, standaloneOrder } from '../orders/fixtures';
import { startEfiSimulator, type EfiSimulator } from '../support/efi-simulator';
import { apiPixPspEnv, startPspSimulator, type PspSimulator } from '../support/psp-simulator';
import { call } from '../support/system';
import type { HarnessHandles } from '../withdrawals/helpers';

/*
 * What the tests of the test environment's PSP routing share: simulators standing for the live PSPs
 * (API Pix for charges, Efí for payouts), the harness settings that make them the live environment's
 * PSPs, and the calls every such test makes.
 */

export const LIVE_WEBHOOK_SECRET = 'live-psp-webhook-secret-0123';

export const startLivePsp = (): Promise<PspSimulator> =>
  startPspSimulator({ clientId: 'live-client', clientSecret: 'live-secret' });

/** Efí as the live payout PSP, for the account whose Pix key is `payingKey`. */
export const startLivePayoutPsp = (payingKey: string): Promise<EfiSimulator> =>
  startEfiSimulator({ clientId: 'live-payouts-client', clientSecret: 'live-payouts-secret', payingKey });

/** What a PSP has heard so far: compare with a later one to show it heard nothing more. */
export const heardSoFar = (psp: Pick<PspSimulator | EfiSimulator, 'requests' | 'tokenRequests'>) => ({
  requests: psp.requests.length,
  tokens: psp.tokenRequests,
});

/**
 * `live` as the live environment's PSP for charges (PIX key `pixKey`) and `payouts` (Efí, paying from
 * `payingKey`, the key it was started with) for payouts, with production's auto-approval: withdrawals
 * below R$ 500,00 go out without an operator.
 */
export function livePspSettings(
  live: PspSimulator,
  payouts: EfiSimulator,
  keys: { pixKey: string; payingKey: string },
): Record<string, string> {
  return {
    ...apiPixPspEnv(live, 'live', { webhookSecret: LIVE_WEBHOOK_SECRET, pixKey: keys.pixKey }),
    PAYOUT_PSP: 'efi',
    PAYOUT_PSP_API_URL: payouts.url,
    PAYOUT_PSP_CLIENT_ID: 'live-payouts-client',
    PAYOUT_PSP_CLIENT_SECRET: 'live-payouts-secret',
    PAYOUT_PIX_KEY: keys.payingKey,
    WITHDRAWAL_AUTO_APPROVE_BELOW: '50000',
    PAYOUT_INTERVAL_MS: '50',
    // Efí answers a send EM_PROCESSAMENTO: the worker reads it back this soon after.
    PAYOUT_RETRY_AFTER_MS: '100',
  };
}

/** A standalone order of `key`'s seller; throws unless it was created. */
export async function order(h: HarnessHandles, key: string): Promise<CreatedOrder> {
  const res = await createOrder(h.gateway.url, key, standaloneOrder());
  if (res.status !== 201) throw new Error(`order: ${res.status} ${res.text}`);
  return CreatedOrder.parse(res.body.data);
}

export const paymentStatus = async (h: HarnessHandles, key: string, uuid: string) =>
  OrderDetail.parse((await call(`${h.gateway.url}/sellers/orders/${uuid}/`, { key })).body.data).payment
    .status;

/** Where the PSPs' notifications are sent. */
export const pspWebhookUrl = (h: HarnessHandles) => `${h.gateway.url}/psp/webhook`;
