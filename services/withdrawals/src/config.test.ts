import { ConfigError } from '@seller-api/service-kit';
import { loadWithdrawalsConfig } from './config';

describe('withdrawals configuration', () => {
  it('has the documented defaults', () => {
    expect(loadWithdrawalsConfig({})).toMatchObject({
      PORT: 3003,
      WITHDRAWAL_MIN_AMOUNT: 100,
      WITHDRAWAL_AUTO_APPROVE_BELOW: 0,
      PAYOUT_PSP: 'sandbox',
      PAYOUT_PSP_TEST: 'sandbox',
      PAYOUT_INTERVAL_MS: 1000,
      PAYOUT_RETRY_AFTER_MS: 60000,
      PAYMENTS_URL: 'http://127.0.0.1:3002',
      RECONCILE_INTERVAL_MS: 300000,
      RECONCILE_DRIFT_INTERVAL_MS: 3600000,
      RECONCILE_GRACE_MS: 60000,
    });
  });

  it('signs its calls to payments with PAYMENTS_INTERNAL_SECRET, its own INTERNAL_SECRET when unset', () => {
    expect(loadWithdrawalsConfig({ INTERNAL_SECRET: 'the-one-shared-secret' }).PAYMENTS_INTERNAL_SECRET).toBe(
      'the-one-shared-secret',
    );
    expect(
      loadWithdrawalsConfig({
        INTERNAL_SECRET: 'the-withdrawals-secret',
        PAYMENTS_INTERNAL_SECRET: 'the-payments-secret',
      }).PAYMENTS_INTERNAL_SECRET,
    ).toBe('the-payments-secret');
    expect(() => loadWithdrawalsConfig({ PAYMENTS_INTERNAL_SECRET: 'short' })).toThrow(
      /PAYMENTS_INTERNAL_SECRET: Too small/,
    );
  });

  it('turns the reconciliation off with an interval of 0, and refuses a negative one', () => {
    expect(loadWithdrawalsConfig({ RECONCILE_INTERVAL_MS: '0' }).RECONCILE_INTERVAL_MS).toBe(0);
    expect(() => loadWithdrawalsConfig({ RECONCILE_INTERVAL_MS: '-1', PAYMENTS_URL: 'payments' })).toThrow(
      /PAYMENTS_URL[\s\S]*RECONCILE_INTERVAL_MS/,
    );
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

  it('names what bacen-api-pix payouts need, and refuses plain http in production', () => {
    const problems = (source: NodeJS.ProcessEnv) => {
      try {
        loadWithdrawalsConfig(source);
        return [];
      } catch (err) {
        return (err as ConfigError).problems;
      }
    };
    expect(problems({ PAYOUT_PSP: 'bacen-api-pix', PAYOUT_PSP_TLS_CERT_FILE: '/c.pem' })).toEqual([
      'PAYOUT_PSP_API_URL: Required when PAYOUT_PSP is bacen-api-pix',
      'PAYOUT_PSP_CLIENT_ID: Required when PAYOUT_PSP is bacen-api-pix',
      'PAYOUT_PSP_CLIENT_SECRET: Required when PAYOUT_PSP is bacen-api-pix',
      'PAYOUT_PSP_TLS_KEY_FILE: Required when PAYOUT_PSP_TLS_CERT_FILE is set',
      'PAYOUT_PIX_KEY: Required when PAYOUT_PSP is bacen-api-pix',
    ]);
    const complete = {
      PAYOUT_PSP: 'bacen-api-pix',
      PAYOUT_PSP_API_URL: 'http://psp.example/api/v2/',
      PAYOUT_PSP_CLIENT_ID: 'id',
      PAYOUT_PSP_CLIENT_SECRET: 'secret',
      PAYOUT_PIX_KEY: 'payouts@example.com',
    };
    expect(loadWithdrawalsConfig(complete)).toMatchObject({
      PAYOUT_PSP_API_URL: 'http://psp.example/api/v2',
      PAYOUT_PSP_TOKEN_URL: 'http://psp.example/api/v2/oauth/token',
    });
    expect(problems({ ...complete, NODE_ENV: 'production', INTERNAL_SECRET: 'x'.repeat(40) })).toEqual([
      'PAYOUT_PSP_API_URL: Must be an https URL in production',
    ]);
  });

  describe('the test environment', () => {
    const problems = (source: NodeJS.ProcessEnv) => {
      try {
        loadWithdrawalsConfig(source);
        return [];
      } catch (err) {
        return (err as ConfigError).problems;
      }
    };
    const LIVE = {
      PAYOUT_PSP: 'bacen-api-pix',
      PAYOUT_PSP_API_URL: 'https://psp.example/api/v2',
      PAYOUT_PSP_CLIENT_ID: 'id',
      PAYOUT_PSP_CLIENT_SECRET: 'secret',
      PAYOUT_PIX_KEY: 'payouts@example.com',
    };
    const HOMOLOGATION = {
      PAYOUT_PSP_TEST: 'bacen-api-pix',
      PAYOUT_PSP_TEST_API_URL: 'https://homolog.psp.example/api/v2/',
      PAYOUT_PSP_TEST_CLIENT_ID: 'homolog-id',
      PAYOUT_PSP_TEST_CLIENT_SECRET: 'homolog-secret',
      PAYOUT_PIX_KEY_TEST: 'payouts-homolog@example.com',
    };

    it('pays test withdrawals through the sandbox whatever PAYOUT_PSP says', () => {
      expect(loadWithdrawalsConfig(LIVE)).toMatchObject({
        PAYOUT_PSP: 'bacen-api-pix',
        PAYOUT_PSP_TEST: 'sandbox',
        PAYOUT_PSP_TEST_API_URL: undefined,
        PAYOUT_PIX_KEY_TEST: undefined,
      });
    });

    it('reads a homologation PSP from the PAYOUT_PSP_TEST_ group', () => {
      expect(
        loadWithdrawalsConfig({ ...LIVE, ...HOMOLOGATION, PAYOUT_PSP_TEST_TIMEOUT_MS: '700' }),
      ).toMatchObject({
        PAYOUT_PSP_API_URL: 'https://psp.example/api/v2',
        PAYOUT_PSP_TEST_API_URL: 'https://homolog.psp.example/api/v2',
        PAYOUT_PSP_TEST_TOKEN_URL: 'https://homolog.psp.example/api/v2/oauth/token',
        PAYOUT_PSP_TEST_CLIENT_ID: 'homolog-id',
        PAYOUT_PSP_TEST_TIMEOUT_MS: 700,
        PAYOUT_PIX_KEY_TEST: 'payouts-homolog@example.com',
      });
    });

    it('names every variable a homologation PSP misses or gets wrong, at once', () => {
      expect(
        problems({
          PAYOUT_PSP_TEST: 'bacen-api-pix',
          PAYOUT_PSP_TEST_TOKEN_URL: 'not a url',
          PAYOUT_PSP_TEST_TLS_CERT_FILE: '/c.pem',
        }),
      ).toEqual([
        'PAYOUT_PSP_TEST_TOKEN_URL: Must be an http or https URL',
        'PAYOUT_PSP_TEST_API_URL: Required when PAYOUT_PSP_TEST is bacen-api-pix',
        'PAYOUT_PSP_TEST_CLIENT_ID: Required when PAYOUT_PSP_TEST is bacen-api-pix',
        'PAYOUT_PSP_TEST_CLIENT_SECRET: Required when PAYOUT_PSP_TEST is bacen-api-pix',
        'PAYOUT_PSP_TEST_TLS_KEY_FILE: Required when PAYOUT_PSP_TEST_TLS_CERT_FILE is set',
        'PAYOUT_PIX_KEY_TEST: Required when PAYOUT_PSP_TEST is bacen-api-pix',
      ]);
      expect(problems({ ...LIVE, PAYOUT_PSP_TEST: 'live', PAYOUT_PIX_KEY_TEST: 'has space' })).toEqual([
        expect.stringMatching(/^PAYOUT_PSP_TEST: /),
        expect.stringMatching(/^PAYOUT_PIX_KEY_TEST: /),
      ]);
    });

    it('refuses a test group that names the live PSP, and plain http in production', () => {
      expect(
        problems({ ...LIVE, ...HOMOLOGATION, PAYOUT_PSP_TEST_API_URL: 'https://PSP.example/api/v2/' }),
      ).toEqual(["PAYOUT_PSP_TEST_API_URL: Must not be the live PSP's PAYOUT_PSP_API_URL"]);
      expect(
        problems({
          ...HOMOLOGATION,
          PAYOUT_PSP_TEST_API_URL: 'http://homolog.psp.example',
          NODE_ENV: 'production',
          INTERNAL_SECRET: 'x'.repeat(40),
        }),
      ).toEqual(['PAYOUT_PSP_TEST_API_URL: Must be an https URL in production']);
    });

    it('refuses a test paying key that is the live one, whichever PSP carries it', () => {
      expect(problems({ ...LIVE, ...HOMOLOGATION, PAYOUT_PIX_KEY_TEST: LIVE.PAYOUT_PIX_KEY })).toEqual([
        'PAYOUT_PIX_KEY_TEST: Must not be the live paying key PAYOUT_PIX_KEY',
      ]);
    });
  });
});
