import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createHttpApp,
  createLogger,
  createMetrics,
  finishHttpApp,
  listen,
  route,
  startMetricsServer,
} from '@seller-api/service-kit';
import { LogCapture } from '../support/logs';

let server: http.Server;
let metricsServer: http.Server;
let base: string;
const logs = new LogCapture();

beforeAll(async () => {
  const logger = createLogger('http-test', 'info', logs);
  const metrics = createMetrics('http-test');
  const app = createHttpApp({ logger, metrics });
  app.get(
    '/things/:id/',
    route(async (req, res) => {
      res.json({ id: req.params.id });
    }),
  );
  app.get(
    '/boom/',
    route(async () => {
      throw new Error('select * from secret_table where password = hunter2');
    }),
  );
  // What a service sees while PostgreSQL restarts: its connection reset, then refused, then told so.
  app.get(
    '/database-away/:how/',
    route(async (req) => {
      const errors: Record<string, Error> = {
        reset: Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }),
        shutdown: Object.assign(new Error('the database system is shutting down'), { code: '57P03' }),
        wrapped: Object.assign(new Error('insert failed'), { previous: { code: 'ECONNREFUSED' } }),
      };
      throw errors[req.params.how as string] ?? new Error('unknown');
    }),
  );
  app.post(
    '/echo/',
    route(async (req, res) => {
      res.json({ got: req.body as unknown });
    }),
  );
  finishHttpApp(app, logger);
  server = await listen(app, 0, '127.0.0.1');
  metricsServer = await startMetricsServer(metrics, 0, '127.0.0.1');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.close();
  metricsServer.close();
});

describe('the HTTP kit', () => {
  it('answers a body in a charset or encoding it does not decode with 415 unsupported_media_type', async () => {
    const refused: Array<Record<string, string>> = [
      { 'content-type': 'application/json; charset=ebcdic' },
      { 'content-type': 'application/json', 'content-encoding': 'br-unknown' },
    ];
    for (const headers of refused) {
      const res = await fetch(`${base}/echo/`, { method: 'POST', headers, body: '{"a":1}' });
      expect(res.status).toBe(415);
      expect(await res.json()).toMatchObject({ code: 'unsupported_media_type' });
    }
    const ok = await fetch(`${base}/echo/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"a":1}',
    });
    expect(await ok.json()).toEqual({ got: { a: 1 } });
  });

  it('answers an unhandled failure with 500 {message, code, request_id} and no stack trace or SQL', async () => {
    const res = await fetch(`${base}/boom/`);
    const body = (await res.json()) as Record<string, unknown>;
    expect(res.status).toBe(500);
    expect(body).toEqual({
      message: 'Internal server error.',
      code: 'internal_error',
      request_id: res.headers.get('x-request-id'),
    });
    expect(JSON.stringify(body)).not.toMatch(/select|secret_table|at .*\.ts/);
    // The detail goes to the log, for the operator.
    expect(logs.text()).toContain('unhandled error');
  });

  it('answers 503 with Retry-After when the database is away, never 400 or 500', async () => {
    for (const how of ['reset', 'shutdown', 'wrapped']) {
      const res = await fetch(`${base}/database-away/${how}/`);
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('1');
      expect(((await res.json()) as { code: string }).code).toBe('service_unavailable');
    }
  });

  it('labels the duration histogram with the route template, on the separate metrics port', async () => {
    await fetch(`${base}/things/42/`);
    await fetch(`${base}/things/43/`);
    const text = await (
      await fetch(`http://127.0.0.1:${(metricsServer.address() as AddressInfo).port}/metrics`)
    ).text();
    expect(text).toMatch(
      /http_request_duration_seconds_count\{[^}]*method="GET",route="\/things\/:id\/",status_code="200"\} 2/,
    );
    expect(text).not.toContain('/things/42/');
    expect((await fetch(`${base}/metrics`)).status).toBe(404);
  });

  it('writes one access-log line per request with the request id', async () => {
    const res = await fetch(`${base}/things/7/`, { headers: { 'x-request-id': 'trace-me-123' } });
    expect(res.headers.get('x-request-id')).toBe('trace-me-123');
    const line = logs.lines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l.request_id === 'trace-me-123');
    expect(line).toMatchObject({ msg: 'request', method: 'GET', route: '/things/:id/', status: 200 });
  });
});
