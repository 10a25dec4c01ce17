// PSP_NOTIFICATION_HOST: the PSP's notification path answers only on the PSP's host (the one whose
// Ingress checks the client certificate), so the public host cannot be used to skip mTLS.
import http from 'node:http';
import { call, createKey, startSystem, type RunningGateway, type System } from '../support/system';

let system: System;
let open: RunningGateway;
let guarded: RunningGateway;

beforeAll(async () => {
  system = await startSystem();
  [open, guarded] = await Promise.all([
    system.startGateway(),
    system.startGateway({ PSP_NOTIFICATION_HOST: 'PSP.Seller.Example' }),
  ]);
});
afterAll(() => system.stop());

/** A request with a chosen Host header (fetch does not let one set it). */
function request(
  url: string,
  host: string,
  options: { method?: string; body?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname + target.search,
        method: options.method ?? 'GET',
        headers: { ...options.headers, host },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({
            status: res.statusCode ?? 0,
            body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
          });
        });
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}

const notification = JSON.stringify({ pix: [] });
const post = { method: 'POST', body: notification, headers: { 'content-type': 'application/json' } };

describe('with PSP_NOTIFICATION_HOST set', () => {
  it('answers the PSP path on the PSP host, with or without a port, in any case', async () => {
    for (const host of ['psp.seller.example', 'psp.seller.example:443', 'Psp.Seller.Example']) {
      const res = await request(`${guarded.url}/psp/webhook/pix`, host, post);
      // payments itself answers: no PSP secret is configured in the tests, so the credentials fail.
      expect({ host, status: res.status, code: res.body.code }).toEqual({
        host,
        status: 401,
        code: 'unauthorized',
      });
    }
  });

  it('answers 404, like an unknown route, on any other host', async () => {
    for (const host of ['api.seller.example', 'api.seller.example:443', 'psp.seller.example.evil.test']) {
      const res = await request(`${guarded.url}/psp/webhook/pix`, host, post);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({
        message: 'Route POST /api/v1/psp/webhook/pix not found.',
        code: 'not_found',
        request_id: expect.any(String),
      });
    }
    // Nor the gateway's own address, the Host that a client calling the pod directly sends.
    const direct = await call(`${guarded.url}/psp/webhook/pix`, { method: 'POST', rawBody: notification });
    expect(direct.status).toBe(404);
  });

  it('leaves every other route alone, whatever the host', async () => {
    const { key } = await createKey(guarded.service);
    const res = await request(`${guarded.url}/sellers/orders/`, 'api.seller.example', {
      headers: { authorization: `Bearer ${key}` },
    });
    expect(res.status).toBe(200);
  });
});

it('without it, the PSP path answers on any host', async () => {
  const res = await request(`${open.url}/psp/webhook/pix`, 'api.seller.example', post);
  expect(res.status).toBe(401);
});

it('refuses a PSP_NOTIFICATION_HOST that is not a bare host name', async () => {
  for (const value of ['https://psp.seller.example', 'psp.seller.example:443', 'psp.seller.example/x'])
    await expect(system.startGateway({ PSP_NOTIFICATION_HOST: value })).rejects.toThrow(
      /PSP_NOTIFICATION_HOST/,
    );
});
