// The PSP routes (`/api/v1/psp/...`) have no API key: each notification spends its client address's
// budget (PSP_RATE_LIMIT_PER_MINUTE, shared through Redis, in memory without it) and its body is capped
// at PSP_NOTIFICATION_MAX_BYTES (docs/limits.md). Payments is a fake here: what reaches it is counted.
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { json, startFakeUpstream } from '../support/fake-upstream';
import { call, createKey, type RunningGateway } from '../support/system';
import { useSystem } from '../support/use-system';

const t = useSystem({ gateway: false });
let upstream: Awaited<ReturnType<typeof startFakeUpstream>>;
beforeAll(async () => {
  upstream = await startFakeUpstream((_req, res) => json(res, 200, { message: 'ok', data: {} }));
  t.cleanup(() => upstream.close());
});

/** A gateway whose payments and orders are the fake, with its own Redis budgets. */
const gateway = (env: Record<string, string> = {}) =>
  t.startGateway({
    PAYMENTS_URL: upstream.url,
    ORDERS_URL: upstream.url,
    REDIS_KEY_PREFIX: `psp-limits:${randomUUID()}:`,
    ...env,
  });

/** An API Pix notification of `payments` payments, each with `refunds` refunds (`devolucoes`). */
function notification(payments: number, refunds = 0): string {
  const pix = Array.from({ length: payments }, (_, i) => ({
    endToEndId: `E12345678202611281200${String(i).padStart(11, '0')}`,
    txid: `tx${String(i).padStart(30, '0')}`,
    valor: '150.00',
    chave: '7d9f0335-8dcc-4054-9bf9-0dbd61d36906',
    horario: '2026-11-28T12:00:00.000Z',
    infoPagador: 'Pedido 1234 - camiseta azul tamanho M',
    devolucoes: Array.from({ length: refunds }, (_r, j) => ({
      id: `D${String(i).padStart(10, '0')}${String(j).padStart(10, '0')}`,
      rtrId: `D12345678202611281300${String(j).padStart(11, '0')}`,
      valor: '1.00',
      horario: { solicitacao: '2026-11-28T13:00:00.000Z', liquidacao: '2026-11-28T13:00:01.000Z' },
      status: 'DEVOLVIDO',
      motivo: 'Devolução solicitada pelo recebedor',
    })),
  }));
  return JSON.stringify({ pix });
}

const notify = (g: RunningGateway, from: string, body = notification(1)) =>
  call(`${g.url}/psp/webhook/pix`, {
    method: 'POST',
    rawBody: body,
    headers: { 'content-type': 'application/json', 'x-forwarded-for': from },
  });

const forwarded = () => upstream.received.filter((r) => r.url.startsWith('/psp/')).length;

describe('the PSP routes are rate limited per client address', () => {
  it('shares one budget per address between replicas, then answers 429 in the documented shape', async () => {
    const prefix = `psp-limits:${randomUUID()}:`;
    const env = { PSP_RATE_LIMIT_PER_MINUTE: '4', REDIS_KEY_PREFIX: prefix };
    const [a, b] = await Promise.all([gateway(env), gateway(env)]);
    const before = forwarded();
    const statuses = [];
    for (let i = 0; i < 4; i += 1) statuses.push((await notify(i % 2 ? a : b, '203.0.113.20')).status);
    expect(statuses).toEqual([200, 200, 200, 200]);

    const over = await notify(a, '203.0.113.20');
    expect(over.status).toBe(429);
    expect(over.body).toEqual({
      message: expect.stringContaining('4 requests per minute'),
      code: 'rate_limited',
      request_id: over.headers.get('x-request-id'),
    });
    const retryAfter = Number(over.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect((await notify(b, '203.0.113.20')).status).toBe(429);
    // Refused ones never reach payments.
    expect(forwarded() - before).toBe(4);

    // Another client behind the same trusted proxy has its own budget.
    expect((await notify(b, '203.0.113.21')).status).toBe(200);
  });

  it('keeps the budget in memory, and keeps serving, while Redis cannot be reached', async () => {
    const g = await gateway({ REDIS_URL: 'redis://127.0.0.1:1', PSP_RATE_LIMIT_PER_MINUTE: '3' });
    const statuses = [];
    for (let i = 0; i < 4; i += 1) statuses.push((await notify(g, '203.0.113.30')).status);
    expect(statuses).toEqual([200, 200, 200, 429]);
  });

  it('is a budget of its own: a seller key and the failed-authentication budget are not spent by it', async () => {
    const g = await gateway({ PSP_RATE_LIMIT_PER_MINUTE: '1', UNAUTHENTICATED_RATE_LIMIT_PER_MINUTE: '1' });
    const { key } = await createKey(g.service);
    expect((await notify(g, '203.0.113.40')).status).toBe(200);
    expect((await notify(g, '203.0.113.40')).status).toBe(429);
    const seller = await call(`${g.url}/sellers/orders/`, {
      key,
      headers: { 'x-forwarded-for': '203.0.113.40' },
    });
    expect(seller.status).toBe(200);
    expect(seller.headers.get('x-ratelimit-limit')).toBe('300');
    const guess = await call(`${g.url}/sellers/orders/`, {
      headers: { 'x-forwarded-for': '203.0.113.40', authorization: `Bearer mk_test_${'q'.repeat(32)}` },
    });
    expect(guess.status).toBe(401);
  });
});

describe('the PSP routes cap the body at what a notification needs', () => {
  let g: RunningGateway;
  beforeAll(async () => {
    g = await gateway();
  });

  it('forwards a batch of a hundred payments, and a payment with a hundred refunds', async () => {
    for (const body of [notification(100), notification(1, 100)]) {
      expect(Buffer.byteLength(body)).toBeLessThan(64 * 1024);
      const res = await notify(g, '203.0.113.50', body);
      expect(res.status).toBe(200);
    }
  });

  it('answers 413 payload_too_large to a body over 64 KiB, announced or not, and forwards nothing', async () => {
    const before = forwarded();
    const body = JSON.stringify({ pix: [], pad: 'x'.repeat(64 * 1024) });
    const announced = await notify(g, '203.0.113.51', body);
    expect(announced.status).toBe(413);
    expect(announced.body).toEqual({
      message: 'Request body exceeds 64 KiB.',
      code: 'payload_too_large',
      request_id: announced.headers.get('x-request-id'),
    });

    // Sent in chunks, with no Content-Length: refused once it passes the cap.
    const chunked = await postChunked(`${g.url}/psp/webhook/pix`, [
      body.slice(0, 40_000),
      body.slice(40_000),
    ]);
    expect(chunked.status).toBe(413);
    expect(JSON.parse(chunked.text)).toMatchObject({ code: 'payload_too_large' });
    expect(forwarded()).toBe(before);
  });

  it('keeps the 1 MiB cap on every other route', async () => {
    const { key } = await createKey(g.service);
    const res = await call(`${g.url}/sellers/orders/`, {
      method: 'POST',
      key,
      rawBody: JSON.stringify({ pad: 'x'.repeat(200 * 1024) }),
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(200);
  });

  it('follows PSP_NOTIFICATION_MAX_BYTES, which must lie between 1 KiB and 1 MiB', async () => {
    const small = await gateway({ PSP_NOTIFICATION_MAX_BYTES: '2048' });
    expect((await notify(small, '203.0.113.52', notification(1))).status).toBe(200);
    const over = await notify(small, '203.0.113.52', notification(10));
    expect(over.status).toBe(413);
    expect(over.body.message).toBe('Request body exceeds 2 KiB.');
    for (const value of ['1023', String(1024 * 1024 + 1), 'lots'])
      await expect(gateway({ PSP_NOTIFICATION_MAX_BYTES: value })).rejects.toThrow(
        /PSP_NOTIFICATION_MAX_BYTES/,
      );
    await expect(gateway({ PSP_RATE_LIMIT_PER_MINUTE: '0' })).rejects.toThrow(/PSP_RATE_LIMIT_PER_MINUTE/);
  });
});

/** A POST whose body goes in chunks (Transfer-Encoding: chunked), without a Content-Length. */
function postChunked(url: string, chunks: string[]): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: 'POST', agent: false, headers: { 'content-type': 'application/json' } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
      },
    );
    req.on('error', reject);
    for (const chunk of chunks) req.write(chunk);
    req.end();
  });
}
