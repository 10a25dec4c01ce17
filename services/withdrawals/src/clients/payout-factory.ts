import { readClientCertificate } from '@seller-api/api-pix';
import { ConfigError } from '@seller-api/service-kit';
import type { PayoutPspName, WithdrawalsConfig } from '../config';
import type { PayoutAdapter, PayoutAdapters } from '../domain/payouts';
import { efiPayouts } from './efi-payouts';
import { SandboxPayouts } from './sandbox-payouts';

/** One environment's payout adapter settings, read from its own variables. */
interface PayoutSettings {
  name: PayoutPspName;
  /** The variable that chose it, for error messages. */
  selector: 'PAYOUT_PSP' | 'PAYOUT_PSP_TEST';
  /** Prefix of its connection variables (api-pix apiPixEnv). */
  prefix: 'PAYOUT_PSP_' | 'PAYOUT_PSP_TEST_';
  keyName: 'PAYOUT_PIX_KEY' | 'PAYOUT_PIX_KEY_TEST';
  pixKey: string | undefined;
  apiUrl: string | undefined;
  tokenUrl: string | undefined;
  clientId: string | undefined;
  clientSecret: string | undefined;
  certFile: string | undefined;
  keyFile: string | undefined;
  timeoutMs: number;
}

/**
 * The payout adapter of each environment (docs/finance.md, "Payouts"): `live` from PAYOUT_PSP and the
 * PAYOUT_PSP_ variables; `test` from PAYOUT_PSP_TEST (the sandbox by default) and the PAYOUT_PSP_TEST_
 * variables, never from PAYOUT_PSP, so a test withdrawal never moves real money. Throws ConfigError
 * when either cannot be built.
 */
export function payoutAdaptersFromConfig(config: WithdrawalsConfig): PayoutAdapters {
  const live = payoutsFromSettings({
    name: config.PAYOUT_PSP,
    selector: 'PAYOUT_PSP',
    prefix: 'PAYOUT_PSP_',
    keyName: 'PAYOUT_PIX_KEY',
    pixKey: config.PAYOUT_PIX_KEY,
    apiUrl: config.PAYOUT_PSP_API_URL,
    tokenUrl: config.PAYOUT_PSP_TOKEN_URL,
    clientId: config.PAYOUT_PSP_CLIENT_ID,
    clientSecret: config.PAYOUT_PSP_CLIENT_SECRET,
    certFile: config.PAYOUT_PSP_TLS_CERT_FILE,
    keyFile: config.PAYOUT_PSP_TLS_KEY_FILE,
    timeoutMs: config.PAYOUT_PSP_TIMEOUT_MS,
  });
  const test = payoutsFromSettings({
    name: config.PAYOUT_PSP_TEST,
    selector: 'PAYOUT_PSP_TEST',
    prefix: 'PAYOUT_PSP_TEST_',
    keyName: 'PAYOUT_PIX_KEY_TEST',
    pixKey: config.PAYOUT_PIX_KEY_TEST,
    apiUrl: config.PAYOUT_PSP_TEST_API_URL,
    tokenUrl: config.PAYOUT_PSP_TEST_TOKEN_URL,
    clientId: config.PAYOUT_PSP_TEST_CLIENT_ID,
    clientSecret: config.PAYOUT_PSP_TEST_CLIENT_SECRET,
    certFile: config.PAYOUT_PSP_TEST_TLS_CERT_FILE,
    keyFile: config.PAYOUT_PSP_TEST_TLS_KEY_FILE,
    timeoutMs: config.PAYOUT_PSP_TEST_TIMEOUT_MS,
  });
  return { live, test };
}

function payoutsFromSettings(settings: PayoutSettings): PayoutAdapter {
  switch (settings.name) {
    case 'sandbox':
      return new SandboxPayouts();
    case 'efi': {
      const { apiUrl, tokenUrl, clientId, clientSecret, pixKey } = settings;
      // loadWithdrawalsConfig already refuses these missing; checked again so a hand-made config fails clearly.
      if (!apiUrl || !tokenUrl || !clientId || !clientSecret || !pixKey) {
        throw new ConfigError([
          `${settings.selector}: efi needs its URL, credentials and ${settings.keyName}`,
        ]);
      }
      const tls = readClientCertificate(settings.prefix, settings.certFile, settings.keyFile);
      if (tls.problems.length > 0) throw new ConfigError(tls.problems);
      return efiPayouts({
        apiUrl,
        tokenUrl,
        clientId,
        clientSecret,
        pixKey,
        timeoutMs: settings.timeoutMs,
        tls: tls.certificate,
      });
    }
  }
}
