import { apiPixEnvNames, readClientCertificate } from '@seller-api/api-pix';
import { ConfigError } from '@seller-api/service-kit';
import type { PaymentsConfig, PixPspName } from '../config';
import { sandboxPsp, type PspAdapter, type PspAdapters } from '../domain/psp';
import { API_PIX_CHARGE_AND_DUE_DATE_SCOPES, API_PIX_CHARGE_SCOPES, bacenApiPix } from './bacen-api-pix';

/** One environment's adapter settings, read from its own variables. */
interface PspSettings {
  name: PixPspName;
  /** The variable that chose it, for error messages. */
  selector: 'PIX_PSP' | 'PIX_PSP_TEST';
  /** Prefix of its connection variables (api-pix apiPixEnv). */
  prefix: 'PSP_' | 'PSP_TEST_';
  pixKey: string;
  apiUrl: string | undefined;
  tokenUrl: string | undefined;
  clientId: string | undefined;
  clientSecret: string | undefined;
  certFile: string | undefined;
  keyFile: string | undefined;
  timeoutMs: number;
  /** PIX_DUE_DATE_CHARGES(_TEST): the PSP makes due-date charges (the sandbox always does). */
  dueDateCharges: boolean;
}

/**
 * The PSP adapter of each environment (docs/payments.md, "PSP adapters"): `live` from PIX_PSP and the PSP_
 * variables; `test` from PIX_PSP_TEST (the sandbox by default) and the PSP_TEST_ variables, never from
 * PIX_PSP, so a test charge or refund never reaches the live PSP. Throws ConfigError when either
 * cannot be built.
 */
export function pspsFromConfig(config: PaymentsConfig): PspAdapters {
  const live = pspFromSettings(config, {
    name: config.PIX_PSP,
    selector: 'PIX_PSP',
    prefix: 'PSP_',
    pixKey: config.PIX_KEY,
    apiUrl: config.PSP_API_URL,
    tokenUrl: config.PSP_TOKEN_URL,
    clientId: config.PSP_CLIENT_ID,
    clientSecret: config.PSP_CLIENT_SECRET,
    certFile: config.PSP_TLS_CERT_FILE,
    keyFile: config.PSP_TLS_KEY_FILE,
    timeoutMs: config.PSP_TIMEOUT_MS,
    dueDateCharges: config.PIX_DUE_DATE_CHARGES,
  });
  const test = pspFromSettings(config, {
    name: config.PIX_PSP_TEST,
    selector: 'PIX_PSP_TEST',
    prefix: 'PSP_TEST_',
    pixKey: config.PIX_KEY_TEST,
    apiUrl: config.PSP_TEST_API_URL,
    tokenUrl: config.PSP_TEST_TOKEN_URL,
    clientId: config.PSP_TEST_CLIENT_ID,
    clientSecret: config.PSP_TEST_CLIENT_SECRET,
    certFile: config.PSP_TEST_TLS_CERT_FILE,
    keyFile: config.PSP_TEST_TLS_KEY_FILE,
    timeoutMs: config.PSP_TEST_TIMEOUT_MS,
    dueDateCharges: config.PIX_DUE_DATE_CHARGES_TEST,
  });
  return { live, test };
}

function pspFromSettings(config: PaymentsConfig, settings: PspSettings): PspAdapter {
  switch (settings.name) {
    case 'sandbox':
      return sandboxPsp({
        pixKey: settings.pixKey,
        merchantName: config.PIX_MERCHANT_NAME,
        merchantCity: config.PIX_MERCHANT_CITY,
        refunds: config.SANDBOX_REFUNDS,
      });
    case 'bacen-api-pix': {
      const { apiUrl, tokenUrl, clientId, clientSecret } = settings;
      // loadPaymentsConfig already refuses these missing; checked again so a hand-made config fails clearly.
      if (!apiUrl || !tokenUrl || !clientId || !clientSecret) {
        const names = apiPixEnvNames(settings.prefix);
        const missing = Object.entries({
          [names.apiUrl]: apiUrl,
          [names.tokenUrl]: tokenUrl,
          [names.clientId]: clientId,
          [names.clientSecret]: clientSecret,
        })
          .filter(([, value]) => !value)
          .map(([name]) => `${name}: Required when ${settings.selector} is bacen-api-pix`);
        throw new ConfigError(missing);
      }
      const tls = readClientCertificate(settings.prefix, settings.certFile, settings.keyFile);
      if (tls.problems.length > 0) throw new ConfigError(tls.problems);
      return bacenApiPix({
        apiUrl,
        tokenUrl,
        clientId,
        clientSecret,
        // The cobv scopes only when asked for: a client registered without them may be refused a token.
        scopes: settings.dueDateCharges ? API_PIX_CHARGE_AND_DUE_DATE_SCOPES : API_PIX_CHARGE_SCOPES,
        dueDateCharges: settings.dueDateCharges,
        pixKey: settings.pixKey,
        merchantName: config.PIX_MERCHANT_NAME,
        merchantCity: config.PIX_MERCHANT_CITY,
        timeoutMs: settings.timeoutMs,
        tls: tls.certificate,
      });
    }
  }
}
