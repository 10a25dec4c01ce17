import { ConfigError } from '@seller-api/service-kit';
import { BACEN_API_PIX_UNAVAILABLE, type PaymentsConfig } from '../config';
import { sandboxPsp, type PspAdapter } from '../domain/psp';

/** The PSP adapter named by PIX_PSP (decisions.md 6). */
export function pspFromConfig(config: PaymentsConfig): PspAdapter {
  switch (config.PIX_PSP) {
    case 'sandbox':
      return sandboxPsp({
        pixKey: config.PIX_KEY,
        merchantName: config.PIX_MERCHANT_NAME,
        merchantCity: config.PIX_MERCHANT_CITY,
      });
    case 'bacen-api-pix':
      throw new ConfigError([BACEN_API_PIX_UNAVAILABLE]);
  }
}

