import { SandboxPayouts } from './sandbox-payouts';

const request = {
  withdrawalId: '9b8a7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d',
  amount: 5000,
  pixKey: 'seller@example.com',
  pixKeyType: 'email' as const,
  environment: 'test' as const,
};

describe('sandbox payouts', () => {
  it('pays at once, with the same reference when asked again', async () => {
    const psp = new SandboxPayouts();
    const first = await psp.pay(request);
    expect(first).toEqual({ status: 'paid', reference: expect.stringMatching(/^E\d{8}[0-9a-f]{23}$/) });
    expect(await psp.pay(request)).toEqual(first);
  });

  it('fails for the key fail@example.com, whatever its case', async () => {
    const psp = new SandboxPayouts();
    for (const pixKey of ['fail@example.com', 'FAIL@example.com']) {
      expect(await psp.pay({ ...request, pixKey })).toEqual({
        status: 'failed',
        reason: 'Payout refused by the PSP: PIX key not found',
      });
    }
  });
});
