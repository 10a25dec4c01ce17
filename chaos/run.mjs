// `npm run chaos`: the whole system from its build (two gateways, two dispatchers), a steady load of
// orders (half of them paid at once, one in five of those refunded, a third of those refunds failing at the PSP) and withdrawals from careful clients, a sequence of faults
// (processes killed, RabbitMQ, PostgreSQL and Redis restarted), then the promises checked: no order
// lost or doubled, every event delivered once, every paid order's money in the balance, the
// reconciliation clean. Prints one table; exits non-zero on any miss. docs/chaos.md says more.
import { randomBytes, randomUUID } from 'node:crypto';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { Client } from './client.mjs';
import {
  ROOT,
  createSeller,
  deleteQueues,
  portAnswers,
  resetState,
  servers,
  shell,
  parseTopology,
  startCluster,
} from './cluster.mjs';
import { collect, computeChecks, settled } from './checks.mjs';
import { inject, schedule } from './faults.mjs';
import { reconcile } from './reconcile.mjs';
import { startRabbitCluster } from './rabbitmq-cluster.mjs';
import { startReceiver } from './receiver.mjs';

const USAGE = `usage: npm run chaos -- [--faults all|<name>[@<second>],...] [--duration <s>] [--rate <orders/s>]
                       [--sellers <n>] [--settle <s>] [--topology <n>|<service>=<n>,...]
                       [--rabbitmq single|cluster]`;

function options() {
  const { values } = parseArgs({
    options: {
      faults: { type: 'string', default: process.env.CHAOS_FAULTS ?? 'all' },
      duration: { type: 'string', default: process.env.CHAOS_DURATION ?? '150' },
      rate: { type: 'string', default: process.env.CHAOS_RATE ?? '15' },
      sellers: { type: 'string', default: process.env.CHAOS_SELLERS ?? '3' },
      settle: { type: 'string', default: process.env.CHAOS_SETTLE ?? '240' },
      // Replicas of every service (a number), or per service (`default=1,orders=2`); see cluster.mjs.
      topology: { type: 'string', default: process.env.CHAOS_TOPOLOGY ?? '2' },
      // `cluster`: a local three-node RabbitMQ cluster instead of the machine's broker.
      rabbitmq: { type: 'string', default: process.env.CHAOS_RABBITMQ ?? 'single' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const int = (name, min, max) => {
    const n = Number(values[name]);
    if (!Number.isInteger(n) || n < min || n > max)
      throw new Error(`--${name} must be an integer from ${min} to ${max}`);
    return n;
  };
  const duration = int('duration', 20, 3600);
  if (!['single', 'cluster'].includes(values.rabbitmq))
    throw new Error('--rabbitmq must be single or cluster');
  const cluster = values.rabbitmq === 'cluster';
  return {
    rabbitCluster: cluster,
    duration,
    rate: int('rate', 1, 200),
    sellers: int('sellers', 1, 50),
    settle: int('settle', 10, 3600),
    faults: values.faults === 'none' ? [] : schedule(values.faults, duration, { cluster }),
    topology: parseTopology(values.topology),
  };
}

const started = Date.now();
const log = (text) => console.log(`[${((Date.now() - started) / 1000).toFixed(1).padStart(6)} s] ${text}`);

/** The three servers answer before anything starts (a run killed mid-fault may have left one down). */
async function serversUp(local) {
  const up = async (port) =>
    portAnswers(port, 1_000).then(
      () => true,
      () => false,
    );
  if (!(await up(6379))) await local.startRedis();
  if (!(await up(5672))) await shell('rabbitmq-server -detached').catch(() => local.startRabbit());
  if (!(await up(5432))) await local.restartPostgres();
  for (const port of [5432, 5672, 6379]) await portAnswers(port);
}

async function main() {
  const opts = options();
  const local = servers();
  await serversUp(local);
  const runId = `${new Date()
    .toISOString()
    .replace(/[-:.TZ]/g, '')
    .slice(0, 14)}-${randomBytes(2).toString('hex')}`;
  const logDir = path.join(ROOT, '.cache', 'chaos', runId);
  const database = 'seller_api_chaos';
  const env = {
    ...process.env,
    NODE_ENV: 'development',
    LOG_LEVEL: process.env.CHAOS_LOG_LEVEL ?? 'warn',
    DATABASE_URL: `postgres://postgres@127.0.0.1:5432/${database}`,
    REDIS_URL: 'redis://127.0.0.1:6379',
    REDIS_KEY_PREFIX: `chaos:${runId}:`,
    AMQP_URL: 'amqp://guest:guest@127.0.0.1:5672',
    AMQP_NAMESPACE: 'chaos.',
    // The receiver listens on loopback (test keys only), and deliveries retry in seconds, not hours.
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    WEBHOOK_RETRY_SCHEDULE: '1s,2s,5s,10s,20s,30s,60s',
    RATE_LIMIT_PER_MINUTE: '1000000',
    WITHDRAWAL_AUTO_APPROVE_BELOW: '1000000',
    // Every withdrawal goes to the PSP by itself: no rolling cap sends one to an operator.
    WITHDRAWAL_AUTO_APPROVE_DAILY_COUNT: '0',
    WITHDRAWAL_AUTO_APPROVE_DAILY_AMOUNT: '0',
    // The reconciliation runs once, at the end: one that healed during the run would hide a loss.
    RECONCILE_INTERVAL_MS: '0',
    // Refunds end later, as a real PSP's do: answered EM_PROCESSAMENTO, ended by the refund checks'
    // look-ups, those of amounts ending in 13 cents not made (docs/payments.md, "Refunds").
    SANDBOX_REFUNDS: 'processing',
    REFUND_CHECK_INTERVAL_MS: '500',
    REFUND_CHECK_BASE_MS: '1000',
    REFUND_CHECK_MAX_MS: '4000',
  };
  log(
    `run ${runId}: ${opts.duration} s at ${opts.rate} orders/s, ${opts.sellers} sellers; logs in ${logDir}`,
  );
  log(`faults: ${opts.faults.map((f) => `${f.name}@${f.at}s`).join(', ') || 'none'}`);
  log(
    `replicas: ${Object.entries(opts.topology)
      .map(([s, n]) => `${s} ${n}`)
      .join(', ')}`,
  );
  const rabbit = opts.rabbitCluster ? await startRabbitCluster(path.join(logDir, 'rabbitmq')) : null;
  if (rabbit) {
    log(`RabbitMQ cluster up: ${rabbit.nodes.join(', ')}`);
    env.AMQP_URL = rabbit.urls[0];
  }
  await resetState({ database, amqpUrl: env.AMQP_URL, namespace: env.AMQP_NAMESPACE });
  const cluster = await startCluster({
    env,
    logDir,
    replicas: opts.topology,
    // Each process gets every node, from a different first one: connections and queue leaders spread.
    envFor: rabbit ? (i) => ({ AMQP_URL: rabbit.amqpUrlFor(i) }) : undefined,
  });
  const receiver = await startReceiver();
  const client = new Client(cluster.gatewayUrls, { giveUpAfterMs: 200_000 });
  try {
    const sellers = [];
    for (let s = 0; s < opts.sellers; s += 1) {
      const key = await createSeller(cluster.envOf('gateway-1'), `chaos-${runId}-${s}@example.com`);
      for (const event of ['order.created', 'order.paid']) {
        const res = await client.call('POST', '/config/webhooks/', {
          key,
          body: { url: `${receiver.url}/hooks/${s}`, event },
        });
        if (res.status !== 201) throw new Error(`webhook registration: ${res.status} ${res.text}`);
      }
      sellers.push({ index: s, key });
    }
    log('system up; load starts');
    const runStart = new Date();
    const outcome = await drive({
      opts,
      client,
      sellers,
      cluster,
      local,
      rabbit,
      namespace: env.AMQP_NAMESPACE,
      runId,
    });
    log(
      `load done: ${outcome.orders.length} orders asked, ${outcome.orders.filter((o) => o.refunded).length} refunds asked, ${outcome.withdrawals.length} withdrawals asked`,
    );
    // Settling: deliveries retried, messages back from retry queues, payouts finishing.
    const deadline = Date.now() + opts.settle * 1000;
    let state = await collect({ client, sellers, outcome, receiver, databaseUrl: env.DATABASE_URL });
    while (!settled(state) && Date.now() < deadline) {
      await sleep(3_000);
      state = await collect({ client, sellers, outcome, receiver, databaseUrl: env.DATABASE_URL });
    }
    log(settled(state) ? 'settled' : `not settled after ${opts.settle} s: checking what is there`);
    const reconciliation = await reconcile(cluster.envOf(cluster.replicasOf('withdrawals')[0]), runStart);
    const rows = computeChecks(state, { reconciliation, exits: cluster.unexpectedExits() });
    printReport(rows, client, outcome);
    return rows.every((row) => row.ok) ? 0 : 1;
  } finally {
    await receiver.close();
    await cluster.stop();
    await deleteQueues(env.AMQP_URL, env.AMQP_NAMESPACE).catch(() => undefined);
    await rabbit?.stop();
  }
}

/** Load and faults at once; resolves when the load is over and every client call has finished. */
async function drive({ opts, client, sellers, cluster, local, rabbit, namespace, runId }) {
  const start = Date.now();
  const end = start + opts.duration * 1000;
  const orders = [];
  const withdrawals = [];
  const tasks = [];
  const faultLog = [];
  const faults = (async () => {
    for (const fault of opts.faults) {
      const due = start + fault.at * 1000;
      if (due > Date.now()) await sleep(due - Date.now());
      await inject(fault, {
        cluster,
        servers: local,
        rabbit,
        namespace,
        log: (text) => {
          faultLog.push(text);
          log(`fault: ${text}`);
        },
      });
    }
  })();
  const withdrawing = sellers.map((seller, s) =>
    (async () => {
      // Each seller asks for a small withdrawal every 10 s once its balance allows.
      await sleep(5_000 + s * 700);
      while (Date.now() < end - 5_000) {
        const balance = await client.call('GET', '/finance/balance/', { key: seller.key });
        if (balance.status === 200 && balance.body.data.available_amount >= 2_000) {
          const asked = { seller: seller.index, amount: 1_000, uuid: null, status: null };
          withdrawals.push(asked);
          const res = await client.call('POST', '/finance/withdrawals/', {
            key: seller.key,
            body: { amount: asked.amount, pix_key: `chaos-${s}@example.com`, pix_key_type: 'email' },
          });
          asked.status = res.status;
          if (res.status === 201) asked.uuid = res.body.data.uuid;
          asked.gaveUp = Boolean(res.gaveUp);
        }
        await sleep(10_000);
      }
    })(),
  );
  for (let i = 0; ; i += 1) {
    const due = start + (i * 1000) / opts.rate;
    if (due >= end) break;
    if (due > Date.now()) await sleep(due - Date.now());
    const seller = sellers[i % sellers.length];
    const order = {
      n: i,
      seller: seller.index,
      marker: `chaos-${runId}-order-${i}@example.com`,
      pay: i % 2 === 0,
      // A seller's refund needs the net in the available balance: it is reserved first, under faults too.
      refund: i % 10 === 0,
      // One refund in three is not made by the PSP (the sandbox's 13 cents): the order stays PAID.
      refundFails: i % 30 === 0,
      uuid: null,
      created: null,
      paid: null,
      refunded: null,
    };
    orders.push(order);
    tasks.push(placeOrder(client, seller, order));
  }
  await Promise.all([faults, ...withdrawing, ...tasks]);
  return { orders, withdrawals, faultLog };
}

async function placeOrder(client, seller, order) {
  const res = await client.call('POST', '/sellers/orders/', {
    key: seller.key,
    idempotencyKey: randomUUID(),
    body: {
      customer: {
        name: 'Maria Silva',
        tax_id: '529.982.247-25',
        email: order.marker,
        phone: '+5511999990000',
      },
      payment: { gross_amount: 1_000 + (order.n % 50) * 100 + (order.refundFails ? 13 : 0) },
    },
  });
  order.created = res.status;
  order.createdGaveUp = Boolean(res.gaveUp);
  if (res.status !== 201) return;
  order.uuid = res.body.data.uuid;
  if (!order.pay) return;
  const pay = await client.call('POST', `/sandbox/orders/${order.uuid}/pay/`, { key: seller.key });
  order.paid = pay.status;
  order.payGaveUp = Boolean(pay.gaveUp);
  if (pay.status === 409 && pay.body?.code === 'conflict') {
    // Already paid by an attempt whose answer was lost: the order says so.
    const read = await client.call('GET', `/sellers/orders/${order.uuid}/`, { key: seller.key });
    if (read.status === 200 && read.body.data.payment.status === 'PAID') order.paid = 200;
  }
  if (!order.refund || order.paid !== 200) return;
  await sleep(REFUND_AFTER_MS);
  const refund = await client.call('POST', `/sellers/orders/${order.uuid}/refund/`, { key: seller.key });
  order.refunded = refund.status;
  order.refundCode = refund.body?.code ?? null;
  order.refundGaveUp = Boolean(refund.gaveUp);
}

/** How long after its payment an order is refunded: its sale is usually in the ledger by then. */
const REFUND_AFTER_MS = 2_000;

function printReport(rows, client, outcome) {
  console.log('\nfaults injected:');
  for (const line of outcome.faultLog) console.log(`  ${line}`);
  const statuses = [...client.stats.byStatus]
    .sort(([a], [b]) => a - b)
    .map(([s, n]) => `${s || 'net'}: ${n}`);
  console.log(
    `\nclient calls: ${client.stats.attempts} (${client.stats.retried} retries); by status ${statuses.join(', ')}`,
  );
  const widths = [0, 1, 2].map((i) =>
    Math.max(...rows.map((r) => String([r.check, r.value, r.expected][i]).length), 8),
  );
  const line = (cells) => cells.map((c, i) => String(c).padEnd(widths[i] ?? 4)).join('  ');
  console.log(`\n${line(['check', 'value', 'expected', 'ok'])}`);
  console.log(line(widths.map((w) => '-'.repeat(w)).concat('--')));
  for (const row of rows) console.log(line([row.check, row.value, row.expected, row.ok ? 'yes' : 'MISS']));
  const misses = rows.filter((r) => !r.ok);
  console.log(misses.length === 0 ? '\nchaos: PASS' : `\nchaos: FAIL (${misses.length} checks missed)`);
  for (const miss of misses) if (miss.detail) console.log(`  ${miss.check}: ${miss.detail}`);
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(`\nchaos harness failed: ${err instanceof Error ? err.stack : err}`);
    process.exit(2);
  },
);
