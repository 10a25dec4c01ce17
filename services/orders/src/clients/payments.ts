import { Charge, type CreateChargeRequest, type Identity } from '@seller-api/contracts';
import { serviceUnavailable, signIdentity } from '@seller-api/service-kit';
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
    try {
      const res = await this.pool.request({
        path: PATH,
        method: 'POST',
        headers: { 'content-type': 'application/json', ...signIdentity(this.secret, identity, 'POST', PATH) },
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

  async close(): Promise<void> {
    await this.pool.close().catch(() => undefined);
  }
}

const unavailable = () =>
  serviceUnavailable(
    'The payments service could not create the PIX charge; the order was not created. Retry the request.',
  );
