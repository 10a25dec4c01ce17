import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Identity } from '@seller-api/contracts';
import {
  HttpError,
  callerAccess,
  createHttpApp,
  createLogger,
  createMetrics,
  finishHttpApp,
  listen,
  requireCallerAccess,
  requireIdentity,
  route,
  signIdentity,
  startMetricsServer,
  withPlainRoutes,
  type PlainRequest,
} from '@seller-api/service-kit';
import { callKey, callerKeys } from '../support/keys';
import { LogCapture } from '../support/logs';

const KEYS = callerKeys('things');
// Only the gateway may post things: orders' signature is good, its row is empty.
const ACCESS = callerAccess({ gateway: [{ roles: ['seller'], routes: ['POST /things/'] }] });
const IDENTITY: Identity = {
  user_id: '00000000-0000-4000-8000-000000000001',
  seller_id: '00000000-0000-4000-8000-000000000002',
  seller_name: 'Loja',
  environment: 'test',
  role: 'seller',
};

let server: http.Server;
let metricsServer: http.Server;
let base: string;
let metricsBase: string;
const logs = new LogCapture();
// Who answered each request: the plain path or express.
const seen: Array<{ by: 'plain' | 'express'; body: unknown }> = [];

beforeAll(async () => {
  const logger = createLogger('plain-route-test', 'info', logs);
  const metrics = createMetrics('plain-route-test');
  const handle = async ({ body }: Pick<PlainRequest, 'body'>) => {
    const fields = body as { fail?: string };
    if (fields.fail === 'http') throw new HttpError(409, 'conflict', 'Already there.', { id: ['taken'] });
    if (fields.fail === 'crash') throw new Error('select * from secret_table');
    return { status: 201, body: { message: 'Made.', data: body } };
  };
  const app = createHttpApp({ logger, metrics });
  app.use(requireIdentity(KEYS));
  app.use(requireCallerAccess(ACCESS));
  app.post(
    '/things/',
    route(async (req, res) => {
      seen.push({ by: 'express', body: req.body });
      const answer = await handle({ body: req.body });
      res.status(answer.status).json(answer.body);
    }),
  );
  finishHttpApp(app, logger);
  const listener = withPlainRoutes(
    app,
    [
      {
        method: 'POST',
        path: '/things/',
        async handle(request) {
          expect(request.identity).toEqual(IDENTITY);
          seen.push({ by: 'plain', body: request.body });
          return handle(request);
        },
      },
    ],
    { keys: KEYS, access: ACCESS, metrics, logger },
  );
  server = await listen(listener, 0, '127.0.0.1');
  metricsServer = await startMetricsServer(metrics, 0, '127.0.0.1');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  metricsBase = `http://127.0.0.1:${(metricsServer.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.close();
  metricsServer.close();
});
beforeEach(() => {
  seen.length = 0;
});

function post(
  body: string,
  { path = '/things/', type = 'application/json', signed = true, caller = 'gateway' } = {},
): Promise<Response> {
  return fetch(`${base}${path}`, {
    method: 'POST',
    headers: {
      'content-type': type,
      // Signed as a service signs: the path with its query, and the body's bytes.
      ...(signed ? signIdentity(callKey(caller, 'things'), IDENTITY, 'POST', path, body) : {}),
    },
    body,
  });
}

describe('a route served on plain node:http ahead of express', () => {
  it('hands the verified identity and the parsed body to the handler, and answers its status and JSON', async () => {
    const res = await post(JSON.stringify({ name: 'ação ☃' }));
    expect(res.status).toBe(201);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    expect(res.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    expect(await res.json()).toEqual({ message: 'Made.', data: { name: 'ação ☃' } });
    expect(seen).toEqual([{ by: 'plain', body: { name: 'ação ☃' } }]);
  });

  it('leaves requests of another shape to express, which answers them the same way', async () => {
    // A JSON media type of the `+json` family, and a query string: both for express.
    const vendor = await post(JSON.stringify({ a: 1 }), { type: 'application/vnd.seller+json' });
    const query = await post(JSON.stringify({ b: 2 }), { path: '/things/?x=1' });
    expect([vendor.status, query.status]).toEqual([201, 201]);
    expect(await vendor.json()).toEqual({ message: 'Made.', data: { a: 1 } });
    expect(seen.map((s) => s.by)).toEqual(['express', 'express']);
  });

  it('refuses a request without the gateway identity with 401 in the documented shape', async () => {
    const res = await post('{}', { signed: false });
    expect(res.status).toBe(401);
    expect(await res.json()).toEqual({
      message: expect.any(String),
      code: 'unauthorized',
      request_id: res.headers.get('x-request-id'),
    });
    expect(seen).toEqual([]);
  });

  it('refuses a caller whose table row does not hold the route with 403, on both paths', async () => {
    for (const path of ['/things/', '/things/?via=express']) {
      const res = await post('{"a":1}', { path, caller: 'orders' });
      expect(res.status).toBe(403);
      expect(await res.json()).toMatchObject({ code: 'forbidden' });
    }
    expect(seen).toEqual([]);
  });

  it('answers 400 invalid_json to a body that is not JSON, or not an object or array', async () => {
    for (const body of ['{"name": ', '"just a string"', '42']) {
      const res = await post(body);
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ code: 'invalid_json' });
    }
    expect(seen).toEqual([]);
  });

  it('answers 413 to a body over 1 MiB', async () => {
    const res = await post(JSON.stringify({ pad: 'x'.repeat(1024 * 1024) }));
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ code: 'payload_too_large' });
  });

  it("answers the handler's HttpError as it says, and any other failure as a 500 that shows nothing", async () => {
    const conflict = await post(JSON.stringify({ fail: 'http' }));
    expect(conflict.status).toBe(409);
    expect(await conflict.json()).toEqual({
      message: 'Already there.',
      code: 'conflict',
      request_id: conflict.headers.get('x-request-id'),
      data: { id: ['taken'] },
    });
    const crash = await post(JSON.stringify({ fail: 'crash' }), {});
    expect(crash.status).toBe(500);
    const text = await crash.text();
    expect(JSON.parse(text)).toMatchObject({ code: 'internal_error' });
    expect(text).not.toMatch(/secret_table/);
    expect(logs.text()).toContain('unhandled error');
  });

  it('labels its metrics with the route template', async () => {
    await post('{}');
    const text = await (await fetch(`${metricsBase}/metrics`)).text();
    expect(text).toMatch(/http_requests_total\{[^}]*route="\/things\/"[^}]*status_code="201"[^}]*\} [1-9]/);
  });
});
