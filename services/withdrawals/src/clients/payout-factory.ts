import type { WithdrawalsConfig } from '../config';
import type { PayoutAdapter } from '../domain/payouts';
import { SandboxPayouts } from './sandbox-payouts';

/** The payout PSP named by PAYOUT_PSP. Another adapter (API Pix payments) plugs in here. */
export function payoutsFromConfig(config: Pick<WithdrawalsConfig, 'PAYOUT_PSP'>): PayoutAdapter {
  switch (config.PAYOUT_PSP) {
    case 'sandbox':
      return new SandboxPayouts();
  }
}
