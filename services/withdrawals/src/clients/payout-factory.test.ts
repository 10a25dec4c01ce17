import { loadWithdrawalsConfig } from '../config';
import type { PayoutAdapters } from '../domain/payouts';
import { payoutAdaptersFromConfig } from './payout-factory';

const LIVE = {
  PAYOUT_PSP: 'bacen-api-pix',
  PAYOUT_PSP_API_URL: 'https://psp.example/api/v2',
  PAYOUT_PSP_CLIENT_ID: 'id',
  PAYOUT_PSP_CLIENT_SECRET: 'secret',
  PAYOUT_PIX_KEY: 'payouts@example.com',
};
const HOMOLOGATION = {
  PAYOUT_PSP_TEST: 'bacen-api-pix',
  PAYOUT_PSP_TEST_API_URL: 'https://homolog.psp.example/api/v2',
  PAYOUT_PSP_TEST_CLIENT_ID: 'homolog-id',
  PAYOUT_PSP_TEST_CLIENT_SECRET: 'homolog-secret',
  PAYOUT_PIX_KEY_TEST: 'payouts-homolog@example.com',
};

const built: PayoutAdapters[] = [];
const build = (source: NodeJS.ProcessEnv) => {
  const adapters = payoutAdaptersFromConfig(loadWithdrawalsConfig(source));
  built.push(adapters);
  return adapters;
};
afterAll(() => Promise.all(built.flatMap((a) => [a.live.close?.(), a.test.close?.()])));

describe('the payout PSP of each environment', () => {
  it('pays test withdrawals through the sandbox when the live PSP is real', async () => {
    const adapters = build(LIVE);
    expect([adapters.live.name, adapters.test.name]).toEqual(['bacen-api-pix', 'sandbox']);
    const paid = await adapters.test.pay({
      withdrawalId: '9b8a7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
      amount: 5000,
      pixKey: 'seller@example.com',
      pixKeyType: 'email',
      environment: 'test',
    });
    expect(paid).toMatchObject({ status: 'paid' });
  });

  it('uses a homologation PSP for test only when PAYOUT_PSP_TEST names one', () => {
    const both = build({ ...LIVE, ...HOMOLOGATION });
    expect([both.live.name, both.test.name]).toEqual(['bacen-api-pix', 'bacen-api-pix']);
    expect(both.test).not.toBe(both.live);
    const sandboxLive = build(HOMOLOGATION);
    expect([sandboxLive.live.name, sandboxLive.test.name]).toEqual(['sandbox', 'bacen-api-pix']);
  });

  it('refuses a hand-made configuration without the homologation paying key, naming it', () => {
    const config = loadWithdrawalsConfig({ ...LIVE, ...HOMOLOGATION });
    expect(() => payoutAdaptersFromConfig({ ...config, PAYOUT_PIX_KEY_TEST: undefined })).toThrow(
      'PAYOUT_PSP_TEST: bacen-api-pix needs its PSP URL, credentials and PAYOUT_PIX_KEY_TEST',
    );
  });
});
