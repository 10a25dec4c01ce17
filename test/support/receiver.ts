import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedHook {
  at: number;
  /** The request target exactly as the dispatcher sent it, query string included. */
  path: string;
  /** The path without its query string: what routes and `at()` match on. */
  pathname: string;
  headers: http.IncomingHttpHeaders;
  rawBody: string;
  body: { event: string; occurred_at: string; delivery_attempt: number; data: Record<string, unknown> };
}

export type Reply = { status: number; body?: string; headers?: Record<string, string>; delayMs?: number };
export type Responder = (hook: ReceivedHook) => Reply;

export type Receiver = Awaited<ReturnType<typeof startReceiver>>;

const pathnameOf = (target: string) => target.split('?')[0] || '/';

/**
 * A webhook receiver on a free local port: records every request with its raw body, and answers what
 * the route of its path says, else `fallback` (200 by default).
 *
 * Routes match the path without its query string. The dispatcher sends a registered URL as it is,
 * query included (test/webhooks/delivery.test.ts checks it on `path`), and sellers put tokens there
 * (`postback_url: .../hook?token=...`): a test names the endpoint, not the token.
 */
export async function startReceiver(fallback: Responder = () => ({ status: 200 })) {
  const received: ReceivedHook[] = [];
  const routes = new Map<string, Responder>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rawBody = Buffer.concat(chunks).toString('utf8');
      let body: ReceivedHook['body'];
      try {
        body = JSON.parse(rawBody) as ReceivedHook['body'];
      } catch {
        body = { event: '', occurred_at: '', delivery_attempt: 0, data: {} };
      }
      const path = req.url ?? '/';
      const hook: ReceivedHook = {
        at: Date.now(),
        path,
        pathname: pathnameOf(path),
        headers: req.headers,
        rawBody,
        body,
      };
      received.push(hook);
      const answer = (routes.get(hook.pathname) ?? fallback)(hook);
      const send = () => {
        if (res.destroyed) return;
        res
          .writeHead(answer.status, { 'content-type': 'text/plain', ...answer.headers })
          .end(answer.body ?? 'ok');
      };
      if (answer.delayMs) setTimeout(send, answer.delayMs);
      else send();
    });
  });
  // Connections open at once, and the most there were.
  let open = 0;
  let mostOpen = 0;
  server.on('connection', (socket) => {
    open += 1;
    mostOpen = Math.max(mostOpen, open);
    socket.on('close', () => (open -= 1));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    received,
    /** How `pathname` answers from now on (each test uses paths of its own). */
    route(pathname: string, responder: Responder): void {
      routes.set(pathnameOf(pathname), responder);
    },
    /** Requests to `pathname` (any query string), in arrival order. */
    at: (pathname: string) => received.filter((h) => h.pathname === pathnameOf(pathname)),
    /** The most connections that were open to it at once. */
    mostConnections: () => mostOpen,
    /** Requests carrying this event id, in arrival order. */
    forEvent: (eventId: string) => received.filter((h) => h.headers['x-webhook-event-id'] === eventId),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
