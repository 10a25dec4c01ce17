import {
  Charge,
  ChargeState,
  type ChargeAction,
  type CreateChargeRequest,
  type Identity,
} from '@seller-api/contracts';
import { HttpError, injectTraceContext, serviceUnavailable, signIdentity } from '@seller-api/service-kit';
import { Pool } from 'undici';

const PATH = '/internal/charges/';

/**
 * Internal HTTP to the payments service, bounded by a deadline: when payments cannot answer, the
 * create-order call fails with 503 and stores nothing (see docs/architecture.md).
 */
export class PaymentsClient {
  private readonly pool: Pool;

  constructor(
    origin: string,
    private readonly secret: string,
    private readonly timeoutMs: number,
  ) {
    this.pool = new Pool(origin, {
      connections: 64,
      keepAliveTimeout: 30_000,
      connectTimeout: Math.min(timeoutMs, 2_000),
    });
  }

  async createCharge(identity: Identity, request: CreateChargeRequest): Promise<Charge> {
    let status: number;
    let text: string;
    const headers = {
      'content-type': 'application/json',
      ...signIdentity(this.secret, identity, 'POST', PATH),
    };
    injectTraceContext(headers);
    try {
      const res = await this.pool.request({
        path: PATH,
        method: 'POST',
        headers,
        body: JSON.stringify(request),
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      status = res.statusCode;
      text = await res.body.text();
    } catch {
      throw unavailable();
    }
    if (status !== 200 && status !== 201) throw unavailable();
    const parsed = Charge.safeParse(dataOf(text)?.data);
    if (!parsed.success) throw unavailable();
    return parsed.data;
  }

  /**
   * An action on the order's charge (cancel, refund, a sandbox simulation). Payments' refusals (409,
   * 404, 403) reach the client as they are; anything else is a 503.
   */
  async act(
    identity: Identity,
    orderId: string,
    action: ChargeAction,
  ): Promise<{ message: string; state: ChargeState | null }> {
    const path = `/internal/charges/${orderId}/${action}/`;
    let status: number;
    let text: string;
    const headers = signIdentity(this.secret, identity, 'POST', path);
    injectTraceContext(headers);
    try {
      const res = await this.pool.request({
        path,
        method: 'POST',
        headers,
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      status = res.statusCode;
      text = await res.body.text();
    } catch {
      // The outcome is unknown (the action may have been applied): retrying is safe, every action
      // answers 409 when it was already done.
      throw serviceUnavailable('The payments service did not answer in time. Retry the request.');
    }
    // A proxy's HTML error page or a truncated answer is the service's trouble, not the client's.
    const envelope = dataOf(text);
    const body = envelope ?? {};
    if (status === 409 || status === 404 || status === 403) {
      throw new HttpError(
        status,
        status === 409 ? 'conflict' : status === 404 ? 'not_found' : 'forbidden',
        body.message ?? 'Refused.',
      );
    }
    if (status !== 200)
      throw serviceUnavailable('The payments service could not complete the action; retry the request.');
    if (!envelope) {
      throw serviceUnavailable(
        'The payments service gave an answer that could not be read; retry the request.',
      );
    }
    if (body.data === null || body.data === undefined) return { message: body.message ?? '', state: null };
    const state = ChargeState.safeParse(body.data);
    if (!state.success) {
      throw serviceUnavailable(
        'The payments service gave an answer that could not be read; retry the request.',
      );
    }
    return { message: body.message ?? '', state: state.data };
  }

  async close(): Promise<void> {
    await this.pool.close().catch(() => undefined);
  }
}

const unavailable = () =>
  serviceUnavailable(
    'The payments service could not create the PIX charge; the order was not created. Retry the request.',
  );

/** The JSON envelope of an answer, or null when the text is not JSON. */
function dataOf(text: string): { message?: string; code?: string; data?: unknown } | null {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? value : null;
  } catch {
    return null;
  }
}
