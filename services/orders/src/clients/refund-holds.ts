import {
  RefundHoldResponse,
  RefundReleaseResponse,
  type Identity,
  type RefundHold,
  type RefundHoldRequest,
  type RefundReleaseRequest,
} from '@seller-api/contracts';
import {
  HttpError,
  injectTraceContext,
  serviceUnavailable,
  signIdentity,
  type CallKey,
} from '@seller-api/service-kit';
import { Pool } from 'undici';

/** What withdrawals answers, with its 404, for an order the ledger files under another owner. */
const ORDER_NOT_FOUND = 'Order not found.';

/**
 * Internal HTTP to withdrawals' refund holds (docs/finance.md, "Refunds"), with the seller's signed
 * identity: a seller's refund reserves the order's net from the available balance before payments is
 * asked for it, and gives it back when payments refunded nothing. Bounded by `timeoutMs`.
 */
export class RefundHoldsClient {
  private readonly pool: Pool;

  constructor(
    origin: string,
    private readonly callKey: CallKey,
    private readonly timeoutMs: number,
  ) {
    this.pool = new Pool(origin, {
      connections: 16,
      keepAliveTimeout: 30_000,
      connectTimeout: Math.min(timeoutMs, 2_000),
    });
  }

  /**
   * Reserves the net (or finds it reserved). 409 `insufficient_balance` when the available balance does
   * not cover it; 404 when the ledger files the order under another owner; 503 when the answer is
   * unknown (a retry reserves the same hold, and a hold nobody uses is released by withdrawals' sweep).
   */
  async hold(identity: Identity, orderId: string, known: RefundHoldRequest): Promise<RefundHold> {
    const answer = await this.post(identity, `/internal/refund-holds/${orderId}/`, known);
    if (answer?.status === 409 && answer.body.code === 'insufficient_balance')
      throw new HttpError(409, 'insufficient_balance', answer.body.message ?? 'Insufficient balance.');
    // Only withdrawals' own "no such order" is the order's 404. A 404 for the route is a withdrawals
    // older than holds, in the middle of a deploy (docs/deploy.md, "Upgrades and rollbacks"): retry later.
    if (answer?.status === 404 && answer.body.message === ORDER_NOT_FOUND)
      throw new HttpError(404, 'not_found', ORDER_NOT_FOUND);
    const parsed = answer?.status === 200 ? RefundHoldResponse.safeParse(answer.body) : null;
    if (!parsed?.success)
      throw serviceUnavailable('The balance could not be checked for this refund; retry the request.');
    return parsed.data.data;
  }

  /** Gives back one attempt's hold (the last one releases the net); whether the net was released. */
  async release(identity: Identity, orderId: string, holdSeq?: number): Promise<boolean> {
    const body: RefundReleaseRequest = holdSeq === undefined ? {} : { hold_seq: holdSeq };
    const answer = await this.post(identity, `/internal/refund-holds/${orderId}/release/`, body);
    const parsed = answer?.status === 200 ? RefundReleaseResponse.safeParse(answer.body) : null;
    if (!parsed?.success)
      throw new Error(`withdrawals answered ${answer?.status ?? 'nothing'} to the release of a refund hold`);
    return parsed.data.data.released;
  }

  private async post(
    identity: Identity,
    path: string,
    body: unknown,
  ): Promise<{ status: number; body: { message?: string; code?: string } } | null> {
    // The identity is signed over the exact bytes sent (kit identity.ts).
    const sent = JSON.stringify(body);
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      ...signIdentity(this.callKey, identity, 'POST', path, sent),
    };
    injectTraceContext(headers);
    try {
      const res = await this.pool.request({
        path,
        method: 'POST',
        headers,
        body: sent,
        headersTimeout: this.timeoutMs,
        bodyTimeout: this.timeoutMs,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
      const text = await res.body.text();
      let parsed: unknown = null;
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = null;
      }
      return {
        status: res.statusCode,
        body: typeof parsed === 'object' && parsed !== null ? (parsed as { message?: string }) : {},
      };
    } catch {
      return null;
    }
  }

  async close(): Promise<void> {
    await this.pool.close().catch(() => undefined);
  }
}
