// Latency and isolation: events at a fixed rate to one healthy destination, then the same with a slow
// second one; for information, the first run again with real orders.
/* global fetch, AbortSignal */
import { createRequire } from 'node:module';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { orderBody, percentile, withSessions } from '../lib.mjs';
import { measured } from './cpu.mjs';
import {
  DATABASE_URL,
  DURATION,
  EVENTS,
  MAX_IN_FLIGHT,
  RATE,
  SLOW_MS,
  SOURCES,
  WARMUP,
  nowUs,
} from './settings.mjs';

const require = createRequire(import.meta.url);
const { Agent, request } = require('undici');

export async function latencyAndIsolation(
  {
    db,
    apiUrl,
    producerUrl,
    key,
    receiver,
    expect,
    register,
    settle,
    nextCpf,
    healthyPort,
    secondPort,
    windows,
  },
  { productId, payload },
) {
  // One webhook, as a seller with one integration has; the slow one joins it for the isolation run.
  const healthyHook = await register(healthyPort, 'healthy', 'order.created');
  const { rows: sellers } = await db.query(`select seller_id from webhooks.webhooks where id = $1`, [
    healthyHook,
  ]);
  const producerTemplate = await fetch(`${producerUrl}/template`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ seller_id: sellers[0].seller_id, payload }),
    signal: AbortSignal.timeout(10_000),
  });
  if (producerTemplate.status !== 200)
    throw new Error(`producer: POST /template answered ${producerTemplate.status}`);
  const agent = new Agent({ connections: 128, keepAliveTimeout: 10_000 });
  const apiHeaders = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
  /** The next request that commits one order.created. */
  const nextRequest = (source) =>
    source === 'outbox'
      ? { url: `${producerUrl}/events`, headers: {}, body: '' }
      : {
          url: `${apiUrl}/sellers/orders/`,
          headers: apiHeaders,
          body: JSON.stringify(orderBody(productId, nextCpf())),
        };

  /**
   * Requests that make one event each, at a fixed rate for `seconds`: an open loop, where a request is
   * sent when it is due whatever the answers before it, unless MAX_IN_FLIGHT are in flight. One that does
   * not get its expected status is counted and reported, not retried: the events measured are those
   * committed.
   */
  async function eventLoad(source, seconds) {
    const spec = SOURCES[source];
    const latencies = [];
    const statuses = new Map();
    const errors = new Map();
    const inFlight = new Set();
    let sent = 0;
    let skipped = 0;
    let lastDone = 0;
    const total = Math.round(seconds * RATE);
    const start = performance.now();
    const fire = () => {
      const t0 = performance.now();
      const { url, headers, body } = nextRequest(source);
      const p = request(url, {
        method: 'POST',
        headers,
        body,
        dispatcher: agent,
        headersTimeout: 30_000,
        bodyTimeout: 30_000,
      })
        .then(async (res) => {
          await res.body.text();
          statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
          if (res.statusCode === spec.status) latencies.push(performance.now() - t0);
        })
        .catch((err) => {
          const code = err.code ?? err.message;
          errors.set(code, (errors.get(code) ?? 0) + 1);
        })
        .finally(() => {
          lastDone = performance.now();
          inFlight.delete(p);
        });
      inFlight.add(p);
    };
    while (sent < total) {
      const due = Math.min(total, Math.floor(((performance.now() - start) * RATE) / 1000) + 1);
      for (; sent < due; sent += 1) {
        if (inFlight.size >= MAX_IN_FLIGHT) skipped += 1;
        else fire();
      }
      await sleep(Math.max(1, start + (sent * 1000) / RATE - performance.now()));
    }
    await Promise.all([...inFlight]);
    const committed = statuses.get(spec.status) ?? 0;
    if (committed === 0) {
      throw new Error(
        `${spec.request}: no ${spec.status} (status codes ${JSON.stringify(Object.fromEntries(statuses))}, ` +
          `errors ${JSON.stringify(Object.fromEntries(errors))})`,
      );
    }
    statuses.delete(spec.status);
    const failed = [...statuses, ...errors].map(([code, n]) => `${n} x ${code}`).join(', ');
    const sorted = Float64Array.from(latencies).sort();
    return {
      offered: total,
      committed,
      skipped,
      failed,
      rate: committed / ((lastDone - start) / 1000),
      p50: percentile(sorted, 0.5),
      p99: percentile(sorted, 0.99),
    };
  }

  /** The first attempts at `port` of events that occurred since `since`, once `expected` are in. */
  async function firstAttempts(port, since, expected, timeoutMs = 30_000) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const records = (await receiver('GET', `/records?port=${port}`)).filter(
        ([, occurred, attempt]) => attempt === 1 && occurred >= since,
      );
      if (new Set(records.map(([, , , id]) => id)).size >= expected || Date.now() > deadline) return records;
      await sleep(200);
    }
  }

  /**
   * Commit to arrival of first attempts: `occurred_at` is stamped when the outbox row is written in the
   * transaction of its change, just before it commits. Split at the fan-out (the delivery row's
   * `created_at`): commit -> fan-out is the outbox relay, RabbitMQ and the intake; fan-out -> arrival is
   * the sender. An event whose first attempt has not arrived counts as infinitely late.
   */
  async function latencies(records, expected) {
    const ids = records.map(([, , , id]) => id);
    const { rows } = await db.query(
      `select event_id, extract(epoch from created_at) * 1000 as fanout from webhooks.deliveries
        where event_id = any($1::text[])`,
      [ids],
    );
    const fanout = new Map(rows.map((r) => [r.event_id, Number(r.fanout)]));
    const total = [];
    const relay = [];
    const send = [];
    for (const [arrival, occurred, , id] of records) {
      total.push(arrival - occurred);
      const f = fanout.get(id);
      if (f !== undefined) {
        relay.push(f - occurred);
        send.push(arrival - f);
      }
    }
    const distinct = new Set(ids).size;
    const arrivalTimes = records.map(([arrival]) => arrival);
    const span = (Math.max(...arrivalTimes) - Math.min(...arrivalTimes)) / 1000;
    const missing = Math.max(0, expected - distinct);
    for (let i = 0; i < missing; i += 1) total.push(Infinity);
    const stats = (values) => {
      const sorted = Float64Array.from(values).sort();
      return {
        p50: percentile(sorted, 0.5),
        p99: percentile(sorted, 0.99),
        max: sorted.length ? sorted[sorted.length - 1] : NaN,
      };
    };
    return {
      arrived: distinct,
      // The rate the destination was served at: below the events' rate, the dispatcher fell behind.
      rate: records.length > 1 ? (records.length - 1) / span : NaN,
      duplicates: records.length - distinct,
      missing,
      ...stats(total),
      relay: stats(relay),
      send: stats(send),
    };
  }

  async function latencyRun(source, label, { slow = false } = {}) {
    console.error(
      `measuring ${label} (${RATE} events/s from the ${SOURCES[source].name} for ${DURATION} s)...`,
    );
    await receiver('POST', '/reset');
    // This run's events occurred after it started: a straggler of the run before is left out.
    const since = Math.floor(Date.now());
    const from = nowUs();
    const { value, cpu } = await measured(() =>
      withSessions(DATABASE_URL, () => eventLoad(source, DURATION), { ignore: ['bench'] }),
    );
    const { value: load, sessions } = value;
    const to = nowUs();
    // Every first attempt to the healthy destination, or 30 s more.
    const healthy = await latencies(await firstAttempts(healthyPort, since, load.committed), load.committed);
    // The slow destination's first attempts so far: as many as it could answer.
    const second = slow ? await latencies(await firstAttempts(secondPort, since, 0), 0) : null;
    return { source, label, load, cpu, sessions, healthy, second, window: [from, to] };
  }

  console.error(
    `warming up the event path (${RATE} events/s from the ${SOURCES[EVENTS].name} for ${WARMUP} s)...`,
  );
  await eventLoad(EVENTS, WARMUP);
  await settle();
  const fast = await latencyRun(EVENTS, 'one destination');
  windows.latency = fast.window;
  await receiver('POST', `/delay?port=${secondPort}&ms=${SLOW_MS}`);
  const secondHook = await register(secondPort, 'slow', 'order.created');
  await settle();
  const slow = await latencyRun(EVENTS, `the same plus one answering after ${SLOW_MS} ms`, { slow: true });
  // Its backlog waits in the database from here on, instead of loading the machine until the end.
  await expect(200, 'PATCH', `/config/webhooks/${secondHook}/`, { status: 'DISABLED' });
  const { rows: slowBacklog } = await db.query(
    `select count(*)::int as n from webhooks.deliveries where webhook_id = $1 and status = 'pending'`,
    [secondHook],
  );

  // For information: the first run again with real orders, when the verdicts were taken on the bench
  // producer.
  let real = null;
  if (EVENTS === 'outbox') {
    await settle([secondHook]);
    console.error(`warming up the order path (${RATE} orders/s for ${WARMUP} s)...`);
    await eventLoad('created', WARMUP);
    await settle([secondHook]);
    real = await latencyRun('created', 'real orders, one destination');
    windows.real = real.window;
  }
  await agent.close();

  return { fast, slow, real, slowBacklog: slowBacklog[0].n };
}
