import { readClientCertificate } from '@seller-api/api-pix';
import { ConfigError } from '@seller-api/service-kit';
import type { WithdrawalsConfig } from '../config';
import type { PayoutAdapter } from '../domain/payouts';
import { bacenApiPixPayouts } from './bacen-api-pix-payouts';
import { SandboxPayouts } from './sandbox-payouts';

/** The payout PSP named by PAYOUT_PSP. Throws ConfigError when it cannot be built. */
export function payoutsFromConfig(config: WithdrawalsConfig): PayoutAdapter {
  switch (config.PAYOUT_PSP) {
    case 'sandbox':
      return new SandboxPayouts();
    case 'bacen-api-pix': {
      const { PAYOUT_PSP_API_URL, PAYOUT_PSP_TOKEN_URL, PAYOUT_PSP_CLIENT_ID, PAYOUT_PSP_CLIENT_SECRET } =
        config;
      const { PAYOUT_PIX_KEY } = config;
      // loadWithdrawalsConfig already refuses these missing; checked again so a hand-made config fails clearly.
      if (
        !PAYOUT_PSP_API_URL ||
        !PAYOUT_PSP_TOKEN_URL ||
        !PAYOUT_PSP_CLIENT_ID ||
        !PAYOUT_PSP_CLIENT_SECRET ||
        !PAYOUT_PIX_KEY
      ) {
        throw new ConfigError([
          'PAYOUT_PSP: bacen-api-pix needs its PSP URL, credentials and PAYOUT_PIX_KEY',
        ]);
      }
      const tls = readClientCertificate(
        'PAYOUT_PSP_',
        config.PAYOUT_PSP_TLS_CERT_FILE,
        config.PAYOUT_PSP_TLS_KEY_FILE,
      );
      if (tls.problems.length > 0) throw new ConfigError(tls.problems);
      return bacenApiPixPayouts({
        apiUrl: PAYOUT_PSP_API_URL,
        tokenUrl: PAYOUT_PSP_TOKEN_URL,
        clientId: PAYOUT_PSP_CLIENT_ID,
        clientSecret: PAYOUT_PSP_CLIENT_SECRET,
        pixKey: PAYOUT_PIX_KEY,
        timeoutMs: config.PAYOUT_PSP_TIMEOUT_MS,
        tls: tls.certificate,
      });
    }
  }
}
