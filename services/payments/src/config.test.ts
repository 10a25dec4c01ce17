import { ConfigError } from '@seller-api/service-kit';
import { DEFAULT_PIX_KEY, loadPaymentsConfig } from './config';

const BACEN = {
  PIX_PSP: 'bacen-api-pix',
  PSP_API_URL: 'https://pix.example-psp.com/api/v2',
  PSP_CLIENT_ID: 'client-id',
  PSP_CLIENT_SECRET: 'client-secret',
  PSP_WEBHOOK_SECRET: 'webhook-secret-0123456789',
};

function configError(source: NodeJS.ProcessEnv): string {
  try {
    loadPaymentsConfig(source);
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
  throw new Error('expected a ConfigError');
}

// What production needs beside the PSP: the callers' keys.
const PRODUCTION_KEYS = { INTERNAL_CALLER_KEYS: `gateway:${'g'.repeat(43)},orders:${'o'.repeat(43)}` };

describe('payments in production', () => {
  it('refuses the sandbox as the live PSP, and a test PSP URL that is the live one whatever live is', () => {
    expect(configError({ NODE_ENV: 'production', ...PRODUCTION_KEYS })).toContain(
      'PIX_PSP: Must be a real PSP (bacen-api-pix) in production, not the sandbox',
    );
    expect(
      configError({
        PIX_PSP_TEST: 'bacen-api-pix',
        PSP_TEST_API_URL: 'https://pix.example-psp.com/api/v2/',
        PSP_TEST_CLIENT_ID: 'homolog-id',
        PSP_TEST_CLIENT_SECRET: 'homolog-secret',
        PSP_TEST_WEBHOOK_SECRET: 'homolog-webhook-secret-0123',
        // Live on the sandbox, yet its URL is given: the test group may not use it.
        PSP_API_URL: 'https://pix.example-psp.com/api/v2',
      }),
    ).toContain("PSP_TEST_API_URL: Must not be the live PSP's PSP_API_URL");
  });
});

describe('payments configuration', () => {
  it('turns due-date charges at a PSP on per environment, off by default', () => {
    expect(loadPaymentsConfig({})).toMatchObject({
      PIX_DUE_DATE_CHARGES: false,
      PIX_DUE_DATE_CHARGES_TEST: false,
    });
    expect(
      loadPaymentsConfig({ PIX_DUE_DATE_CHARGES: 'true', PIX_DUE_DATE_CHARGES_TEST: '0' }),
    ).toMatchObject({ PIX_DUE_DATE_CHARGES: true, PIX_DUE_DATE_CHARGES_TEST: false });
    expect(configError({ PIX_DUE_DATE_CHARGES: 'maybe' })).toContain('PIX_DUE_DATE_CHARGES');
  });

  it('defaults to the sandbox PSP, its key and merchant, and a 399 bps fee', () => {
    const config = loadPaymentsConfig({});
    expect(config).toMatchObject({
      PIX_PSP: 'sandbox',
      PIX_KEY: DEFAULT_PIX_KEY,
      PIX_MERCHANT_NAME: 'SELLER API',
      PIX_MERCHANT_CITY: 'SAO PAULO',
      PLATFORM_FEE_BPS: 399,
      PLATFORM_FEE_FIXED_AMOUNT: 0,
    });
    expect(DEFAULT_PIX_KEY).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });

  it('reads the variables', () => {
    const config = loadPaymentsConfig({
      PIX_KEY: 'pix@example.com',
      PIX_MERCHANT_NAME: 'Loja São João',
      PIX_MERCHANT_CITY: 'Brasília',
      PLATFORM_FEE_BPS: '250',
      PLATFORM_FEE_FIXED_AMOUNT: '30',
    });
    expect(config).toMatchObject({
      PIX_KEY: 'pix@example.com',
      PIX_MERCHANT_NAME: 'Loja São João',
      PIX_MERCHANT_CITY: 'Brasília',
      PLATFORM_FEE_BPS: 250,
      PLATFORM_FEE_FIXED_AMOUNT: 30,
    });
  });

  it('reads bacen-api-pix with its PSP variables, the token URL defaulting under the API URL', () => {
    const config = loadPaymentsConfig({ ...BACEN, PSP_API_URL: 'https://pix.example-psp.com/api/v2/' });
    expect(config).toMatchObject({
      PIX_PSP: 'bacen-api-pix',
      PSP_API_URL: 'https://pix.example-psp.com/api/v2',
      PSP_TOKEN_URL: 'https://pix.example-psp.com/api/v2/oauth/token',
      PSP_CLIENT_ID: 'client-id',
      PSP_CLIENT_SECRET: 'client-secret',
      PSP_WEBHOOK_SECRET: 'webhook-secret-0123456789',
      PSP_TIMEOUT_MS: 5000,
    });
    expect(
      loadPaymentsConfig({
        ...BACEN,
        PSP_TOKEN_URL: 'https://auth.example-psp.com/token',
        PSP_TIMEOUT_MS: '800',
      }),
    ).toMatchObject({ PSP_TOKEN_URL: 'https://auth.example-psp.com/token', PSP_TIMEOUT_MS: 800 });
  });

  it('names every variable bacen-api-pix misses, at once', () => {
    const message = configError({ PIX_PSP: 'bacen-api-pix', PSP_TLS_CERT_FILE: '/etc/psp/cert.pem' });
    for (const name of [
      'PSP_API_URL',
      'PSP_CLIENT_ID',
      'PSP_CLIENT_SECRET',
      'PSP_WEBHOOK_SECRET',
      'PSP_TLS_KEY_FILE',
    ]) {
      expect(message).toContain(`${name}: Required when`);
    }
    expect(message).not.toContain('PSP_TOKEN_URL');
  });

  it('refuses bad PSP variables, naming each, never echoing a secret', () => {
    const message = configError({
      ...BACEN,
      PSP_API_URL: 'ftp://pix.example-psp.com',
      PSP_TOKEN_URL: 'not a url',
      PSP_WEBHOOK_SECRET: 'short',
      PSP_TIMEOUT_MS: '0',
    });
    for (const name of ['PSP_API_URL', 'PSP_TOKEN_URL', 'PSP_WEBHOOK_SECRET', 'PSP_TIMEOUT_MS']) {
      expect(message).toContain(`${name}:`);
    }
    expect(message).not.toContain('short');
    expect(message).not.toContain('client-secret');
  });

  it('in production wants https, the mTLS client certificate and the merchant key for bacen-api-pix', () => {
    const message = configError({
      ...BACEN,
      NODE_ENV: 'production',
      ...PRODUCTION_KEYS,
      PSP_API_URL: 'http://pix.example-psp.com',
    });
    expect(message).toContain('PSP_API_URL: Must be an https URL in production');
    expect(message).toContain('PSP_TLS_CERT_FILE: Required in production (API Pix requires mutual TLS)');
    expect(message).toContain('PSP_TLS_KEY_FILE: Required in production (API Pix requires mutual TLS)');
    expect(message).toContain('PIX_KEY:');
    expect(
      loadPaymentsConfig({
        ...BACEN,
        NODE_ENV: 'production',
        ...PRODUCTION_KEYS,
        PIX_KEY: 'pix@seller.example',
        PSP_TLS_CERT_FILE: '/etc/psp/tls.crt',
        PSP_TLS_KEY_FILE: '/etc/psp/tls.key',
      }).PSP_TOKEN_URL,
    ).toBe('https://pix.example-psp.com/api/v2/oauth/token');
  });

  it('keeps the PSP variables optional for the sandbox', () => {
    expect(loadPaymentsConfig({ PSP_WEBHOOK_SECRET: 'webhook-secret-0123456789' })).toMatchObject({
      PIX_PSP: 'sandbox',
      PSP_API_URL: undefined,
      PSP_TOKEN_URL: undefined,
      PSP_WEBHOOK_SECRET: 'webhook-secret-0123456789',
    });
    expect(() => loadPaymentsConfig({ PSP_WEBHOOK_SECRET: 'short' })).toThrow(/PSP_WEBHOOK_SECRET:/);
  });

  it('names every bad variable at once', () => {
    let error: unknown;
    try {
      loadPaymentsConfig({
        PIX_PSP: 'acme',
        PIX_KEY: 'has space',
        PIX_MERCHANT_NAME: '\u0301\u0301',
        PLATFORM_FEE_BPS: '-1',
        PLATFORM_FEE_FIXED_AMOUNT: '1.5',
      });
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as ConfigError).message;
    for (const name of [
      'PIX_PSP',
      'PIX_KEY',
      'PIX_MERCHANT_NAME',
      'PLATFORM_FEE_BPS',
      'PLATFORM_FEE_FIXED_AMOUNT',
    ]) {
      expect(message).toContain(`${name}:`);
    }
  });

  describe('the test environment', () => {
    const HOMOLOGATION = {
      PIX_PSP_TEST: 'bacen-api-pix',
      PSP_TEST_API_URL: 'https://homolog.example-psp.com/api/v2/',
      PSP_TEST_CLIENT_ID: 'homolog-id',
      PSP_TEST_CLIENT_SECRET: 'homolog-secret',
      PSP_TEST_WEBHOOK_SECRET: 'homolog-webhook-secret-0123',
      PIX_KEY_TEST: 'pix-homolog@seller.example',
    };

    it('uses the sandbox and its key for test whatever PIX_PSP says', () => {
      expect(loadPaymentsConfig({ ...BACEN, PIX_KEY: 'pix@seller.example' })).toMatchObject({
        PIX_PSP: 'bacen-api-pix',
        PIX_PSP_TEST: 'sandbox',
        PIX_KEY: 'pix@seller.example',
        PIX_KEY_TEST: DEFAULT_PIX_KEY,
        PSP_TEST_API_URL: undefined,
        PSP_TEST_WEBHOOK_SECRET: undefined,
      });
    });

    it('reads a homologation PSP from the PSP_TEST_ group, the token URL under its API URL', () => {
      expect(loadPaymentsConfig({ ...BACEN, ...HOMOLOGATION, PSP_TEST_TIMEOUT_MS: '900' })).toMatchObject({
        PIX_PSP: 'bacen-api-pix',
        PIX_PSP_TEST: 'bacen-api-pix',
        PSP_API_URL: 'https://pix.example-psp.com/api/v2',
        PSP_TEST_API_URL: 'https://homolog.example-psp.com/api/v2',
        PSP_TEST_TOKEN_URL: 'https://homolog.example-psp.com/api/v2/oauth/token',
        PSP_TEST_CLIENT_ID: 'homolog-id',
        PSP_TEST_CLIENT_SECRET: 'homolog-secret',
        PSP_TEST_WEBHOOK_SECRET: 'homolog-webhook-secret-0123',
        PSP_TEST_TIMEOUT_MS: 900,
        PIX_KEY_TEST: 'pix-homolog@seller.example',
      });
    });

    it('names every variable a homologation PSP misses, at once, beside the live ones', () => {
      const message = configError({
        PIX_PSP: 'bacen-api-pix',
        PIX_PSP_TEST: 'bacen-api-pix',
        PSP_TEST_TLS_KEY_FILE: '/etc/psp/key.pem',
      });
      for (const name of [
        'PSP_API_URL',
        'PSP_WEBHOOK_SECRET',
        'PSP_TEST_API_URL',
        'PSP_TEST_CLIENT_ID',
        'PSP_TEST_CLIENT_SECRET',
        'PSP_TEST_WEBHOOK_SECRET',
        'PSP_TEST_TLS_CERT_FILE',
      ]) {
        expect(message).toContain(`${name}: Required when`);
      }
      expect(message).toContain('PSP_TEST_API_URL: Required when PIX_PSP_TEST is bacen-api-pix');
    });

    it('refuses bad homologation variables, naming each, never echoing a secret', () => {
      const message = configError({
        ...HOMOLOGATION,
        PIX_PSP_TEST: 'acme',
        PSP_TEST_API_URL: 'ftp://homolog.example-psp.com',
        PSP_TEST_WEBHOOK_SECRET: 'short',
        PSP_TEST_TIMEOUT_MS: '0',
        PIX_KEY_TEST: 'has space',
      });
      for (const name of [
        'PIX_PSP_TEST',
        'PSP_TEST_API_URL',
        'PSP_TEST_WEBHOOK_SECRET',
        'PSP_TEST_TIMEOUT_MS',
        'PIX_KEY_TEST',
      ]) {
        expect(message).toContain(`${name}:`);
      }
      expect(message).not.toContain('short');
      expect(message).not.toContain('homolog-secret');
    });

    it('refuses a test group that names the live PSP, the live key or the live webhook secret', () => {
      const message = configError({
        ...BACEN,
        ...HOMOLOGATION,
        PIX_KEY: 'pix@seller.example',
        PIX_KEY_TEST: 'pix@seller.example',
        PSP_TEST_API_URL: 'https://PIX.example-psp.com/api/v2/',
        PSP_TEST_WEBHOOK_SECRET: BACEN.PSP_WEBHOOK_SECRET,
      });
      expect(message).toContain("PSP_TEST_API_URL: Must not be the live PSP's PSP_API_URL");
      expect(message).toContain("PIX_KEY_TEST: Must not be the live merchant's PIX_KEY");
      expect(message).toContain('PSP_TEST_WEBHOOK_SECRET: Must differ from PSP_WEBHOOK_SECRET');
      expect(message).not.toContain(BACEN.PSP_WEBHOOK_SECRET);
    });

    it('in production wants https and the homologation key for a homologation PSP', () => {
      const message = configError({
        ...HOMOLOGATION,
        NODE_ENV: 'production',
        ...PRODUCTION_KEYS,
        PSP_TEST_API_URL: 'http://homolog.example-psp.com',
        PIX_KEY_TEST: DEFAULT_PIX_KEY,
      });
      expect(message).toContain('PSP_TEST_API_URL: Must be an https URL in production');
      expect(message).toContain(
        'PSP_TEST_TLS_CERT_FILE: Required in production (API Pix requires mutual TLS)',
      );
      expect(message).toContain('PIX_KEY_TEST:');
    });
  });

  describe("the PSPs' client certificates", () => {
    const LIVE_CERT = 'CN=pix.example-psp.com,O=Example PSP,C=BR';
    const TEST_CERT = 'CN=pix-h.example-psp.com,O=Example PSP,C=BR';

    it('accepts a certificate instead of the webhook secret for bacen-api-pix, in either environment', () => {
      const { PSP_WEBHOOK_SECRET: _secret, ...live } = BACEN;
      expect(loadPaymentsConfig({ ...live, PSP_CLIENT_CERT_SUBJECT: LIVE_CERT })).toMatchObject({
        PSP_WEBHOOK_SECRET: undefined,
        PSP_CLIENT_CERT_SUBJECT: LIVE_CERT,
        PSP_CLIENT_CERT_ISSUER: undefined,
      });
      expect(configError(live)).toContain(
        'PSP_WEBHOOK_SECRET: Required when PIX_PSP is bacen-api-pix, unless PSP_CLIENT_CERT_SUBJECT is set',
      );
      const homologation = {
        PIX_PSP_TEST: 'bacen-api-pix',
        PSP_TEST_API_URL: 'https://homolog.example-psp.com/api/v2',
        PSP_TEST_CLIENT_ID: 'homolog-id',
        PSP_TEST_CLIENT_SECRET: 'homolog-secret',
      };
      expect(
        loadPaymentsConfig({ ...homologation, PSP_TEST_CLIENT_CERT_SUBJECT: TEST_CERT })
          .PSP_TEST_CLIENT_CERT_SUBJECT,
      ).toBe(TEST_CERT);
      expect(configError(homologation)).toContain(
        'PSP_TEST_WEBHOOK_SECRET: Required when PIX_PSP_TEST is bacen-api-pix, unless PSP_TEST_CLIENT_CERT_SUBJECT is set',
      );
    });

    it('refuses a name that is not a distinguished name, and an issuer without a subject', () => {
      const message = configError({
        PSP_CLIENT_CERT_SUBJECT: 'pix.example-psp.com',
        PSP_TEST_CLIENT_CERT_SUBJECT: 'CN=a\nb',
        PSP_TEST_CLIENT_CERT_ISSUER: 'CN=Example CA',
      });
      expect(message).toContain('PSP_CLIENT_CERT_SUBJECT: Must be a distinguished name');
      expect(message).toContain('PSP_TEST_CLIENT_CERT_SUBJECT: Must be a distinguished name');
      expect(configError({ PSP_CLIENT_CERT_ISSUER: 'CN=Example CA' })).toContain(
        'PSP_CLIENT_CERT_ISSUER: Only with PSP_CLIENT_CERT_SUBJECT',
      );
    });

    it('never lets one certificate name both environments', () => {
      const clash = 'PSP_TEST_CLIENT_CERT_SUBJECT: Must differ from PSP_CLIENT_CERT_SUBJECT';
      expect(
        configError({ PSP_CLIENT_CERT_SUBJECT: LIVE_CERT, PSP_TEST_CLIENT_CERT_SUBJECT: LIVE_CERT }),
      ).toContain(clash);
      // Written differently, the same name.
      expect(
        configError({
          PSP_CLIENT_CERT_SUBJECT: LIVE_CERT,
          PSP_TEST_CLIENT_CERT_SUBJECT: 'cn=pix.example-psp.com, O=Example PSP, C=BR',
        }),
      ).toContain(clash);
      // One subject under two issuers is two certificates only when both issuers are pinned.
      expect(
        configError({
          PSP_CLIENT_CERT_SUBJECT: LIVE_CERT,
          PSP_CLIENT_CERT_ISSUER: 'CN=Live CA',
          PSP_TEST_CLIENT_CERT_SUBJECT: LIVE_CERT,
        }),
      ).toContain(clash);
      expect(
        loadPaymentsConfig({
          PSP_CLIENT_CERT_SUBJECT: LIVE_CERT,
          PSP_CLIENT_CERT_ISSUER: 'CN=Live CA',
          PSP_TEST_CLIENT_CERT_SUBJECT: LIVE_CERT,
          PSP_TEST_CLIENT_CERT_ISSUER: 'CN=Homologation CA',
        }).PSP_TEST_CLIENT_CERT_ISSUER,
      ).toBe('CN=Homologation CA');
      expect(
        loadPaymentsConfig({ PSP_CLIENT_CERT_SUBJECT: LIVE_CERT, PSP_TEST_CLIENT_CERT_SUBJECT: TEST_CERT })
          .PSP_TEST_CLIENT_CERT_SUBJECT,
      ).toBe(TEST_CERT);
    });
  });
});
