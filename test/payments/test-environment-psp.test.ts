import { DEFAULT_PIX_KEY } from '../../services/payments/src/config';
import { idEnvioOf } from '../../services/withdrawals/src/clients/efi-payouts';
import type { EfiSimulator } from '../support/efi-simulator';
import type { PspSimulator } from '../support/psp-simulator';
import { waitFor } from '../support/wait';
import {
  act,
  balanceBecomes,
  newSeller,
  useHarness,
  statusBecomes,
  withdraw,
  SALE_NET,
} from '../withdrawals/helpers';
import {
  LIVE_WEBHOOK_SECRET,
  heardSoFar,
  livePspSettings,
  order,
  paymentStatus,
  pspWebhookUrl,
  startLivePayoutPsp,
  startLivePsp,
} from './psp-environments';

/*
 * The test environment never moves real money. The PSP simulators are configured as the real PSPs of
 * the live environment (API Pix for charges and refunds, Efí for payouts), with production's
 * auto-approval: a test key's orders, payments, refunds and withdrawals all happen in the sandbox and
 * the live PSPs hear nothing, while a live key's still go to them.
 */

const LIVE_PIX_KEY = 'pix@seller-api.example';
const LIVE_PAYING_KEY = 'payouts@seller-api.example';
let live: PspSimulator;
let livePayouts: EfiSimulator;

// The simulators start before the services and stop after them.
beforeAll(async () => {
  [live, livePayouts] = await Promise.all([startLivePsp(), startLivePayoutPsp(LIVE_PAYING_KEY)]);
});
const h = useHarness(() =>
  livePspSettings(live, livePayouts, { pixKey: LIVE_PIX_KEY, payingKey: LIVE_PAYING_KEY }),
);
afterAll(() => Promise.all([live?.close(), livePayouts?.close()]));

it('keeps a test key in the sandbox: charge, payment, refund and an auto-approved payout reach no PSP', async () => {
  const seen = { charges: heardSoFar(live), payouts: heardSoFar(livePayouts) };
  const seller = await newSeller(h, 'test');

  const kept = await order(h, seller.key);
  const refunded = await order(h, seller.key);
  // The sandbox's static BR Code, with the sandbox's key: no payer can send real money to the merchant.
  for (const o of [kept, refunded]) {
    expect(o.pix.qr_code_id).toMatch(/^[A-Za-z0-9]{25}$/);
    expect(o.pix.copy_and_paste).toContain(DEFAULT_PIX_KEY);
    expect(o.pix.copy_and_paste).not.toContain(LIVE_PIX_KEY);
  }
  await act(h, seller.key, `/sandbox/orders/${kept.uuid}/pay/`);
  await act(h, seller.key, `/sandbox/orders/${refunded.uuid}/pay/`);
  await balanceBecomes(h, seller.key, { available_amount: 2 * SALE_NET });
  await act(h, seller.key, `/sellers/orders/${refunded.uuid}/refund/`);
  expect(await paymentStatus(h, seller.key, kept.uuid)).toBe('PAID');
  expect(await paymentStatus(h, seller.key, refunded.uuid)).toBe('REFUNDED');
  await balanceBecomes(h, seller.key, { available_amount: SALE_NET });

  const w = await withdraw(h, seller.key, { amount: 5000, pix_key: '52998224725', pix_key_type: 'cpf' });
  const paid = await statusBecomes(h, seller.key, w.uuid, 'PAID');
  expect(paid).toMatchObject({ amount: 5000, failure_reason: null });
  expect(paid.decided_at).toEqual(expect.any(String));
  await balanceBecomes(h, seller.key, { available_amount: SALE_NET - 5000, pending_amount: 0 });

  // Not one request to either live PSP, not even for a token.
  expect(live.requests.slice(seen.charges.requests)).toEqual([]);
  expect(live.tokenRequests).toBe(seen.charges.tokens);
  expect(livePayouts.requests.slice(seen.payouts.requests)).toEqual([]);
  expect(livePayouts.tokenRequests).toBe(seen.payouts.tokens);
  expect(livePayouts.sends.has(idEnvioOf(w.uuid))).toBe(false);
});

it("never pays a test charge from the live PSP's notification", async () => {
  const seller = await newSeller(h, 'test');
  const o = await order(h, seller.key);
  const delivery = await live.notify(
    {
      pix: [
        {
          endToEndId: live.newEndToEndId(),
          txid: o.pix.qr_code_id,
          valor: '150.00',
          horario: new Date().toISOString(),
        },
      ],
    },
    { webhookUrl: pspWebhookUrl(h), secret: LIVE_WEBHOOK_SECRET },
  );
  expect(delivery.status).toBe(200);
  expect(JSON.parse(delivery.body)).toMatchObject({ data: { outcomes: ['unknown_txid'] } });
  expect(await paymentStatus(h, seller.key, o.uuid)).toBe('PENDING');
});

it('still sends a live key to the live PSPs: charge, payment, refund and payout', async () => {
  const seller = await newSeller(h, 'live');
  const kept = await order(h, seller.key);
  const refunded = await order(h, seller.key);
  for (const o of [kept, refunded]) {
    expect(live.cobs.get(o.pix.qr_code_id)).toMatchObject({
      chave: LIVE_PIX_KEY,
      valor: { original: '150.00' },
    });
    const paid = await live.pay(o.pix.qr_code_id, {
      webhookUrl: pspWebhookUrl(h),
      secret: LIVE_WEBHOOK_SECRET,
    });
    expect(paid.status).toBe(200);
  }
  await waitFor(async () => (await paymentStatus(h, seller.key, refunded.uuid)) === 'PAID' || null, {
    what: 'live order PAID',
  });
  await balanceBecomes(h, seller.key, { available_amount: 2 * SALE_NET });
  await act(h, seller.key, `/sellers/orders/${refunded.uuid}/refund/`);
  expect(live.refunds).toContainEqual(
    expect.objectContaining({
      valor: '150.00',
      endToEndId: live.cobs.get(refunded.pix.qr_code_id)?.pix[0]?.endToEndId,
    }),
  );

  await balanceBecomes(h, seller.key, { available_amount: SALE_NET });
  const w = await withdraw(h, seller.key, { amount: 5000, pix_key: '52998224725', pix_key_type: 'cpf' });
  await statusBecomes(h, seller.key, w.uuid, 'PAID');
  expect(livePayouts.sends.get(idEnvioOf(w.uuid))).toMatchObject({
    valor: '50.00',
    chave: LIVE_PAYING_KEY,
    favorecido: { chave: '52998224725' },
    status: 'REALIZADO',
  });
});
