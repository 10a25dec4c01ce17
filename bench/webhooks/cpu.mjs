// CPU: lib.mjs counts PostgreSQL and Redis by name; RabbitMQ carries every event here, so it is counted
// too (its Erlang VM, `beam.smp`), and taken out of `other`.
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { withCpu } from '../lib.mjs';

function rabbitSnapshot() {
  try {
    let beam = 0;
    for (const pid of readdirSync('/proc').filter((entry) => /^\d+$/.test(entry))) {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
        const close = stat.lastIndexOf(')');
        if (stat.slice(stat.indexOf('(') + 1, close) !== 'beam.smp') continue;
        const fields = stat.slice(close + 2).split(' ');
        beam += Number(fields[11]) + Number(fields[12]);
      } catch {
        // The process ended in the meantime.
      }
    }
    const cpu = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).slice(1, 9).map(Number);
    return { beam, total: cpu.reduce((a, b) => a + b, 0) };
  } catch {
    return null;
  }
}

/** lib.mjs's withCpu, plus RabbitMQ's share and the wall time. */
export async function measured(fn) {
  const before = rabbitSnapshot();
  const started = performance.now();
  const { value, cpu } = await withCpu(fn);
  const wallMs = performance.now() - started;
  const after = rabbitSnapshot();
  if (!cpu || !before || !after) return { value, cpu, wallMs };
  const rabbit =
    (100 * (after.beam - before.beam)) / ((after.total - before.total) / os.availableParallelism());
  const withRabbit = {};
  for (const [name, share] of Object.entries(cpu)) {
    if (name === 'load generator') withRabbit.rabbitmq = rabbit;
    withRabbit[name] = name === 'other' ? Math.max(0, share - rabbit) : share;
  }
  return { value, cpu: withRabbit, wallMs };
}
