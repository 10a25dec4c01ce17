import { ConfigError } from '@seller-api/service-kit';
import { loadWithdrawalsConfig } from './config';

describe('withdrawals configuration', () => {
  it('has the documented defaults', () => {
    expect(loadWithdrawalsConfig({})).toMatchObject({
      PORT: 3003,
      WITHDRAWAL_MIN_AMOUNT: 100,
      WITHDRAWAL_AUTO_APPROVE_BELOW: 0,
      PAYOUT_PSP: 'sandbox',
      PAYOUT_INTERVAL_MS: 1000,
      PAYOUT_RETRY_AFTER_MS: 60000,
    });
  });

  it('names every bad variable', () => {
    let error: unknown;
    try {
      loadWithdrawalsConfig({
        WITHDRAWAL_MIN_AMOUNT: '0',
        WITHDRAWAL_AUTO_APPROVE_BELOW: '-1',
        PAYOUT_PSP: 'x',
      });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const names = (error as ConfigError).problems.map((p) => p.split(':')[0]);
    expect(names).toEqual(
      expect.arrayContaining(['WITHDRAWAL_MIN_AMOUNT', 'WITHDRAWAL_AUTO_APPROVE_BELOW', 'PAYOUT_PSP']),
    );
  });
});
