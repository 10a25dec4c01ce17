// A local three-node RabbitMQ cluster for the fault harness (`--rabbitmq cluster`): three
// `rabbitmq-server` nodes of this machine's RabbitMQ, each on its own ports and data directory under the
// run's folder, sharing one Erlang cookie, joined into one cluster. The machine's own broker (5672) is
// left alone. Nodes are stopped and started with `rabbitmqctl stop_app` / `start_app`, as an operator
// or a node's restart would take it out of the cluster and bring it back.
import { execFile } from 'node:child_process';
import { copyFileSync, chmodSync, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const BIN = process.env.CHAOS_RABBITMQ_BIN ?? '/usr/lib/rabbitmq/bin';
const COOKIE = process.env.CHAOS_RABBITMQ_COOKIE ?? '/var/lib/rabbitmq/.erlang.cookie';

/** The nodes' AMQP ports; distribution ports are 20000 above. */
const PORTS = [5691, 5692, 5693];

export async function startRabbitCluster(dir) {
  rmSync(dir, { recursive: true, force: true });
  const home = path.join(dir, 'home');
  mkdirSync(home, { recursive: true });
  // rabbitmqctl and the nodes read the cookie from $HOME: one copy for the three.
  if (!existsSync(COOKIE)) throw new Error(`no Erlang cookie at ${COOKIE} (CHAOS_RABBITMQ_COOKIE)`);
  copyFileSync(COOKIE, path.join(home, '.erlang.cookie'));
  chmodSync(path.join(home, '.erlang.cookie'), 0o400);
  const nodes = PORTS.map((port, i) => ({
    name: `chaos${i + 1}@localhost`,
    port,
    dir: path.join(dir, `n${i + 1}`),
  }));
  const ctl = (node, ...args) =>
    run(path.join(BIN, 'rabbitmqctl'), ['-n', node.name, ...args], {
      env: { ...process.env, HOME: home },
      timeout: 120_000,
    });
  for (const node of nodes) {
    mkdirSync(path.join(node.dir, 'mnesia'), { recursive: true });
    mkdirSync(path.join(node.dir, 'log'), { recursive: true });
    writeFileSync(
      path.join(node.dir, 'rabbitmq.conf'),
      // guest may connect from loopback only (the default), which is where the services are.
      `listeners.tcp.local = 127.0.0.1:${node.port}\ncluster_partition_handling = pause_minority\n`,
    );
    writeFileSync(path.join(node.dir, 'enabled_plugins'), '[].\n');
    await run(path.join(BIN, 'rabbitmq-server'), ['-detached'], {
      cwd: node.dir,
      env: {
        ...process.env,
        HOME: home,
        RABBITMQ_NODENAME: node.name,
        RABBITMQ_NODE_PORT: String(node.port),
        RABBITMQ_DIST_PORT: String(node.port + 20_000),
        RABBITMQ_CONFIG_FILE: path.join(node.dir, 'rabbitmq'),
        RABBITMQ_MNESIA_BASE: path.join(node.dir, 'mnesia'),
        RABBITMQ_LOG_BASE: path.join(node.dir, 'log'),
        RABBITMQ_ENABLED_PLUGINS_FILE: path.join(node.dir, 'enabled_plugins'),
        RABBITMQ_PID_FILE: path.join(node.dir, 'pid'),
      },
    });
  }
  // `wait` reads the node's pid file, which it writes once it boots, then waits for the broker; a node
  // not yet registered with epmd would fail `await_startup` at once.
  for (const node of nodes) await ctl(node, 'wait', path.join(node.dir, 'pid'), '--timeout', '120');
  const [first, ...others] = nodes;
  for (const node of others) {
    await ctl(node, 'stop_app');
    await ctl(node, 'join_cluster', first.name);
    await ctl(node, 'start_app');
  }
  const urls = nodes.map((node) => `amqp://guest:guest@127.0.0.1:${node.port}`);
  return {
    nodes: nodes.map((node) => node.name),
    urls,
    /**
     * AMQP_URL for the i-th service: every node, starting at a different one per service, so that
     * connections (and the leaders of the queues each service declares) spread over the cluster.
     */
    amqpUrlFor: (i) => urls.map((_, k) => urls[(i + k) % urls.length]).join(','),
    stopNode: (name) => ctl(byName(nodes, name), 'stop_app'),
    // start_app returns once the broker runs on that node again.
    startNode: (name) => ctl(byName(nodes, name), 'start_app'),
    /** The node that leads a quorum queue (its full name), asked of the first node (never stopped then). */
    async leaderOf(queue) {
      const { stdout } = await ctl(first, 'list_queues', 'name', 'leader', '--formatter', 'json', '--quiet');
      const row = JSON.parse(stdout).find((q) => q.name === queue);
      if (!row) throw new Error(`no queue ${queue} in the cluster`);
      return row.leader;
    },
    async stop() {
      for (const node of nodes) await ctl(node, 'shutdown').catch(() => undefined);
    },
  };
}

function byName(nodes, name) {
  const node = nodes.find((n) => n.name === name);
  if (!node) throw new Error(`no node ${name}`);
  return node;
}
