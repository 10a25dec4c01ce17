import { randomUUID } from 'node:crypto';
import { signIdentity, verifyIdentity } from '@seller-api/service-kit';
import { callerKeys, gatewayKey } from '../support/keys';
import { json, startFakeUpstream } from '../support/fake-upstream';
import { call } from '../support/system';
import { useSystem } from '../support/use-system';
import { hostPort, TcpProxy, viaProxy } from '../support/tcp-proxy';
import { waitFor } from '../support/wait';

let upstream: Awaited<ReturnType<typeof startFakeUpstream>>;
// The orders routes go to a recorder, to see exactly what the gateway forwards.
beforeAll(async () => {
  upstream = await startFakeUpstream((req, res) => {
    if (req.url.startsWith('/sellers/slow/')) return; // never answers
    json(res, 200, { message: 'ok', data: { method: req.method, body: req.body } });
  });
});
const t = useSystem({
  gateway: () => ({ ORDERS_URL: upstream.url, UPSTREAM_TIMEOUT_MS: '400' }),
  seller: true,
});
afterAll(() => upstream.close());
let key: string;
beforeAll(() => {
  key = t.seller.key;
});

describe('request ids', () => {
  it('creates an X-Request-Id for every response, errors included', async () => {
    const res = await call(`${t.url}/nowhere/`);
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.body.request_id).toBe(res.headers.get('x-request-id'));
  });

  it('echoes the client request id and passes it to the service', async () => {
    const id = `client-${randomUUID()}`;
    const res = await call(`${t.url}/sellers/orders/`, { key, headers: { 'x-request-id': id } });
    expect(res.headers.get('x-request-id')).toBe(id);
    expect(upstream.received.at(-1)?.headers['x-request-id']).toBe(id);
  });

  it('replaces a request id that is not a sane token', async () => {
    const res = await call(`${t.url}/sellers/orders/`, {
      key,
      headers: { 'x-request-id': 'bad id with spaces' },
    });
    expect(res.headers.get('x-request-id')).not.toBe('bad id with spaces');
  });
});

describe('metric labels', () => {
  it('labels requests by their documented route, and every other path as unmatched, whatever it is', async () => {
    const noise = `x${Date.now()}${Math.random().toString(36).slice(2)}`;
    await call(`${t.url}/sellers/${noise}/`);
    await call(`${t.url}/${noise}/`, { key });
    await call(`${t.url.replace('/api/v1', '')}/panel/api/${noise}`);
    await call(`${t.url}/sellers/orders/`, { key });
    const exposed = await t.gateway.service.runtime.metrics.registry.metrics();
    expect(exposed).not.toContain(noise);
    expect(exposed).toContain('route="unmatched"');
    expect(exposed).toContain('route="/api/v1/sellers/orders/"');
  });
});

describe('forwarding', () => {
  it('passes a signed identity, the path and the query, and never the API key', async () => {
    const res = await call(`${t.url}/sellers/orders/?limit=5&status=PAID`, { key });
    expect(res.status).toBe(200);
    const seen = upstream.received.at(-1);
    expect(seen?.url).toBe('/sellers/orders/?limit=5&status=PAID');
    expect(seen?.headers.authorization).toBeUndefined();
    // Signed over the path with its query: the same headers do not hold for another query.
    const headers = seen?.headers ?? {};
    const keys = callerKeys('orders');
    const verified = verifyIdentity(keys, headers, 'GET', '/sellers/orders/?limit=5&status=PAID');
    expect(verified?.caller).toBe('gateway');
    expect(verified?.identity).toMatchObject({
      environment: 'test',
      role: 'seller',
      seller_id: expect.any(String),
    });
    expect(verifyIdentity(keys, headers, 'GET', '/sellers/orders/?limit=100&status=PAID')).toBeNull();
    expect(verifyIdentity(keys, headers, 'GET', '/sellers/orders/')).toBeNull();
  });

  it('drops identity headers a caller tries to smuggle in', async () => {
    const forged = signIdentity(
      { caller: 'gateway', callee: 'orders', key: 'not-the-key-at-all-0123456789abcdef' },
      { user_id: randomUUID(), seller_id: randomUUID(), environment: 'live', role: 'operator' },
      'GET',
      '/sellers/orders/',
    );
    await call(`${t.url}/sellers/orders/`, { key, headers: forged });
    const verified = verifyIdentity(
      callerKeys('orders'),
      upstream.received.at(-1)?.headers ?? {},
      'GET',
      '/sellers/orders/',
    );
    expect(verified?.identity.role).toBe('seller');
    expect(verified?.identity.environment).toBe('test');
  });

  it('accepts an empty body on an action route, with or without Content-Type', async () => {
    const bare = await call(`${t.url}/sellers/orders/${randomUUID()}/cancel/`, { method: 'POST', key });
    expect(bare.status).toBe(200);
    const typed = await call(`${t.url}/sellers/orders/${randomUUID()}/cancel/`, {
      method: 'POST',
      key,
      headers: { 'content-type': 'application/json' },
    });
    expect(typed.status).toBe(200);
  });
});

describe('bad input', () => {
  it('answers 400 invalid_json to a body that is not JSON', async () => {
    const res = await call(`${t.url}/sellers/orders/`, {
      method: 'POST',
      key,
      rawBody: '{"customer":',
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'invalid_json', message: expect.any(String) });
  });

  it('answers 413 to a body over 1 MiB', async () => {
    const res = await call(`${t.url}/sellers/orders/`, {
      method: 'POST',
      key,
      rawBody: JSON.stringify({ pad: 'x'.repeat(1024 * 1024) }),
      headers: { 'content-type': 'application/json' },
    });
    expect(res.status).toBe(413);
    expect(res.body.code).toBe('payload_too_large');
  });

  it('answers 404 with the documented body to an unknown route, with or without a key', async () => {
    for (const k of [undefined, key]) {
      const res = await call(`${t.url}/nothing/here/`, { key: k });
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ code: 'not_found', message: expect.any(String) });
    }
    expect((await call(`${t.url.replace('/api/v1', '')}/other`)).status).toBe(404);
  });
});

describe('services that are down or slow', () => {
  it('answers 504 within the upstream timeout when a service does not answer', async () => {
    const started = Date.now();
    const res = await call(`${t.url}/sellers/slow/`, { key });
    expect(res.status).toBe(504);
    expect(res.body).toMatchObject({ code: 'gateway_timeout', message: expect.stringContaining('orders') });
    expect(Date.now() - started).toBeLessThan(3_000);
  });

  it('answers 503 at once when a service is down', async () => {
    const g = await t.startGateway({ WITHDRAWALS_URL: 'http://127.0.0.1:1' });
    const started = Date.now();
    const res = await call(`${g.url}/finance/balance/`, { key });
    expect(res.status).toBe(503);
    expect(res.body).toMatchObject({
      code: 'service_unavailable',
      message: expect.stringContaining('withdrawals'),
    });
    expect(Date.now() - started).toBeLessThan(3_000);
  });
});

describe('public documents and health', () => {
  it('serves the OpenAPI document without a key', async () => {
    const res = await call(`${t.url}/openapi.json`);
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe('3.1.0');
    expect(Object.keys(res.body.paths as object)).toEqual(
      expect.arrayContaining(['/sellers/orders/', '/sellers/orders/{uuid}/tracking/', '/config/webhooks/']),
    );
  });

  it('serves the reference page with Swagger UI from its own origin, nothing from the internet', async () => {
    const origin = new URL(t.url).origin;
    const res = await fetch(`${t.url}/docs`);
    const html = await res.text();
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/html/);
    // Every script and stylesheet is a path on this origin; no URL with a scheme or host at all.
    expect(html).not.toMatch(/https?:|\/\/[a-z0-9]/i);
    expect(html).not.toMatch(/<script>|<script(?![^>]*\ssrc=)[^>]*>/i);
    const assets = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1] ?? '');
    const bundle = assets.find((a) => a.endsWith('/swagger-ui-bundle.js'));
    expect(bundle).toMatch(/^\/api\/v1\/docs\/assets\//);
    expect(assets.filter((a) => a.endsWith('.js') || a.endsWith('.css'))).toHaveLength(3);
    const csp = res.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toMatch(/script-src[^;]*unsafe-inline/);
    expect(csp).not.toMatch(/style-src[^;]*unsafe-inline/);

    for (const asset of assets.filter((a) => a.startsWith('/api/v1/docs/assets/'))) {
      const file = await fetch(`${origin}${asset}`);
      const body = await file.text();
      expect(file.status).toBe(200);
      expect(body.length).toBeGreaterThan(0);
      const type = asset.endsWith('.css') ? /text\/css/ : /javascript/;
      expect(file.headers.get('content-type')).toMatch(type);
      if (asset === bundle) {
        expect(file.headers.get('cache-control')).toMatch(/max-age=31536000.*immutable/);
        expect(body).toContain('SwaggerUIBundle');
      }
    }
    const init = await (await fetch(`${origin}/api/v1/docs/assets/init.js`)).text();
    expect(init).toContain('"/api/v1/openapi.json"');
  });

  it('answers 404 in the documented shape to an unknown file under the reference page', async () => {
    const res = await call(`${t.url}/docs/assets/nope.js`);
    expect(res.status).toBe(404);
    expect(res.body).toMatchObject({ code: 'not_found', message: expect.any(String) });
  });

  it('answers /healthz and /readyz without a key', async () => {
    const base = t.url.replace('/api/v1', '');
    expect((await call(`${base}/healthz`)).status).toBe(200);
    const ready = await call(`${base}/readyz`);
    expect(ready.status).toBe(200);
    expect(ready.body.checks).toEqual({ postgres: 'ok', rabbitmq: 'ok', redis: 'ok' });
  });

  it('runs the probes of the public /readyz at most once per READINESS_CACHE_MS, whatever the requests', async () => {
    const { host, port } = hostPort(t.env.REDIS_URL as string, 6379);
    const proxy = new TcpProxy(host, port);
    await proxy.start();
    const g = await t.startGateway({
      REDIS_URL: viaProxy(t.env.REDIS_URL as string, proxy.port),
      READINESS_CACHE_MS: '60000',
    });
    try {
      const base = g.url.replace('/api/v1', '');
      expect((await call(`${base}/readyz`)).status).toBe(200);
      // Redis is gone: a request that ran the probes would say so. None does within the window.
      await proxy.cut();
      const flood = await Promise.all(Array.from({ length: 50 }, () => call(`${base}/readyz`)));
      expect(flood.map((r) => r.status)).toEqual(Array.from({ length: 50 }, () => 200));
      expect(flood[0]?.body.checks).toEqual({ postgres: 'ok', rabbitmq: 'ok', redis: 'ok' });
    } finally {
      // Redis back before the gateway stops, so that no reconnection of it outlives the test.
      await proxy.restore();
      await waitFor(async () => g.service.redis.status === 'ready', { what: 'redis reconnected' });
      await g.service.stop();
      await proxy.stop();
    }
  });
});

describe('services refuse requests that bypass the gateway', () => {
  const direct = (headers: Record<string, string>) =>
    call(`${t.system.services.withdrawals}/finance/balance/`, { headers });
  const identity = () => ({
    user_id: randomUUID(),
    seller_id: randomUUID(),
    environment: 'test' as const,
    role: 'seller' as const,
  });

  it('refuses a request with no identity', async () => {
    const res = await direct({});
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('unauthorized');
  });

  it('refuses an identity signed with another key, for another path, or too long ago', async () => {
    const wrongKey = signIdentity(
      { caller: 'gateway', callee: 'withdrawals', key: 'someone-elses-key-0123456789abcdef' },
      identity(),
      'GET',
      '/finance/balance/',
    );
    const otherPath = signIdentity(gatewayKey('withdrawals'), identity(), 'GET', '/finance/withdrawals/');
    const stale = signIdentity(
      gatewayKey('withdrawals'),
      identity(),
      'GET',
      '/finance/balance/',
      null,
      undefined,
      Date.now() - 5 * 60_000,
    );
    for (const headers of [wrongKey, otherPath, stale]) expect((await direct(headers)).status).toBe(401);
  });

  it('accepts the identity the gateway signs', async () => {
    const res = await direct(signIdentity(gatewayKey('withdrawals'), identity(), 'GET', '/finance/balance/'));
    expect(res.status).toBe(200);
  });

  it('refuses a signed call replayed with another body, and one stripped of its body signature', async () => {
    const path = '/sellers/products/';
    const seller = identity();
    const sent = JSON.stringify({ name: 'Camiseta', price: 5000, type: 'DIGITAL' });
    const headers: Record<string, string> = {
      ...signIdentity(gatewayKey('orders'), seller, 'POST', path, sent),
      'content-type': 'application/json',
    };
    const post = (body: string, h: Record<string, string> = headers) =>
      call(`${t.system.services.orders}${path}`, { method: 'POST', headers: h, rawBody: body });
    // Another body within the signature's 60 s: refused, and nothing is created.
    const tampered = await post(JSON.stringify({ name: 'Camiseta', price: 1, type: 'DIGITAL' }));
    expect(tampered.status).toBe(401);
    expect(tampered.body).toMatchObject({ code: 'unauthorized' });
    // Signed by another caller than the one named: refused.
    expect((await post(sent, { ...headers, 'x-sa-caller': 'orders' })).status).toBe(401);
    // The body it was signed for goes through.
    const created = await post(sent);
    expect(created.status).toBe(201);
    expect(created.body.data).toMatchObject({ name: 'Camiseta', price: 5000 });
  });
});
