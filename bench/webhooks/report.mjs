// The webhooks bench's report, and the CPU profiles of its processes over the measured windows.
import { existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { childList, printCpuTable, printTable } from '../lib.mjs';
import {
  BUSY_OTHER,
  CONCURRENCY,
  DESTINATION_CONCURRENCY,
  DESTINATIONS,
  DURATION,
  EVENTS,
  MAX_IN_FLIGHT,
  POLL_INTERVAL_MS,
  PROFILE_DIR,
  RATE,
  SLOW_MS,
  SOURCES,
  SUSTAINED_SHARE,
  TARGET_MAX_P99_MS,
  TARGET_MIN_RATIO,
  TOLERANCE_MS,
  TOLERANCE_RATIO,
  fmt,
  verdict,
} from './settings.mjs';

// The measured windows, on the monotonic clock the CPU profiles use.
export const windows = { drain: null, latency: null, real: null };

export function report({ ceiling, drain, fast, slow, real, slowBacklog, idleCpu, envelopeBytes }) {
  const ratio = drain.rate / ceiling.rate;
  const ratioOk = ratio >= TARGET_MIN_RATIO;
  const sustained = (run) =>
    run.load.skipped === 0 &&
    !run.load.failed &&
    run.load.committed >= SUSTAINED_SHARE * run.load.offered &&
    run.load.rate >= SUSTAINED_SHARE * RATE;
  const rateOk = sustained(fast) && sustained(slow);
  const p99Ok = fast.healthy.p99 < TARGET_MAX_P99_MS;
  const allowed = Math.max(fast.healthy.p99 * (1 + TOLERANCE_RATIO), fast.healthy.p99 + TOLERANCE_MS);
  const isolationOk = slow.healthy.p99 <= allowed;

  console.log(
    `\nwebhooks - WEBHOOK_CONCURRENCY ${CONCURRENCY}, WEBHOOK_DESTINATION_CONCURRENCY ${DESTINATION_CONCURRENCY}, ` +
      `WEBHOOK_POLL_INTERVAL_MS ${POLL_INTERVAL_MS}; receivers on loopback answering 200 at once; ` +
      `${os.availableParallelism()} CPU cores shared with the load generator`,
  );

  console.log(
    `\nthroughput: ${drain.total} deliveries over ${DESTINATIONS} destinations, an order.created envelope of ` +
      `${envelopeBytes} bytes (rate between the first and the last arrival)\n`,
  );
  printTable([
    ['sender', 'deliveries/s', 'arrived', 'first -> last s'],
    [
      'dispatcher, draining a backlog (signed, recorded)',
      drain.rate.toFixed(0),
      `${drain.delivered}/${drain.total}`,
      drain.seconds.toFixed(2),
    ],
    [
      `ceiling: bare undici loop, ${ceiling.workers} in flight`,
      ceiling.rate.toFixed(0),
      `${ceiling.delivered}/${ceiling.total}`,
      ceiling.seconds.toFixed(2),
    ],
  ]);
  if (drain.rounds.length > 1) {
    const list = (r) => r.rounds.map((rate) => rate.toFixed(0)).join(', ');
    console.log(
      `each side's median of ${drain.rounds.length} rounds, in alternating order; the rounds, deliveries/s: ` +
        `dispatcher ${list(drain)}; ceiling ${list(ceiling)}`,
    );
  }
  console.log(
    `from the backlog's commit to its last arrival: ${drain.fromCommit.toFixed(2)} s ` +
      `(${(drain.delivered / drain.fromCommit).toFixed(0)} deliveries/s, the first poll included)`,
  );
  if (drain.delivered < drain.total || drain.distinct < drain.delivered) {
    console.log(
      `note: ${drain.total - drain.delivered} deliveries not arrived in time, ` +
        `${drain.delivered - drain.distinct} duplicates`,
    );
  }

  const source = SOURCES[EVENTS];
  console.log(
    `\nlatency: ${RATE} order.created events/s offered for ${DURATION} s per run, from the event's commit ` +
      `to its first attempt's arrival at the healthy webhook. Events from the ${source.name} ` +
      `(${source.request})${real ? `, then from real orders (${SOURCES.created.request}) for information` : ''}\n`,
  );
  const runs = [
    [`${source.name}, one destination`, fast],
    [`${source.name}, plus one taking ${SLOW_MS} ms`, slow],
    ...(real ? [['real orders, one destination', real]] : []),
  ];
  printTable([
    ['run', 'events/s', 'committed', 'request p50 ms', 'request p99 ms'],
    ...runs.map(([label, run]) => [
      label,
      run.load.rate.toFixed(0),
      `${run.load.committed}/${run.load.offered}`,
      fmt(run.load.p50),
      fmt(run.load.p99),
    ]),
  ]);
  console.log('');
  const latencyRow = (label, l) => [
    label,
    fmt(l.rate, 0),
    fmt(l.p50),
    fmt(l.p99),
    fmt(l.max),
    fmt(l.relay.p50),
    fmt(l.relay.p99),
    fmt(l.send.p50),
    fmt(l.send.p99),
    String(l.arrived),
    String(l.missing),
  ];
  printTable([
    [
      'destination',
      'served/s',
      'p50 ms',
      'p99 ms',
      'max ms',
      'relay p50',
      'relay p99',
      'send p50',
      'send p99',
      'arrived',
      'missing',
    ],
    latencyRow('healthy, alone', fast.healthy),
    latencyRow(`healthy, beside one taking ${SLOW_MS} ms`, slow.healthy),
    ...(real ? [latencyRow('healthy, alone, real orders', real.healthy)] : []),
  ]);
  console.log(
    'served/s: first attempts per second between the first and the last arrival. relay: commit -> ' +
      'fan-out (outbox relay, RabbitMQ, intake); send: fan-out -> arrival (claim, sign, POST).' +
      `\nthe slow destination got ${slow.second.arrived} first attempts in its run; ${slowBacklog} of its ` +
      'deliveries were still pending when it was paused',
  );
  if (fast.healthy.rate < SUSTAINED_SHARE * fast.load.rate) {
    console.log(
      `note: without the slow destination already, the dispatcher served the healthy one at ` +
        `${fmt(fast.healthy.rate, 0)}/s, below the ${fast.load.rate.toFixed(0)} events/s committed: the latencies ` +
        'measure its growing backlog, and the comparison with the slow destination says little',
    );
  }
  const duplicates = runs.reduce((sum, [, run]) => sum + run.healthy.duplicates, 0);
  if (duplicates) console.log(`note: ${duplicates} first attempts arrived twice at the healthy destination`);
  for (const [label, run] of runs) {
    if (!sustained(run)) {
      console.log(
        `note: ${SOURCES[run.source].request} did not sustain ${RATE}/s (${label}): ` +
          `${run.load.rate.toFixed(0)}/s; ${run.load.skipped} requests not sent because ${MAX_IN_FLIGHT} ` +
          `were in flight${run.load.failed ? `; failed: ${run.load.failed}` : ''}`,
      );
    }
  }

  console.log('');
  const line = (label, value, target, ok) =>
    console.log(`${label.padEnd(40)} ${value.padStart(10)}   ${target.padEnd(34)} ${ok}`);
  line(
    'dispatcher / ceiling',
    `${(100 * ratio).toFixed(1)} %`,
    `target >= ${100 * TARGET_MIN_RATIO} %`,
    verdict(ratioOk),
  );
  line(
    'p99 commit -> arrival (healthy)',
    `${fmt(fast.healthy.p99)} ms`,
    `target < ${TARGET_MAX_P99_MS} ms at ${RATE}/s`,
    rateOk ? verdict(p99Ok) : `${verdict(p99Ok)} (not at ${RATE}/s)`,
  );
  line(
    `healthy p99 beside a ${SLOW_MS} ms one`,
    `${fmt(slow.healthy.p99)} ms`,
    `target <= ${fmt(allowed)} ms (+20 % or 20 ms)`,
    verdict(isolationOk),
  );
  if (real) {
    line(
      'p99 commit -> arrival, real orders',
      `${fmt(real.healthy.p99)} ms`,
      `at ${real.load.rate.toFixed(0)} orders/s`,
      sustained(real) ? `information (${verdict(real.healthy.p99 < TARGET_MAX_P99_MS)})` : 'information',
    );
  }
  console.log(`${'overall'.padEnd(40)} ${verdict(ratioOk && p99Ok && isolationOk && rateOk)}`);

  // Not a target: where the CPU went, to tell slow code from a saturated machine.
  printCpuTable([
    ['idle (no load)', idleCpu],
    ['ceiling (bare loop)', ceiling.cpu],
    ['dispatcher drain', drain.cpu],
    ['latency, fast', fast.cpu],
    ['latency, one slow', slow.cpu],
    ...(real ? [['latency, real orders', real.cpu]] : []),
  ]);
  if (idleCpu && idleCpu.other > BUSY_OTHER) {
    console.log(
      `\nwarning: with no load at all, other work used ${idleCpu.other.toFixed(0)} % of one core ` +
        '(`other` on the idle row): the services got what was left, so every figure above understates them. ' +
        'Run again on a quiet machine.',
    );
  }
  if (ceiling.cpu && drain.cpu) {
    const perDelivery = (run, names) =>
      names
        .map((name) => `${name} ${((((run.cpu[name] ?? 0) / 100) * run.wallMs) / run.delivered).toFixed(3)}`)
        .join(', ');
    console.log('\nCPU ms per delivery:');
    console.log(`  dispatcher drain  ${perDelivery(drain, ['dispatcher', 'postgres', 'receivers'])}`);
    console.log(`  ceiling           ${perDelivery(ceiling, ['load generator', 'receivers'])}`);
  }
  // Not a target: what the dispatcher's connections did (its pool is 10; its application name is its
  // schema, `webhooks`). Connections idle in a transaction wait on the dispatcher's event loop; a lock
  // or I/O wait, on PostgreSQL.
  const sessionRuns = [
    ['dispatcher drain', drain.sessions],
    ['latency, one destination', fast.sessions],
    ['latency, plus a slow one', slow.sessions],
    ...(real ? [['latency, real orders', real.sessions]] : []),
  ];
  console.log("\nthe dispatcher's database connections, mean of pg_stat_activity samples every 100 ms:");
  printTable([
    ['run', 'open', 'running', 'waiting on a lock', 'idle in transaction', 'top wait'],
    ...sessionRuns.map(([label, sessions]) => {
      const r = sessions.rows.find((x) => x.application === 'webhooks');
      const row = r
        ? [
            r.application,
            ...[r.open, r.running, r.lock, r.idleInTransaction].map((n) => n.toFixed(1)),
            r.topWait,
          ]
        : ['', '0', '0', '0', '0', '-'];
      return [label, ...row.slice(1)];
    }),
  ]);
}

export async function printProfiles() {
  if (!PROFILE_DIR) return;
  const { printProfile, writeProfileWindows } = await import('../create-order/profile.mjs');
  console.log(
    `\nCPU profiles in ${PROFILE_DIR}: self time during the drain for the dispatcher and the receivers, ` +
      'during the first latency run for the producer, during the run with real orders (or the first ' +
      'latency run) for the services. A whole process: node bench/create-order/profile.mjs <file>',
  );
  const windowOf = (name) =>
    name === 'dispatcher' || name === 'receivers'
      ? windows.drain
      : name === 'producer'
        ? windows.latency
        : (windows.real ?? windows.latency);
  writeProfileWindows(
    PROFILE_DIR,
    childList().map(({ name }) => name),
    windowOf,
  );
  for (const { name } of childList()) {
    const file = path.join(PROFILE_DIR, `${name}.cpuprofile`);
    if (existsSync(file)) printProfile(name, file, 12, windowOf(name));
    else console.log(`\n${name}: no profile written (stopped before it could write one?)`);
  }
}
