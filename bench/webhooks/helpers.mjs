// Helpers bound to one run's services: the API with the run's key, the receivers' control port, and
// the dispatcher's tables.
/* global fetch, AbortSignal */
import { setTimeout as sleep } from 'node:timers/promises';
import { api as request } from '../lib.mjs';

export function runHelpers({ db, apiUrl, receiverUrl, key }) {
  const api = (method, route, body) => request(`${apiUrl}${route}`, { key, method, body });

  async function expect(status, method, route, body) {
    const res = await api(method, route, body);
    if (res.status !== status) {
      throw new Error(`${method} ${route} answered ${res.status}: ${res.text.slice(0, 500)}`);
    }
    return res.json;
  }

  async function receiver(method, route) {
    const res = await fetch(`${receiverUrl}${route}`, { method, signal: AbortSignal.timeout(10_000) });
    if (res.status !== 200) throw new Error(`receivers: ${method} ${route} answered ${res.status}`);
    return res.json();
  }

  const summary = (list) => receiver('GET', `/summary?ports=${list.join(',')}`);

  /** Polls the receivers until `expected` arrivals on `list` or the timeout; the last summary. */
  async function arrivals(list, expected, timeoutMs, everyMs = 50) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const s = await summary(list);
      if (s.count >= expected || Date.now() > deadline) return s;
      await sleep(everyMs);
    }
  }

  /**
   * Waits until the last run's events are all delivered, so the next one starts on a quiet dispatcher:
   * nothing left in the outboxes of orders and the producer, no delivery pending (but those of `except` webhooks), and no new
   * delivery for half a second (an event between the relay and the intake, in RabbitMQ).
   */
  async function settle(except = [], timeoutMs = 60_000) {
    const deadline = Date.now() + timeoutMs;
    let last = null;
    for (;;) {
      const { rows } = await db.query(
        `select (select count(*)::int from orders.outbox) + (select count(*)::int from bench_producer.outbox) as outbox,
                (select count(*)::int from webhooks.deliveries) as deliveries,
                (select count(*)::int from webhooks.deliveries
                  where status = 'pending' and (webhook_id is null or webhook_id <> all($1::uuid[]))) as pending`,
        [except],
      );
      const now = rows[0];
      if (now.outbox === 0 && now.pending === 0 && now.deliveries === last?.deliveries) return;
      if (Date.now() > deadline) {
        throw new Error(
          `not settled after ${timeoutMs} ms: ${now.outbox} events in the outbox, ${now.pending} deliveries pending`,
        );
      }
      last = now;
      await sleep(500);
    }
  }

  async function lastAttemptError() {
    const { rows } = await db.query(
      `select d.url, a.response_status, a.error from webhooks.delivery_attempts a
         join webhooks.deliveries d on d.id = a.delivery_id order by a.started_at desc limit 1`,
    );
    const { rows: counts } = await db.query(
      `select status, count(*)::int as n from webhooks.deliveries group by status`,
    );
    const attempt = rows[0]
      ? `last attempt to ${rows[0].url}: status ${rows[0].response_status}, error ${rows[0].error}`
      : 'no attempt recorded';
    return `${attempt}; deliveries by status: ${JSON.stringify(counts)}`;
  }

  const register = async (port, name, event) =>
    (await expect(201, 'POST', '/config/webhooks/', { url: `http://127.0.0.1:${port}/hooks/${name}`, event }))
      .data.id;

  return { api, expect, receiver, summary, arrivals, settle, lastAttemptError, register };
}
