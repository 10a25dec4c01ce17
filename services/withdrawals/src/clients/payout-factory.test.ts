import { loadWithdrawalsConfig } from '../config';
import type { PayoutAdapters } from '../domain/payouts';
import { payoutAdaptersFromConfig } from './payout-factory';

// Plain http (a simulator's), so no client certificate is needed to build them.
const LIVE = {
  PAYOUT_PSP: 'efi',
  PAYOUT_PSP_API_URL: 'http://efi.example',
  PAYOUT_PSP_CLIENT_ID: 'id',
  PAYOUT_PSP_CLIENT_SECRET: 'secret',
  PAYOUT_PIX_KEY: 'payouts@example.com',
};
const HOMOLOGATION = {
  PAYOUT_PSP_TEST: 'efi',
  PAYOUT_PSP_TEST_API_URL: 'http://homologation.efi.example',
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
    expect([adapters.live.name, adapters.test.name]).toEqual(['efi', 'sandbox']);
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
    expect([both.live.name, both.test.name]).toEqual(['efi', 'efi']);
    expect(both.test).not.toBe(both.live);
    const sandboxLive = build(HOMOLOGATION);
    expect([sandboxLive.live.name, sandboxLive.test.name]).toEqual(['sandbox', 'efi']);
  });

  it('refuses a hand-made configuration without the homologation paying key, naming it', () => {
    const config = loadWithdrawalsConfig({ ...LIVE, ...HOMOLOGATION });
    expect(() => payoutAdaptersFromConfig({ ...config, PAYOUT_PIX_KEY_TEST: undefined })).toThrow(
      'PAYOUT_PSP_TEST: efi needs its URL, credentials and PAYOUT_PIX_KEY_TEST',
    );
  });
});
