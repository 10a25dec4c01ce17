import { idEnvioOf } from '../../services/withdrawals/src/clients/efi-payouts';
import { startEfiSimulator, type EfiSimulator } from '../support/efi-simulator';
import { apiPixPspEnv, startPspSimulator, type PspSimulator } from '../support/psp-simulator';
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
 * PSP_TEST_* and PAYOUT_PSP_TEST_* point the test environment at PSPs' homologation endpoints (here a
 * second API Pix simulator for charges and a second Efí simulator for payouts): test charges, payments,
 * refunds and payouts go there and never to the live PSPs, and each PSP's notifications pay only its
 * own environment's charges.
 */

const TEST_WEBHOOK_SECRET = 'homologation-webhook-secret-0123';
const TEST_PIX_KEY = 'pix-homologation@seller-api.example';
const TEST_PAYING_KEY = 'payouts-homologation@seller-api.example';
const LIVE_PAYING_KEY = 'payouts@seller-api.example';
let live: PspSimulator;
let livePayouts: EfiSimulator;
let homologation: PspSimulator;
let homologationPayouts: EfiSimulator;

// The simulators start before the services and stop after them.
beforeAll(async () => {
  [live, livePayouts, homologation, homologationPayouts] = await Promise.all([
    startLivePsp(),
    startLivePayoutPsp(LIVE_PAYING_KEY),
    startPspSimulator({ clientId: 'homologation-client', clientSecret: 'homologation-secret' }),
    startEfiSimulator({
      clientId: 'homologation-payouts-client',
      clientSecret: 'homologation-payouts-secret',
      payingKey: TEST_PAYING_KEY,
    }),
  ]);
});
const h = useHarness(() => ({
  ...livePspSettings(live, livePayouts, { pixKey: 'pix@seller-api.example', payingKey: LIVE_PAYING_KEY }),
  ...apiPixPspEnv(homologation, 'test', { webhookSecret: TEST_WEBHOOK_SECRET, pixKey: TEST_PIX_KEY }),
  PAYOUT_PSP_TEST: 'efi',
  PAYOUT_PSP_TEST_API_URL: homologationPayouts.url,
  PAYOUT_PSP_TEST_CLIENT_ID: 'homologation-payouts-client',
  PAYOUT_PSP_TEST_CLIENT_SECRET: 'homologation-payouts-secret',
  PAYOUT_PIX_KEY_TEST: TEST_PAYING_KEY,
}));
afterAll(async () => {
  await Promise.all([
    live?.close(),
    livePayouts?.close(),
    homologation?.close(),
    homologationPayouts?.close(),
  ]);
});

it('sends every test action to the homologation PSPs and none to the live ones', async () => {
  const seen = { charges: heardSoFar(live), payouts: heardSoFar(livePayouts) };
  const seller = await newSeller(h, 'test');
  const kept = await order(h, seller.key);
  const refunded = await order(h, seller.key);
  for (const o of [kept, refunded]) {
    expect(homologation.cobs.get(o.pix.qr_code_id)).toMatchObject({ chave: TEST_PIX_KEY });
    expect(live.cobs.has(o.pix.qr_code_id)).toBe(false);
    const paid = await homologation.pay(o.pix.qr_code_id, {
      webhookUrl: pspWebhookUrl(h),
      secret: TEST_WEBHOOK_SECRET,
    });
    expect(JSON.parse(paid.body)).toMatchObject({ data: { outcomes: ['applied'] } });
  }
  await balanceBecomes(h, seller.key, { available_amount: 2 * SALE_NET });
  await act(h, seller.key, `/sellers/orders/${refunded.uuid}/refund/`);
  expect(await paymentStatus(h, seller.key, refunded.uuid)).toBe('REFUNDED');
  expect(await paymentStatus(h, seller.key, kept.uuid)).toBe('PAID');
  const refundedPayment = homologation.cobs.get(refunded.pix.qr_code_id)?.pix[0]?.endToEndId;
  expect(homologation.refunds).toEqual([
    expect.objectContaining({ endToEndId: refundedPayment, valor: '150.00' }),
  ]);

  await balanceBecomes(h, seller.key, { available_amount: SALE_NET });
  const w = await withdraw(h, seller.key, {
    amount: 5000,
    pix_key: 'seller@example.com',
    pix_key_type: 'email',
  });
  await statusBecomes(h, seller.key, w.uuid, 'PAID');
  expect(homologationPayouts.sends.get(idEnvioOf(w.uuid))).toMatchObject({
    valor: '50.00',
    chave: TEST_PAYING_KEY,
    favorecido: { chave: 'seller@example.com' },
    status: 'REALIZADO',
  });

  expect(live.requests.slice(seen.charges.requests)).toEqual([]);
  expect(live.tokenRequests).toBe(seen.charges.tokens);
  expect(livePayouts.requests.slice(seen.payouts.requests)).toEqual([]);
  expect(livePayouts.tokenRequests).toBe(seen.payouts.tokens);
});

it("pays each environment's charges only from its own PSP's notifications", async () => {
  const liveSeller = await newSeller(h, 'live');
  const testSeller = await newSeller(h, 'test');
  const liveOrder = await order(h, liveSeller.key);
  const testOrder = await order(h, testSeller.key);
  expect(live.cobs.has(liveOrder.pix.qr_code_id)).toBe(true);
  expect(homologation.cobs.has(testOrder.pix.qr_code_id)).toBe(true);

  const pix = (txid: string) => ({
    pix: [{ endToEndId: live.newEndToEndId(), txid, valor: '150.00', horario: new Date().toISOString() }],
  });
  // The homologation PSP cannot pay a live charge, nor the live PSP a test one.
  const fromHomologation = await homologation.notify(pix(liveOrder.pix.qr_code_id), {
    webhookUrl: pspWebhookUrl(h),
    secret: TEST_WEBHOOK_SECRET,
  });
  const fromLive = await live.notify(pix(testOrder.pix.qr_code_id), {
    webhookUrl: pspWebhookUrl(h),
    secret: LIVE_WEBHOOK_SECRET,
  });
  for (const delivery of [fromHomologation, fromLive]) {
    expect(delivery.status).toBe(200);
    expect(JSON.parse(delivery.body)).toMatchObject({ data: { outcomes: ['unknown_txid'] } });
  }
  expect(await paymentStatus(h, liveSeller.key, liveOrder.uuid)).toBe('PENDING');
  expect(await paymentStatus(h, testSeller.key, testOrder.uuid)).toBe('PENDING');

  // Each PSP's own notification does.
  await live.pay(liveOrder.pix.qr_code_id, { webhookUrl: pspWebhookUrl(h), secret: LIVE_WEBHOOK_SECRET });
  await homologation.pay(testOrder.pix.qr_code_id, {
    webhookUrl: pspWebhookUrl(h),
    secret: TEST_WEBHOOK_SECRET,
  });
  await waitFor(async () => (await paymentStatus(h, liveSeller.key, liveOrder.uuid)) === 'PAID' || null, {
    what: 'live order PAID',
  });
  await waitFor(async () => (await paymentStatus(h, testSeller.key, testOrder.uuid)) === 'PAID' || null, {
    what: 'test order PAID',
  });
});

it("a notification of the other environment's PSP records nothing: the real payment's id stays free", async () => {
  const liveSeller = await newSeller(h, 'live');
  const liveOrder = await order(h, liveSeller.key);
  // A holder of the test PSP's secret names a live charge with the end-to-end id its payment will have.
  const endToEndId = live.newEndToEndId();
  const forged = await homologation.notify(
    {
      pix: [
        { endToEndId, txid: liveOrder.pix.qr_code_id, valor: '150.00', horario: new Date().toISOString() },
      ],
    },
    { webhookUrl: pspWebhookUrl(h), secret: TEST_WEBHOOK_SECRET },
  );
  expect(forged.status).toBe(200);
  expect(JSON.parse(forged.body)).toMatchObject({ data: { outcomes: ['unknown_txid'] } });
  const [recorded] = await h.system.payments.runtime.orm.em
    .fork()
    .execute<Array<{ n: string }>>(
      `select count(*) as n from payments.psp_payments where end_to_end_id = ?`,
      [endToEndId],
    );
  expect(Number(recorded?.n)).toBe(0);

  // The live PSP's notification of that very payment pays the order.
  const paid = await live.pay(liveOrder.pix.qr_code_id, {
    webhookUrl: pspWebhookUrl(h),
    secret: LIVE_WEBHOOK_SECRET,
    endToEndId,
  });
  expect(paid.status).toBe(200);
  expect(JSON.parse(paid.body)).toMatchObject({ data: { outcomes: ['applied'] } });
  await waitFor(async () => (await paymentStatus(h, liveSeller.key, liveOrder.uuid)) === 'PAID' || null, {
    what: 'live order PAID',
  });
});
