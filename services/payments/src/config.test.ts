import { ConfigError } from '@seller-api/service-kit';
import { DEFAULT_PIX_KEY, loadPaymentsConfig } from './config';

describe('payments configuration', () => {
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

  it('refuses bacen-api-pix for now, saying when it arrives', () => {
    expect(() => loadPaymentsConfig({ PIX_PSP: 'bacen-api-pix' })).toThrow(ConfigError);
    expect(() => loadPaymentsConfig({ PIX_PSP: 'bacen-api-pix' })).toThrow(/PIX_PSP.*payment-lifecycle/);
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
});
