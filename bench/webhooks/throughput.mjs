// Throughput: the dispatcher draining a backlog beside a bare loop of POSTs (the ceiling), in rounds.
import { createRequire } from 'node:module';
import { setTimeout as sleep } from 'node:timers/promises';
import { withSessions } from '../lib.mjs';
import { writeDeliveries } from './backlog.mjs';
import { measured } from './cpu.mjs';
import {
  BACKLOG_TOTAL,
  CONCURRENCY,
  DATABASE_URL,
  DESTINATION_CONCURRENCY,
  DESTINATIONS,
  PER_DESTINATION,
  POLL_INTERVAL_MS,
  ROUNDS,
  medianRound,
  nowUs,
} from './settings.mjs';

const require = createRequire(import.meta.url);
const { Agent, request } = require('undici');

export async function throughput(
  { db, receiver, expect, arrivals, settle, lastAttemptError, throughputPorts, windows },
  { throughputHooks, payload, sampleBody },
) {
  /**
   * The dispatcher drains a backlog: the rate is taken between the first and the last arrival, so the
   * poll that finds the backlog (up to WEBHOOK_POLL_INTERVAL_MS) is not counted; the CPU too.
   */
  async function drain(perDestination) {
    const total = perDestination * DESTINATIONS;
    await receiver('POST', '/reset');
    await writeDeliveries(db, {
      perWebhook: perDestination,
      payload: JSON.stringify(payload),
      webhookIds: throughputHooks,
    });
    const committed = Date.now();
    const started = await arrivals(throughputPorts, 1, 10_000 + POLL_INTERVAL_MS, 5);
    if (started.count === 0) throw new Error(`the backlog was not picked up (${await lastAttemptError()})`);
    const from = nowUs();
    const timeoutMs = 60_000 + total * 20;
    const { value, cpu, wallMs } = await measured(() =>
      withSessions(DATABASE_URL, () => arrivals(throughputPorts, total, timeoutMs, 20), {
        ignore: ['bench'],
      }),
    );
    const to = nowUs();
    const s = value.value;
    await settle([], timeoutMs);
    return {
      total,
      delivered: s.count,
      distinct: s.distinct,
      seconds: (s.last - s.first) / 1000,
      rate: (s.count - 1) / ((s.last - s.first) / 1000),
      fromCommit: (s.last - committed) / 1000,
      cpu,
      wallMs,
      sessions: value.sessions,
      window: [from, to],
    };
  }

  /** A bare loop of undici POSTs, the dispatcher's concurrency, the same body and headers. */
  async function ceiling(total) {
    await receiver('POST', '/reset');
    const agent = new Agent({ connections: DESTINATION_CONCURRENCY, keepAliveTimeout: 10_000 });
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'Webhooks/1.0',
      'x-webhook-event': 'order.created',
      'x-webhook-event-id': `evt_${'0'.repeat(24)}`,
      'x-webhook-timestamp': String(Math.floor(Date.now() / 1000)),
      'x-webhook-signature': `sha256=${'0'.repeat(64)}`,
    };
    let sent = 0;
    const failures = new Map();
    const worker = async (target) => {
      while (sent < total) {
        sent += 1;
        try {
          const res = await request(target, { method: 'POST', headers, body: sampleBody, dispatcher: agent });
          await res.body.text();
          if (res.statusCode !== 200) failures.set(res.statusCode, (failures.get(res.statusCode) ?? 0) + 1);
        } catch (err) {
          const code = err.code ?? err.message;
          failures.set(code, (failures.get(code) ?? 0) + 1);
        }
      }
    };
    const workers = Math.min(CONCURRENCY, DESTINATIONS * DESTINATION_CONCURRENCY);
    const targets = throughputPorts.map((p, i) => `http://127.0.0.1:${p}/hooks/t${i}`);
    const {
      value: s,
      cpu,
      wallMs,
    } = await measured(async () => {
      await Promise.all(Array.from({ length: workers }, (_, i) => worker(targets[i % targets.length])));
      return arrivals(throughputPorts, total, 10_000);
    });
    await agent.close();
    if (failures.size) {
      throw new Error(`ceiling: ${JSON.stringify(Object.fromEntries(failures))} out of ${total} requests`);
    }
    return {
      total,
      delivered: s.count,
      seconds: (s.last - s.first) / 1000,
      rate: (s.count - 1) / ((s.last - s.first) / 1000),
      cpu,
      wallMs,
      workers,
    };
  }

  const { cpu: idleCpu } = await measured(() => sleep(2_000));
  const warmupBacklog = Math.max(1, Math.round(PER_DESTINATION / 5));
  console.error(
    `warming up the dispatcher and the bare loop (${warmupBacklog * DESTINATIONS} deliveries each)...`,
  );
  await drain(warmupBacklog);
  await ceiling(warmupBacklog * DESTINATIONS);
  // Rounds in alternating order (ceiling first, then the dispatcher first, ...), so that the machine's
  // drift over the run weighs on both sides; each side's median round is the one reported.
  const ceilings = [];
  const drains = [];
  for (let round = 0; round < ROUNDS; round += 1) {
    const sides = [
      async () => {
        console.error(
          `round ${round + 1}/${ROUNDS}: the bare loop (${BACKLOG_TOTAL} POSTs over ${DESTINATIONS} receivers)...`,
        );
        ceilings.push(await ceiling(BACKLOG_TOTAL));
      },
      async () => {
        console.error(
          `round ${round + 1}/${ROUNDS}: the dispatcher on a backlog of ${BACKLOG_TOTAL} due deliveries...`,
        );
        drains.push(await drain(PER_DESTINATION));
      },
    ];
    if (round % 2 === 1) sides.reverse();
    for (const side of sides) await side();
  }
  const ceilingResult = medianRound(ceilings);
  const drainResult = medianRound(drains);
  windows.drain = drainResult.window;

  // The throughput webhooks would get every order from now on.
  for (const id of throughputHooks) await expect(204, 'DELETE', `/config/webhooks/${id}/`);

  return { idleCpu, ceilingResult, drainResult };
}
