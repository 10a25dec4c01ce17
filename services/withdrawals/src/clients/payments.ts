import {
  ReconciliationChargesResponse,
  type Environment,
  type Identity,
  type ReconciliationChargeList,
  type ReconciliationChargesQueryInput,
} from '@seller-api/contracts';
import { injectTraceContext, signIdentity, type CallKey } from '@seller-api/service-kit';

const PATH = '/internal/transactions/';

/**
 * The user id the reconciliation signs its calls with. It acts as an operator of one environment (the
 * route reads every seller's charges) and is no person: no gateway user has this id.
 */
export const RECONCILIATION_USER_ID = '00000000-0000-4000-8000-000000000001';

/** Where the reconciliation reads payments' charges; a stand-in in unit tests. */
export interface PaidChargesSource {
  paidCharges(query: ReconciliationChargesQueryInput): Promise<ReconciliationChargeList>;
}

/** Payments did not answer, or answered something other than a page of charges. */
export class PaymentsCallError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PaymentsCallError';
  }
}

/**
 * Internal HTTP to payments (`PAYMENTS_URL`) for the ledger's reconciliation: `GET /internal/transactions/`
 * with an operator identity of the environment asked about, signed with payments' secret
 * (`PAYMENTS_INTERNAL_SECRET`) like every internal call. A page at a time, each bounded by `timeoutMs`. Errors name the status and payments'
 * message, never the signed headers.
 */
export class PaymentsClient implements PaidChargesSource {
  constructor(
    private readonly origin: string,
    private readonly callKey: CallKey,
    private readonly timeoutMs = 10_000,
  ) {}

  async paidCharges(query: ReconciliationChargesQueryInput): Promise<ReconciliationChargeList> {
    const url = new URL(PATH, this.origin);
    for (const [name, value] of Object.entries(query)) {
      if (value !== undefined) url.searchParams.set(name, String(value));
    }
    // Signed over the path with its query, exactly as fetch sends them (no body).
    const headers = signIdentity(
      this.callKey,
      operatorOf(query.environment),
      'GET',
      `${url.pathname}${url.search}`,
    );
    injectTraceContext(headers);
    let status: number;
    let text: string;
    try {
      const res = await fetch(url, { headers, signal: AbortSignal.timeout(this.timeoutMs) });
      status = res.status;
      text = await res.text();
    } catch (err) {
      throw new PaymentsCallError(`payments did not answer ${PATH}: ${(err as Error).message}`);
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = null;
    }
    if (status !== 200) {
      const message = (body as { message?: unknown } | null)?.message;
      throw new PaymentsCallError(
        `payments answered ${status} to ${PATH}${typeof message === 'string' ? `: ${message}` : ''}`,
      );
    }
    const parsed = ReconciliationChargesResponse.safeParse(body);
    if (!parsed.success) throw new PaymentsCallError(`payments answered ${PATH} with an unreadable page`);
    return parsed.data.data;
  }
}

function operatorOf(environment: Environment): Identity {
  return { user_id: RECONCILIATION_USER_ID, seller_id: null, environment, role: 'operator' };
}
