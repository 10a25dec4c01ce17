import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { useSystem } from '../support/use-system';
import { waitFor } from '../support/wait';
import { deliveries, placeOrder, register } from './helpers';

const TIMEOUT_MS = 400;

// A long retry delay: each delivery's first attempt is the one looked at.
const t = useSystem({
  env: { WEBHOOK_ATTEMPT_TIMEOUT_MS: String(TIMEOUT_MS), WEBHOOK_RETRY_SCHEDULE: '60s' },
});
// Its own server, not the receiver: these answers stop half-way, which a receiver's reply cannot.
let server: http.Server;
let base: string;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    req.resume();
    // /hang never answers; /drip sends its headers and a first piece of body, then nothing more.
    if (req.url === '/drip') {
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('partial');
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  t.cleanup(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
});

describe('attempt timeout', () => {
  it('cuts an attempt off at WEBHOOK_ATTEMPT_TIMEOUT_MS, before the answer and in the middle of its body', async () => {
    const { key } = await t.newKey();
    const hang = await register(t.url, key, `${base}/hang`);
    const drip = await register(t.url, key, `${base}/drip`);
    await placeOrder(t.url, key);
    const firstAttempt = async (hook: typeof hang) => {
      const [delivery] = await waitFor(
        async () => {
          const list = await deliveries(t.url, key, hook.id);
          return list[0]?.attempts.length ? list : null;
        },
        { what: `the first attempt to ${hook.url}` },
      );
      const attempt = delivery?.attempts[0];
      expect(attempt?.error).toBe(`timeout after ${TIMEOUT_MS} ms`);
      expect(attempt?.duration_ms).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
      expect(attempt?.duration_ms).toBeLessThan(TIMEOUT_MS + 1_000);
      return { delivery, attempt };
    };
    // No answer: a failed attempt, retried later.
    const hung = await firstAttempt(hang);
    expect(hung.attempt?.response_status).toBeNull();
    expect(hung.delivery?.status).toBe('pending');
    // A 2xx whose body never ends: the receiver said it has the event, and the body is only read for
    // the record, so the attempt stops at the deadline and the delivery counts as delivered.
    const dripped = await firstAttempt(drip);
    expect(dripped.attempt?.response_status).toBe(200);
    expect(dripped.delivery?.status).toBe('delivered');
  });
});
