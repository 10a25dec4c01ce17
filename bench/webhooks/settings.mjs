// The webhooks bench's targets and knobs (the environment variables run.mjs lists), and small helpers
// its stages share.
import path from 'node:path';
import { intFromEnv } from '../lib.mjs';
import { dispatcherDefaults } from './backlog.mjs';

export const TARGET_MIN_RATIO = 0.5; // the dispatcher delivers at least half as fast as a bare loop...
export const TARGET_MAX_P99_MS = 250; // ...the first attempt arrives within 250 ms of the commit (p99)...
// ...and a slow destination leaves a healthy one's p99 unchanged: within 20 % or 20 ms, the larger.
export const TOLERANCE_RATIO = 0.2;
export const TOLERANCE_MS = 20;
// The offered rate counts as sustained when the orders created reach 95 % of it.
export const SUSTAINED_SHARE = 0.95;
// More than this much of one core used by other work while the bench is idle, and the report says so.
export const BUSY_OTHER = 25;

export const DATABASE = 'seller_api_bench_webhooks';
export const DATABASE_URL = `postgres://postgres@127.0.0.1:5432/${DATABASE}`;

export const DURATION = intFromEnv('BENCH_DURATION', 10, 600);
export const WARMUP = intFromEnv('BENCH_WARMUP', 3, 600);
export const RATE = intFromEnv('BENCH_RATE', 200, 10_000);
// Long enough for both sides to reach their steady rate: a backlog of 5,000 lasts a third of a second
// for the drain and a seventh for the loop, whose rate then moves from 20,000 to 44,000/s between
// rounds of one run (bench/README.md).
export const BACKLOG = intFromEnv('BENCH_BACKLOG', 20_000, 1_000_000);
// Under the dispatcher's 10 s attempt timeout: the slow destination answers, late, rather than fails.
export const SLOW_MS = intFromEnv('BENCH_SLOW_MS', 2000, 9000);
// The dispatcher's own defaults, read from its build (services/webhook-dispatcher/src/config.ts).
export const defaults = await dispatcherDefaults();
export const CONCURRENCY = intFromEnv('WEBHOOK_CONCURRENCY', defaults.concurrency, 10_000);
export const DESTINATION_CONCURRENCY = intFromEnv(
  'WEBHOOK_DESTINATION_CONCURRENCY',
  defaults.destinationConcurrency,
  10_000,
);
export const POLL_INTERVAL_MS = intFromEnv('WEBHOOK_POLL_INTERVAL_MS', defaults.pollIntervalMs, 60_000);
// Enough destinations for the dispatcher's whole budget to be in use (WEBHOOK_DESTINATION_CONCURRENCY
// attempts in flight per destination URL), one receiver port each, as distinct hosts would be.
export const DESTINATIONS = intFromEnv(
  'BENCH_DESTINATIONS',
  Math.ceil(CONCURRENCY / DESTINATION_CONCURRENCY),
  256,
);
export const PER_DESTINATION = Math.max(1, Math.round(BACKLOG / DESTINATIONS));
// Throughput rounds, each a bare loop and a drain of BACKLOG: one round is a fraction of a second per
// side, and a machine's speed moves more than that from one second to the next.
export const ROUNDS = intFromEnv('BENCH_ROUNDS', 3, 99);
export const BACKLOG_TOTAL = PER_DESTINATION * DESTINATIONS;
export const PROFILE_DIR = process.env.BENCH_PROFILE ? path.resolve(process.env.BENCH_PROFILE) : null;
// Requests in flight at most (create-order's bench holds 50 connections): when the path that makes the
// events cannot keep up, a request due is not sent rather than queued without bound, and the run says so.
export const MAX_IN_FLIGHT = intFromEnv('BENCH_MAX_IN_FLIGHT', 64, 10_000);
// Where the events of the latency runs come from (both are order.created, to the same two webhooks):
// - `outbox` (the default): bench/webhooks/producer.mjs, a minimal service on service-kit's runtime, which
//   commits each event alone in a transaction through `enqueue`, with the orders service's headers and
//   a real order.created payload, and publishes it with service-kit's OutboxRelay. The events can come at
//   the target's rate whatever the order path costs; that run is followed by one with real orders, for
//   information;
// - `created`: orders created through the gateway (a PIX charge from payments, its QR image, two
//   transactions each), which may not reach 200 a second on 2 cores: the report then says so.
export const SOURCES = {
  outbox: { name: 'bench producer', request: 'POST /events (producer.mjs)', status: 201 },
  created: { name: 'orders', request: 'POST /sellers/orders/ (gateway)', status: 201 },
};
export const EVENTS = process.env.BENCH_EVENTS || 'outbox';
if (!Object.hasOwn(SOURCES, EVENTS)) {
  console.error(`BENCH_EVENTS must be "outbox" or "created", got "${EVENTS}"`);
  process.exit(1);
}

export const verdict = (ok) => (ok ? 'PASS' : 'FAIL');
/** The round of median rate (the lower middle one of an even count), with every round's rate. */
export function medianRound(rounds) {
  const sorted = [...rounds].sort((a, b) => a.rate - b.rate);
  return { ...sorted[Math.floor((sorted.length - 1) / 2)], rounds: rounds.map((r) => r.rate) };
}
export const nowUs = () => Number(process.hrtime.bigint() / 1000n);
export const fmt = (ms, digits = 1) => (Number.isFinite(ms) ? ms.toFixed(digits) : 'n/a');
