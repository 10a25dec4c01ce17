// The faults the harness injects, and when. `--faults` lists them by name, each optionally with the
// second of the load it starts at (`pg-restart@40`); without times they are spread evenly over the
// load. The default is the whole catalogue in this order.
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * name -> what it does; `down` is how long the process or server stays away (seconds). A kill stops
 * one replica of its service, the first: with two or more, the others carry the load meanwhile, and
 * the first is the one whose periodic jobs run (it started first and took their locks).
 */
export const FAULTS = {
  'kill-orders': { kind: 'kill', service: 'orders', down: 6 },
  'kill-payments': { kind: 'kill', service: 'payments', down: 6 },
  'kill-dispatcher': { kind: 'kill', service: 'webhook-dispatcher', down: 6 },
  'rabbitmq-restart': { kind: 'rabbitmq', down: 12 },
  'kill-withdrawals': { kind: 'kill', service: 'withdrawals', down: 6 },
  'pg-restart': { kind: 'postgres' },
  'redis-down': { kind: 'redis', down: 9 },
  'kill-gateway': { kind: 'kill', service: 'gateway', down: 6 },
  // With `--rabbitmq cluster` only (rabbitmq-cluster.mjs): one node of three out of the cluster.
  'rabbitmq-node-stop': { kind: 'rabbitmq-node', node: 'last', down: 20, cluster: true },
  'rabbitmq-leader-stop': { kind: 'rabbitmq-node', node: 'ledger-leader', down: 20, cluster: true },
};

/** The queue whose leader `rabbitmq-leader-stop` stops: the ledger's, where sales become balance. */
export const LEDGER_QUEUE = 'withdrawals.ledger.quorum';

/**
 * The schedule of `spec` ("all", or names with optional @seconds) over a load of `duration` s; "all"
 * has the cluster's faults when `cluster` is set.
 */
export function schedule(spec, duration, { cluster = false } = {}) {
  const all = Object.keys(FAULTS).filter((name) => cluster || !FAULTS[name].cluster);
  const names = spec === 'all' ? all.map((name) => ({ name })) : parse(spec);
  for (const { name } of names)
    if (FAULTS[name].cluster && !cluster) throw new Error(`fault "${name}" needs --rabbitmq cluster`);
  const untimed = names.filter((f) => f.at === undefined);
  // Evenly between 8 s in and 15 s before the end, so the last fault's recovery is under load too.
  const span = Math.max(1, duration - 23);
  untimed.forEach((f, i) => {
    f.at = Math.round(8 + (span * i) / Math.max(1, untimed.length - 1 || 1));
  });
  return names.sort((a, b) => a.at - b.at).map((f) => ({ ...f, ...FAULTS[f.name] }));
}

function parse(spec) {
  return spec
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) => {
      const [name, at] = part.split('@');
      if (!FAULTS[name]) {
        throw new Error(`unknown fault "${name}"; known: ${Object.keys(FAULTS).join(', ')}`);
      }
      if (at !== undefined && !/^\d+$/.test(at)) throw new Error(`"${part}": the time is whole seconds`);
      return { name, at: at === undefined ? undefined : Number(at) };
    });
}

/** Runs one fault to its end (the process or server back); logs what it did and when. */
export async function inject(fault, { cluster, servers, rabbit, namespace, log }) {
  switch (fault.kind) {
    case 'kill': {
      const [target] = cluster.replicasOf(fault.service);
      log(`SIGKILL ${target}`);
      cluster.kill(target);
      await sleep(fault.down * 1000);
      await cluster.restart(target);
      log(`${target} back`);
      return;
    }
    case 'rabbitmq':
      if (rabbit) {
        // The whole cluster: every node out, then back in the reverse order.
        log('RabbitMQ cluster: stop_app on every node');
        for (const node of rabbit.nodes) await rabbit.stopNode(node);
        await sleep(fault.down * 1000);
        for (const node of [...rabbit.nodes].reverse()) await rabbit.startNode(node);
        log('RabbitMQ cluster back');
        return;
      }
      log('RabbitMQ stop_app');
      await servers.stopRabbit();
      await sleep(fault.down * 1000);
      await servers.startRabbit();
      log('RabbitMQ start_app done');
      return;
    case 'rabbitmq-node': {
      const node =
        fault.node === 'ledger-leader'
          ? await rabbit.leaderOf(`${namespace}${LEDGER_QUEUE}`)
          : rabbit.nodes[rabbit.nodes.length - 1];
      log(`RabbitMQ stop_app on ${node}${fault.node === 'ledger-leader' ? ' (leads the ledger queue)' : ''}`);
      await rabbit.stopNode(node);
      await sleep(fault.down * 1000);
      await rabbit.startNode(node);
      log(`${node} back in the cluster`);
      return;
    }
    case 'postgres':
      log('PostgreSQL restart');
      await servers.restartPostgres();
      log('PostgreSQL back');
      return;
    case 'redis':
      log('Redis shutdown');
      await servers.stopRedis();
      await sleep(fault.down * 1000);
      await servers.startRedis();
      log('Redis back');
      return;
    default:
      throw new Error(`no such fault kind ${fault.kind}`);
  }
}
