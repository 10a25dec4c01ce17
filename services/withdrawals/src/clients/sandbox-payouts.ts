import { createHash } from 'node:crypto';
import type { PayoutAdapter, PayoutOutcome, PayoutRequest } from '../domain/payouts';

/** The sandbox's failing key (docs/finance-api.md): a payout to it fails as a PSP would refuse it. */
export const SANDBOX_FAILING_KEY = 'fail@example.com';

/**
 * Pays at once, without moving money: for development and the `test` environment. Deterministic on
 * the withdrawal id (the same reference every time), as a real PSP is idempotent on it.
 */
export class SandboxPayouts implements PayoutAdapter {
  readonly name = 'sandbox';

  async pay(request: PayoutRequest): Promise<PayoutOutcome> {
    if (request.pixKeyType === 'email' && request.pixKey.toLowerCase() === SANDBOX_FAILING_KEY) {
      return { status: 'failed', reason: 'Payout refused by the PSP: PIX key not found' };
    }
    // An end-to-end id in the shape PIX uses (E + 8-digit ISPB + 23 characters), derived from our id.
    const digest = createHash('sha256').update(request.withdrawalId).digest('hex').slice(0, 23);
    return { status: 'paid', reference: `E00000000${digest}` };
  }
}
