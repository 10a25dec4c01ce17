import { readClientCertificate } from '@seller-api/api-pix';
import { ConfigError } from '@seller-api/service-kit';
import type { PaymentsConfig } from '../config';
import { sandboxPsp, type PspAdapter } from '../domain/psp';
import { bacenApiPix } from './bacen-api-pix';

/** The PSP adapter named by PIX_PSP (decisions.md 6). Throws ConfigError when it cannot be built. */
export function pspFromConfig(config: PaymentsConfig): PspAdapter {
  switch (config.PIX_PSP) {
    case 'sandbox':
      return sandboxPsp({
        pixKey: config.PIX_KEY,
        merchantName: config.PIX_MERCHANT_NAME,
        merchantCity: config.PIX_MERCHANT_CITY,
      });
    case 'bacen-api-pix': {
      const { PSP_API_URL, PSP_TOKEN_URL, PSP_CLIENT_ID, PSP_CLIENT_SECRET } = config;
      // loadPaymentsConfig already refuses these missing; checked again so a hand-made config fails clearly.
      const missing = Object.entries({ PSP_API_URL, PSP_TOKEN_URL, PSP_CLIENT_ID, PSP_CLIENT_SECRET })
        .filter(([, value]) => !value)
        .map(([name]) => `${name}: Required when PIX_PSP is bacen-api-pix`);
      if (!PSP_API_URL || !PSP_TOKEN_URL || !PSP_CLIENT_ID || !PSP_CLIENT_SECRET)
        throw new ConfigError(missing);
      return bacenApiPix({
        apiUrl: PSP_API_URL,
        tokenUrl: PSP_TOKEN_URL,
        clientId: PSP_CLIENT_ID,
        clientSecret: PSP_CLIENT_SECRET,
        pixKey: config.PIX_KEY,
        timeoutMs: config.PSP_TIMEOUT_MS,
        tls: clientCertificate(config),
      });
    }
  }
}

function clientCertificate(config: PaymentsConfig): { cert: Buffer; key: Buffer } | undefined {
  const read = readClientCertificate('PSP_', config.PSP_TLS_CERT_FILE, config.PSP_TLS_KEY_FILE);
  if (read.problems.length > 0) throw new ConfigError(read.problems);
  return read.certificate;
}
