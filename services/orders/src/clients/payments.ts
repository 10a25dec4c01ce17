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
    const parsed = Charge.safeParse((JSON.parse(text) as { data?: unknown }).data);
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
      throw serviceUnavailable(
        'The payments service did not answer; nothing was changed. Retry the request.',
      );
    }
    const body = JSON.parse(text || '{}') as { message?: string; code?: string; data?: unknown };
    if (status === 409 || status === 404 || status === 403) {
      throw new HttpError(
        status,
        status === 409 ? 'conflict' : status === 404 ? 'not_found' : 'forbidden',
        body.message ?? 'Refused.',
      );
    }
    if (status !== 200)
      throw serviceUnavailable('The payments service could not complete the action; retry the request.');
    const state = body.data === null || body.data === undefined ? null : ChargeState.parse(body.data);
    return { message: body.message ?? '', state };
  }

  async close(): Promise<void> {
    await this.pool.close().catch(() => undefined);
  }
}

const unavailable = () =>
  serviceUnavailable(
    'The payments service could not create the PIX charge; the order was not created. Retry the request.',
  );
