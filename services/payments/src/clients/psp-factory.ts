import { readFileSync } from 'node:fs';
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
  if (!config.PSP_TLS_CERT_FILE || !config.PSP_TLS_KEY_FILE) return undefined;
  const problems: string[] = [];
  const read = (name: string, path: string) => {
    try {
      return readFileSync(path);
    } catch (err) {
      problems.push(`${name}: Cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? 'error'})`);
      return Buffer.alloc(0);
    }
  };
  const cert = read('PSP_TLS_CERT_FILE', config.PSP_TLS_CERT_FILE);
  const key = read('PSP_TLS_KEY_FILE', config.PSP_TLS_KEY_FILE);
  if (problems.length > 0) throw new ConfigError(problems);
  return { cert, key };
}
