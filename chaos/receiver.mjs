// The sellers' webhook endpoint: records every delivery (event, event id, order) and answers 200.
import http from 'node:http';

export async function startReceiver() {
  /** `${event} ${order uuid}` -> set of X-Webhook-Event-Id seen. */
  const events = new Map();
  let deliveries = 0;
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (chunk) => chunks.push(chunk));
    req.on('end', () => {
      deliveries += 1;
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
        const order = body?.data?.order?.uuid;
        const id = req.headers['x-webhook-event-id'];
        if (order && id) {
          const key = `${body.event} ${order}`;
          if (!events.has(key)) events.set(key, new Set());
          events.get(key).add(String(id));
        }
      } catch {
        // not ours: counted, nothing else
      }
      res.writeHead(200).end();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    /** Distinct event ids delivered for one order's event. */
    idsOf: (event, order) => events.get(`${event} ${order}`)?.size ?? 0,
    deliveries: () => deliveries,
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}
