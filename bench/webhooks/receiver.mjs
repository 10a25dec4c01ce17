// The webhook receivers of `npm run bench:webhooks`: bare `node:http` servers on loopback, one per
// port, that answer 200 with an empty body as soon as a delivery's body has arrived (or after a delay
// set per port, for a slow destination). Each arrival is recorded with the time its request came in
// (the first byte of its headers parsed, on the wall clock the services stamp `occurred_at` with) and
// the envelope's `occurred_at`, `delivery_attempt` and `X-Webhook-Event-Id`. A child process of its
// own, so the load generator's event loop does not delay the arrivals it records.
//
// Environment: PORT (the control port), RECEIVER_PORTS (comma-separated ports to receive on).
// Control, on 127.0.0.1:PORT:
//   GET  /readyz                        200 once every receiver listens
//   POST /reset                         forgets every arrival so far
//   POST /delay?port=P&ms=N             port P answers N ms after the body has arrived (0: at once)
//   GET  /summary?ports=P,Q             arrivals on those ports: count, first and last arrival (ms since
//                                       the epoch, fractional), distinct event ids
//   GET  /records?port=P                every arrival on P: [arrival ms, occurred_at ms, attempt, event id]
//   GET  /sample?port=P                 the last body received on P, as received
import http from 'node:http';
import { performance } from 'node:perf_hooks';

const CONTROL_PORT = Number(process.env.PORT);
const PORTS = (process.env.RECEIVER_PORTS ?? '').split(',').filter(Boolean).map(Number);
if (!CONTROL_PORT || PORTS.length === 0 || PORTS.some((p) => !Number.isInteger(p) || p <= 0)) {
  console.error('receiver.mjs needs PORT and RECEIVER_PORTS');
  process.exit(1);
}

const now = () => performance.timeOrigin + performance.now();
const OCCURRED = '"occurred_at":"';
const ATTEMPT = '"delivery_attempt":';

/** Per port: what arrived (parallel arrays, cheap to append), the answer delay, the last body. */
const state = new Map(
  PORTS.map((port) => [
    port,
    { arrivals: [], occurred: [], attempts: [], ids: [], delayMs: 0, lastBody: '' },
  ]),
);

function receive(port) {
  const s = state.get(port);
  return (req, res) => {
    const arrival = now();
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      if (s.delayMs > 0) setTimeout(() => res.writeHead(200).end(), s.delayMs);
      else res.writeHead(200).end();
      // Recorded after the answer is on its way, so the bookkeeping never delays it. The envelope's
      // first fields are `event`, `occurred_at`, `delivery_attempt` (sender.ts): found without a parse.
      const body = Buffer.concat(chunks).toString('utf8');
      const at = body.indexOf(OCCURRED);
      const occurred =
        at < 0 ? NaN : Date.parse(body.slice(at + OCCURRED.length, body.indexOf('"', at + OCCURRED.length)));
      const an = body.indexOf(ATTEMPT);
      const attempt = an < 0 ? NaN : parseInt(body.slice(an + ATTEMPT.length, an + ATTEMPT.length + 4), 10);
      s.arrivals.push(arrival);
      s.occurred.push(occurred);
      s.attempts.push(attempt);
      s.ids.push(String(req.headers['x-webhook-event-id'] ?? ''));
      s.lastBody = body;
    });
  };
}

function listen(server, port) {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
}

const servers = PORTS.map((port) => {
  const server = http.createServer(receive(port));
  // Longer than the dispatcher's keep-alive (10 s): an idle socket is closed by the client, never
  // under a request in flight.
  server.keepAliveTimeout = 15_000;
  return { server, port };
});
await Promise.all(servers.map(({ server, port }) => listen(server, port)));

function json(res, value) {
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(value));
}

const control = http.createServer((req, res) => {
  const url = new URL(req.url ?? '/', 'http://control');
  const port = Number(url.searchParams.get('port'));
  if (req.method === 'GET' && url.pathname === '/readyz') return json(res, { ok: true });
  if (req.method === 'POST' && url.pathname === '/reset') {
    for (const s of state.values()) {
      s.arrivals = [];
      s.occurred = [];
      s.attempts = [];
      s.ids = [];
    }
    return json(res, { ok: true });
  }
  if (req.method === 'POST' && url.pathname === '/delay' && state.has(port)) {
    state.get(port).delayMs = Number(url.searchParams.get('ms') ?? 0);
    return json(res, { ok: true });
  }
  if (req.method === 'GET' && url.pathname === '/summary') {
    const ports = (url.searchParams.get('ports') ?? '').split(',').map(Number);
    let count = 0;
    let first = Infinity;
    let last = -Infinity;
    const ids = new Set();
    for (const p of ports) {
      const s = state.get(p);
      if (!s) continue;
      count += s.arrivals.length;
      for (const t of s.arrivals) {
        if (t < first) first = t;
        if (t > last) last = t;
      }
      for (const id of s.ids) ids.add(id);
    }
    return json(res, { count, first, last, distinct: ids.size });
  }
  if (req.method === 'GET' && url.pathname === '/records' && state.has(port)) {
    const s = state.get(port);
    return json(
      res,
      s.arrivals.map((t, i) => [t, s.occurred[i], s.attempts[i], s.ids[i]]),
    );
  }
  if (req.method === 'GET' && url.pathname === '/sample' && state.has(port)) {
    res.writeHead(200, { 'content-type': 'application/json' }).end(state.get(port).lastBody);
    return undefined;
  }
  res.writeHead(404).end();
  return undefined;
});
await listen(control, CONTROL_PORT);

function shutdown() {
  control.close();
  for (const { server } of servers) {
    server.close();
    server.closeAllConnections();
  }
  setTimeout(() => process.exit(0), 200).unref();
}
process.on('SIGTERM', shutdown);
process.on('SIGINT', shutdown);
