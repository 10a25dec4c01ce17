import { ConfigError, callKeyOf } from '@seller-api/service-kit';
import { loadWithdrawalsConfig } from './config';

// What production needs beside the PSP: a private signing key and the callers' keys.
const PRODUCTION_KEYS = { INTERNAL_KEY: 'w'.repeat(40), INTERNAL_CALLER_KEYS: `gateway:${'g'.repeat(43)}` };

describe('withdrawals configuration', () => {
  it('refuses the sandbox as the live payout PSP in production, and a test URL that is the live one', () => {
    const problemsOf = (source: NodeJS.ProcessEnv) => {
      try {
        loadWithdrawalsConfig(source);
        return [];
      } catch (err) {
        return (err as ConfigError).problems;
      }
    };
    expect(problemsOf({ NODE_ENV: 'production', ...PRODUCTION_KEYS })).toContain(
      'PAYOUT_PSP: Must be a real PSP (efi) in production, not the sandbox',
    );
    // Live left on the sandbox but still naming the live PSP's URL: the test group may not use it.
    expect(
      problemsOf({
        PAYOUT_PSP_TEST: 'efi',
        PAYOUT_PSP_API_URL: 'https://payouts.live-psp.example',
        PAYOUT_PSP_TEST_API_URL: 'https://payouts.live-psp.example',
      }),
    ).toContain("PAYOUT_PSP_TEST_API_URL: Must not be the live PSP's PAYOUT_PSP_API_URL");
  });

  it('has the documented defaults', () => {
    expect(loadWithdrawalsConfig({})).toMatchObject({
      PORT: 3003,
      WITHDRAWAL_MIN_AMOUNT: 100,
      WITHDRAWAL_AUTO_APPROVE_BELOW: 0,
      WITHDRAWAL_AUTO_APPROVE_DAILY_COUNT: 10,
      WITHDRAWAL_AUTO_APPROVE_DAILY_AMOUNT: 500000,
      WITHDRAWAL_NEW_PIX_KEY_REVIEW: false,
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

  it("signs its calls to payments with its key; while upgrading, with payments' previous secret too", () => {
    const config = loadWithdrawalsConfig({ INTERNAL_SECRET: 'the-one-shared-secret' });
    const toPayments = callKeyOf(config, 'withdrawals', 'payments', config.PAYMENTS_INTERNAL_SECRET);
    expect(toPayments).toMatchObject({ caller: 'withdrawals', legacySecret: 'the-one-shared-secret' });
    const split = loadWithdrawalsConfig({ PAYMENTS_INTERNAL_SECRET: 'the-payments-secret' });
    expect(callKeyOf(split, 'withdrawals', 'payments', split.PAYMENTS_INTERNAL_SECRET).legacySecret).toBe(
      'the-payments-secret',
    );
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

  it('reads the payout controls, and refuses a negative cap or a flag that is not a boolean', () => {
    expect(
      loadWithdrawalsConfig({
        WITHDRAWAL_AUTO_APPROVE_DAILY_COUNT: '0',
        WITHDRAWAL_AUTO_APPROVE_DAILY_AMOUNT: '250000',
        WITHDRAWAL_NEW_PIX_KEY_REVIEW: 'true',
      }),
    ).toMatchObject({
      WITHDRAWAL_AUTO_APPROVE_DAILY_COUNT: 0,
      WITHDRAWAL_AUTO_APPROVE_DAILY_AMOUNT: 250000,
      WITHDRAWAL_NEW_PIX_KEY_REVIEW: true,
    });
    let error: unknown;
    try {
      loadWithdrawalsConfig({
        WITHDRAWAL_AUTO_APPROVE_DAILY_COUNT: '-1',
        WITHDRAWAL_AUTO_APPROVE_DAILY_AMOUNT: '1.5',
        WITHDRAWAL_NEW_PIX_KEY_REVIEW: 'maybe',
      });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems.map((p) => p.split(':')[0]).sort()).toEqual([
      'WITHDRAWAL_AUTO_APPROVE_DAILY_AMOUNT',
      'WITHDRAWAL_AUTO_APPROVE_DAILY_COUNT',
      'WITHDRAWAL_NEW_PIX_KEY_REVIEW',
    ]);
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

  it('refuses the removed bacen-api-pix payouts, naming what to use instead', () => {
    expect(() => loadWithdrawalsConfig({ PAYOUT_PSP: 'bacen-api-pix' })).toThrow(
      /PAYOUT_PSP: bacen-api-pix was removed: .*use efi \(Efí's Pix send API\) or sandbox/,
    );
    expect(() => loadWithdrawalsConfig({ PAYOUT_PSP_TEST: 'bacen-api-pix' })).toThrow(
      /PAYOUT_PSP_TEST: bacen-api-pix was removed/,
    );
  });

  const problems = (source: NodeJS.ProcessEnv) => {
    try {
      loadWithdrawalsConfig(source);
      return [];
    } catch (err) {
      return (err as ConfigError).problems;
    }
  };

  it("names what efi payouts need, its client certificate included, and defaults to Efí's hosts", () => {
    expect(problems({ PAYOUT_PSP: 'efi', PAYOUT_PSP_TLS_CERT_FILE: '/c.pem' })).toEqual([
      'PAYOUT_PSP_CLIENT_ID: Required when PAYOUT_PSP is efi',
      'PAYOUT_PSP_CLIENT_SECRET: Required when PAYOUT_PSP is efi',
      'PAYOUT_PSP_TLS_KEY_FILE: Required when PAYOUT_PSP_TLS_CERT_FILE is set',
      'PAYOUT_PIX_KEY: Required when PAYOUT_PSP is efi',
    ]);
    expect(
      problems({ PAYOUT_PSP: 'efi', PAYOUT_PSP_CLIENT_ID: 'id', PAYOUT_PSP_CLIENT_SECRET: 's' }),
    ).toEqual([
      'PAYOUT_PSP_TLS_CERT_FILE: Required when PAYOUT_PSP is efi (Efí requires mutual TLS)',
      'PAYOUT_PSP_TLS_KEY_FILE: Required when PAYOUT_PSP is efi (Efí requires mutual TLS)',
      'PAYOUT_PIX_KEY: Required when PAYOUT_PSP is efi',
    ]);
    const complete = {
      PAYOUT_PSP: 'efi',
      PAYOUT_PSP_CLIENT_ID: 'id',
      PAYOUT_PSP_CLIENT_SECRET: 'secret',
      PAYOUT_PSP_TLS_CERT_FILE: '/efi/cert.pem',
      PAYOUT_PSP_TLS_KEY_FILE: '/efi/key.pem',
      PAYOUT_PIX_KEY: 'payouts@example.com',
    };
    expect(loadWithdrawalsConfig(complete)).toMatchObject({
      PAYOUT_PSP_API_URL: 'https://pix.api.efipay.com.br',
      PAYOUT_PSP_TOKEN_URL: 'https://pix.api.efipay.com.br/oauth/token',
    });
    // A local simulator over plain http needs no certificate; production refuses plain http.
    const local = { ...complete, PAYOUT_PSP_API_URL: 'http://127.0.0.1:4000/' };
    delete (local as Partial<typeof local>).PAYOUT_PSP_TLS_CERT_FILE;
    delete (local as Partial<typeof local>).PAYOUT_PSP_TLS_KEY_FILE;
    expect(loadWithdrawalsConfig(local)).toMatchObject({
      PAYOUT_PSP_API_URL: 'http://127.0.0.1:4000',
      PAYOUT_PSP_TOKEN_URL: 'http://127.0.0.1:4000/oauth/token',
    });
    expect(problems({ ...local, NODE_ENV: 'production', ...PRODUCTION_KEYS })).toEqual(
      expect.arrayContaining(['PAYOUT_PSP_API_URL: Must be an https URL in production']),
    );
  });

  describe('the test environment', () => {
    const LIVE = {
      PAYOUT_PSP: 'efi',
      PAYOUT_PSP_CLIENT_ID: 'id',
      PAYOUT_PSP_CLIENT_SECRET: 'secret',
      PAYOUT_PSP_TLS_CERT_FILE: '/efi/cert.pem',
      PAYOUT_PSP_TLS_KEY_FILE: '/efi/key.pem',
      PAYOUT_PIX_KEY: 'payouts@example.com',
    };
    const HOMOLOGATION = {
      PAYOUT_PSP_TEST: 'efi',
      PAYOUT_PSP_TEST_CLIENT_ID: 'homolog-id',
      PAYOUT_PSP_TEST_CLIENT_SECRET: 'homolog-secret',
      PAYOUT_PSP_TEST_TLS_CERT_FILE: '/efi-h/cert.pem',
      PAYOUT_PSP_TEST_TLS_KEY_FILE: '/efi-h/key.pem',
      PAYOUT_PIX_KEY_TEST: 'payouts-homolog@example.com',
    };

    it('pays test withdrawals through the sandbox whatever PAYOUT_PSP says', () => {
      expect(loadWithdrawalsConfig(LIVE)).toMatchObject({
        PAYOUT_PSP: 'efi',
        PAYOUT_PSP_TEST: 'sandbox',
        PAYOUT_PSP_TEST_API_URL: undefined,
        PAYOUT_PIX_KEY_TEST: undefined,
      });
    });

    it("reads Efí's homologation from the PAYOUT_PSP_TEST_ group, its host by default", () => {
      expect(
        loadWithdrawalsConfig({ ...LIVE, ...HOMOLOGATION, PAYOUT_PSP_TEST_TIMEOUT_MS: '700' }),
      ).toMatchObject({
        PAYOUT_PSP_API_URL: 'https://pix.api.efipay.com.br',
        PAYOUT_PSP_TEST_API_URL: 'https://pix-h.api.efipay.com.br',
        PAYOUT_PSP_TEST_TOKEN_URL: 'https://pix-h.api.efipay.com.br/oauth/token',
        PAYOUT_PSP_TEST_CLIENT_ID: 'homolog-id',
        PAYOUT_PSP_TEST_TIMEOUT_MS: 700,
        PAYOUT_PIX_KEY_TEST: 'payouts-homolog@example.com',
      });
    });

    it('names every variable a homologation PSP misses or gets wrong, at once', () => {
      expect(
        problems({
          PAYOUT_PSP_TEST: 'efi',
          PAYOUT_PSP_TEST_TOKEN_URL: 'not a url',
          PAYOUT_PSP_TEST_TLS_CERT_FILE: '/c.pem',
        }),
      ).toEqual([
        'PAYOUT_PSP_TEST_TOKEN_URL: Must be an http or https URL',
        'PAYOUT_PSP_TEST_CLIENT_ID: Required when PAYOUT_PSP_TEST is efi',
        'PAYOUT_PSP_TEST_CLIENT_SECRET: Required when PAYOUT_PSP_TEST is efi',
        'PAYOUT_PSP_TEST_TLS_KEY_FILE: Required when PAYOUT_PSP_TEST_TLS_CERT_FILE is set',
        'PAYOUT_PIX_KEY_TEST: Required when PAYOUT_PSP_TEST is efi',
      ]);
      expect(problems({ ...LIVE, PAYOUT_PSP_TEST: 'live', PAYOUT_PIX_KEY_TEST: 'has space' })).toEqual([
        'PAYOUT_PSP_TEST: Must be one of sandbox, efi',
        expect.stringMatching(/^PAYOUT_PIX_KEY_TEST: /),
      ]);
    });

    it("refuses a test group that names the live PSP or Efí's production host", () => {
      expect(
        problems({
          ...LIVE,
          ...HOMOLOGATION,
          PAYOUT_PSP_TEST_API_URL: 'https://PIX.api.efipay.com.br/',
        }),
      ).toEqual(["PAYOUT_PSP_TEST_API_URL: Must not be the live PSP's PAYOUT_PSP_API_URL"]);
      // Even when the live environment pays through the sandbox.
      expect(problems({ ...HOMOLOGATION, PAYOUT_PSP_TEST_API_URL: 'https://pix.api.efipay.com.br' })).toEqual(
        ["PAYOUT_PSP_TEST_API_URL: Must not be Efí's production host (use https://pix-h.api.efipay.com.br)"],
      );
    });

    it('refuses a test paying key that is the live one', () => {
      expect(problems({ ...LIVE, ...HOMOLOGATION, PAYOUT_PIX_KEY_TEST: LIVE.PAYOUT_PIX_KEY })).toEqual([
        'PAYOUT_PIX_KEY_TEST: Must not be the live paying key PAYOUT_PIX_KEY',
      ]);
    });
  });
});
