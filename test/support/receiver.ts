import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedHook {
  at: number;
  path: string;
  headers: http.IncomingHttpHeaders;
  rawBody: string;
  body: { event: string; occurred_at: string; delivery_attempt: number; data: Record<string, unknown> };
}

export type Reply = { status: number; body?: string; headers?: Record<string, string>; delayMs?: number };

/**
 * A webhook receiver on a free local port: records every request with its raw body, and answers what
 * the test says (200 by default).
 */
export async function startReceiver(reply: (hook: ReceivedHook) => Reply = () => ({ status: 200 })) {
  const received: ReceivedHook[] = [];
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
      const hook: ReceivedHook = {
        at: Date.now(),
        path: req.url ?? '/',
        headers: req.headers,
        rawBody,
        body,
      };
      received.push(hook);
      const answer = reply(hook);
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
