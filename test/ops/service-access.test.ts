// One RabbitMQ user per service (docs/messaging.md, "Permissions"): the permission expressions hold
// every name each service's topology declares, binds, publishes to and consumes, and none of another
// service's exchange or queues; against the local RabbitMQ, every service's broker starts as its own
// user, and orders' user is refused on payments' exchange. Also: docker-compose.yml gives each
// service its own credentials, and the generated files under deploy/ are current.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import amqp from 'amqplib';
import { parse } from 'yaml';
import {
  Broker,
  UnprocessableMessageError,
  classicQueueNames,
  createLogger,
  queueNames,
  type Topology,
} from '@seller-api/service-kit';
import {
  SERVICE_ACCESS,
  amqpPermissions,
  serviceRolesSql,
  type AmqpPermissions,
  type ServiceAccess,
} from '../../packages/service-kit/src/service-access';
import * as orders from '../../services/orders/src/events/topology';
import * as payments from '../../services/payments/src/events/topology';
import * as withdrawals from '../../services/withdrawals/src/events/topology';
import * as webhooks from '../../services/webhook-dispatcher/src/events/topology';
import { DEFAULT_URLS } from '../support/servers';
import { waitFor } from '../support/wait';
import { ROOT } from './helm';

interface ServiceTopology {
  /** The exchange it publishes its events to; null for the gateway, which publishes none. */
  exchange: string | null;
  topology: Topology;
}

const TOPOLOGIES: Record<string, ServiceTopology> = {
  // The gateway's broker declares nothing of its own (services/gateway/src/service.ts).
  gateway: { exchange: null, topology: { exchanges: [], queues: [] } },
  orders: { exchange: orders.EXCHANGE, topology: orders.topology },
  payments: { exchange: payments.EXCHANGE, topology: payments.topology },
  withdrawals: { exchange: withdrawals.EXCHANGE, topology: withdrawals.topology },
  'webhook-dispatcher': { exchange: webhooks.EXCHANGE, topology: webhooks.topology },
};

type Right = keyof AmqpPermissions;

/** Every queue name of a topology queue: quorum, retry, dead, and the classic names it drains. */
const allQueueNames = (namespace: string, logical: string) => [
  ...Object.values(queueNames(namespace, logical)),
  ...Object.values(classicQueueNames(namespace, logical)),
];

/** What the kit's broker does with `service`'s topology, as (right, resource) pairs. */
function needs(service: string, namespace: string): Array<[Right, string]> {
  const { exchange, topology } = TOPOLOGIES[service] as ServiceTopology;
  const ns = (name: string) => `${namespace}${name}`;
  const out: Array<[Right, string]> = [];
  if (exchange) out.push(['configure', ns(exchange)], ['write', ns(exchange)]);
  for (const queue of topology.queues) {
    const dlx = ns(`${queue.name}.dlx`);
    // declare it; bind the queues to it; park and create queues dead-lettering to it
    out.push(['configure', dlx], ['read', dlx], ['write', dlx]);
    for (const name of allQueueNames(namespace, queue.name)) {
      // declare/delete; bind; consume, get and the dead-letter check on creation
      out.push(['configure', name], ['write', name], ['read', name]);
    }
    for (const binding of queue.bindings) out.push(['read', ns(binding.exchange)]);
  }
  return out;
}

/** What `service` must never do: publish to another's exchange, or touch another's queues. */
function forbidden(service: string, namespace: string): Array<[Right, string]> {
  const out: Array<[Right, string]> = [];
  for (const [other, { exchange, topology }] of Object.entries(TOPOLOGIES)) {
    if (other === service) continue;
    // Neither publish to it nor declare (or delete) it.
    if (exchange) out.push(['write', `${namespace}${exchange}`], ['configure', `${namespace}${exchange}`]);
    for (const queue of topology.queues) {
      const dlx = `${namespace}${queue.name}.dlx`;
      out.push(['configure', dlx], ['write', dlx], ['read', dlx]);
      for (const name of allQueueNames(namespace, queue.name)) {
        out.push(['configure', name], ['write', name], ['read', name]);
      }
    }
  }
  // The plumbing earlier builds shared: the dead-letter exchange and the default exchange.
  for (const right of ['configure', 'write', 'read'] as const) {
    out.push([right, `${namespace}dlx`], [right, 'amq.default']);
  }
  return out;
}

const allowed = (permissions: AmqpPermissions, right: Right, resource: string) =>
  new RegExp(permissions[right]).test(resource);

describe.each(['', 'staging.'])('permission expressions (namespace %j)', (namespace) => {
  it.each(SERVICE_ACCESS.map((a) => a.service))('%s: everything its broker does is allowed', (service) => {
    const permissions = amqpPermissions(
      SERVICE_ACCESS.find((a) => a.service === service) as ServiceAccess,
      namespace,
    );
    const refused = needs(service, namespace).filter(([right, name]) => !allowed(permissions, right, name));
    expect(refused).toEqual([]);
  });

  it.each(SERVICE_ACCESS.map((a) => a.service))(
    "%s: nothing of another service's exchange or queues",
    (service) => {
      const permissions = amqpPermissions(
        SERVICE_ACCESS.find((a) => a.service === service) as ServiceAccess,
        namespace,
      );
      const granted = forbidden(service, namespace).filter(([right, name]) =>
        allowed(permissions, right, name),
      );
      expect(granted).toEqual([]);
    },
  );
});

it('only payments may publish to payments.events', () => {
  const publishers = SERVICE_ACCESS.filter((a) => allowed(amqpPermissions(a), 'write', 'payments.events'));
  expect(publishers.map((a) => a.service)).toEqual(['payments']);
});

describe('generated files', () => {
  it('deploy/postgres/service-roles.sql is serviceRolesSql() (node scripts/service-access.mjs)', () => {
    const file = readFileSync(path.join(ROOT, 'deploy/postgres/service-roles.sql'), 'utf8');
    expect(file.slice(file.indexOf('do $roles$'))).toBe(serviceRolesSql());
  });

  it.each(SERVICE_ACCESS.map((a) => a))('deploy/rabbitmq/permissions/$role.json is current', (access) => {
    const file = readFileSync(path.join(ROOT, `deploy/rabbitmq/permissions/${access.role}.json`), 'utf8');
    expect(JSON.parse(file)).toEqual(amqpPermissions(access));
  });
});

describe('docker-compose.yml', () => {
  const compose = parse(readFileSync(path.join(ROOT, 'docker-compose.yml'), 'utf8')) as {
    services: Record<string, { environment?: Record<string, string> }>;
  };
  // As compose interpolates them: every `${NAME...}` (all come from .env) stands for a value.
  const raw = (service: string) => compose.services[service]?.environment ?? {};
  const env = (service: string) =>
    Object.fromEntries(
      Object.entries(raw(service)).map(([name, value]) => [
        name,
        String(value).replace(/\$\{[A-Z_]+(:[-?][^}]*)?\}/g, 'value'),
      ]),
    );

  it.each(SERVICE_ACCESS.map((a) => a))('$service connects as $role to PostgreSQL and RabbitMQ', (access) => {
    const database = new URL(env(access.service).DATABASE_URL as string);
    const broker = new URL(env(access.service).AMQP_URL as string);
    expect(database.username).toBe(access.role);
    expect(broker.username).toBe(access.role);
    // Its own password variable, and nobody else's.
    const prefix = access.service.toUpperCase().replace(/-/g, '_');
    // Required from .env, never a fallback written here.
    expect(raw(access.service).DATABASE_URL).toContain(`\${${prefix}_DB_PASSWORD:?`);
    expect(raw(access.service).AMQP_URL).toContain(`\${${prefix}_AMQP_PASSWORD:?`);
  });

  it('holds no PSP secret in the webhook-dispatcher, and no superuser or guest anywhere', () => {
    expect(Object.keys(env('webhook-dispatcher')).filter((k) => /PSP|PAYOUT/.test(k))).toEqual([]);
    for (const access of SERVICE_ACCESS) {
      expect(env(access.service).DATABASE_URL).not.toMatch(/\/\/postgres[:@]/);
      expect(env(access.service).AMQP_URL).not.toMatch(/guest/);
    }
    expect(compose.services.postgres?.environment?.POSTGRES_HOST_AUTH_METHOD).toBeUndefined();
  });

  it('gives the setup scripts every role and user', () => {
    const db = readFileSync(path.join(ROOT, 'deploy/postgres/setup.sh'), 'utf8');
    const broker = readFileSync(path.join(ROOT, 'deploy/rabbitmq/setup.sh'), 'utf8');
    for (const access of SERVICE_ACCESS) {
      const prefix = access.service.toUpperCase().replace(/-/g, '_');
      expect(db).toContain(`"${access.role}:$${prefix}_DB_PASSWORD"`);
      expect(broker).toContain(`"${access.role}:$${prefix}_AMQP_PASSWORD"`);
      expect(env('db-setup')[`${prefix}_DB_PASSWORD`]).toBeDefined();
      expect(env('broker-setup')[`${prefix}_AMQP_PASSWORD`]).toBeDefined();
    }
  });
});

/**
 * The local RabbitMQ, administered with rabbitmqctl (on the broker's own machine). Users are created
 * with unique names, in a namespace of this run, and deleted afterwards with what they declared.
 */
describe('RabbitMQ with one user per service', () => {
  const amqpUrl = process.env.AMQP_URL ?? DEFAULT_URLS.AMQP_URL;
  const run = randomBytes(4).toString('hex');
  const namespace = `test.ops.access${run}.`;
  // Queues as builds before per-queue dead-letter exchanges created them, in a namespace of their own.
  const legacy = `test.ops.legacy${run}.`;
  const vhost = decodeURIComponent(new URL(amqpUrl).pathname.slice(1)) || '/';
  const users = new Map<string, { name: string; password: string }>();
  const brokers = new Map<string, Broker>();
  const ctl = (...args: string[]) =>
    execFileSync('rabbitmqctl', ['-q', ...args], { encoding: 'utf8', timeout: 30_000 });
  const urlOf = (user: string) => {
    const { name, password } = users.get(user) as { name: string; password: string };
    const url = new URL(amqpUrl);
    url.username = name;
    url.password = password;
    return url.toString();
  };
  const addUser = (key: string, permissions: AmqpPermissions) => {
    const user = { name: `sa_test_${run}_${key}`, password: randomBytes(12).toString('hex') };
    ctl('add_user', user.name, user.password);
    users.set(key, user);
    ctl(
      'set_permissions',
      '-p',
      vhost,
      user.name,
      permissions.configure,
      permissions.write,
      permissions.read,
    );
  };
  const accessOf = (service: string) => SERVICE_ACCESS.find((a) => a.service === service) as ServiceAccess;
  const startBroker = async (user: string, service: string, ns: string) => {
    const broker = new Broker({
      url: urlOf(user),
      namespace: ns,
      logger: createLogger(`access-${service}`, 'silent'),
      topology: (TOPOLOGIES[service] as ServiceTopology).topology,
      reconnectDelayMs: 60_000,
    });
    brokers.set(user, broker);
    await broker.start();
    return broker;
  };

  beforeAll(async () => {
    for (const access of SERVICE_ACCESS) addUser(access.service, amqpPermissions(access, namespace));
    addUser('legacy', amqpPermissions(accessOf('orders'), legacy));
    // Producers first: a consumer may only read their exchanges, which must exist.
    for (const service of ['payments', 'orders', 'withdrawals', 'gateway', 'webhook-dispatcher']) {
      await startBroker(service, service, namespace);
    }
  });

  afterAll(async () => {
    await Promise.all([...brokers.values()].map((b) => b.close()));
    const connection = await amqp.connect(amqpUrl);
    const channel = await connection.createChannel();
    for (const ns of [namespace, legacy]) {
      const queues = Object.values(TOPOLOGIES).flatMap(({ topology }) =>
        topology.queues.flatMap((q) => allQueueNames(ns, q.name)),
      );
      await Promise.all(queues.map((q) => channel.deleteQueue(q)));
      const exchanges = new Set(
        Object.values(TOPOLOGIES).flatMap(({ topology }) => [
          ...topology.exchanges,
          ...topology.queues.map((q) => `${q.name}.dlx`),
        ]),
      );
      await Promise.all([...exchanges, 'dlx'].map((e) => channel.deleteExchange(`${ns}${e}`)));
    }
    await connection.close();
    for (const user of users.values()) ctl('delete_user', user.name);
  });

  it('starts every service broker (declarations, bindings) as its own user', () => {
    const connected = SERVICE_ACCESS.map((a) => [a.service, brokers.get(a.service)?.isConnected()]);
    expect(connected).toEqual(SERVICE_ACCESS.map((a) => [a.service, true]));
  });

  /** Publishes with a confirm; answers null when confirmed, else the error that closed the channel. */
  async function publishAs(
    user: string,
    exchange: string,
    routingKey = 'payment.approved',
  ): Promise<string | null> {
    const connection = await amqp.connect(urlOf(user));
    try {
      const channel = await connection.createConfirmChannel();
      const closed = new Promise<string>((resolve) =>
        channel.on('error', (err: Error) => resolve(err.message)),
      );
      const confirmed = new Promise<null>((resolve, reject) =>
        channel.publish(exchange, routingKey, Buffer.from('{}'), {}, (err) =>
          err ? reject(err) : resolve(null),
        ),
      ).catch(() => closed);
      return await Promise.race([confirmed, closed]);
    } finally {
      await connection.close().catch(() => undefined);
    }
  }

  it("refuses orders' user on payments.events (403 ACCESS_REFUSED), accepts it on orders.events", async () => {
    expect(await publishAs('orders', `${namespace}orders.events`)).toBeNull();
    expect(await publishAs('orders', `${namespace}payments.events`)).toMatch(/403.*ACCESS_REFUSED/);
    expect(await publishAs('payments', `${namespace}payments.events`)).toBeNull();
  });

  it("refuses orders' user on withdrawals' queues and their dead-letter exchange, and on the default exchange", async () => {
    const ledger = queueNames(namespace, withdrawals.LEDGER_QUEUE);
    // Straight into the ledger queue, or into its retry queue, which would hand it on.
    expect(await publishAs('orders', '', ledger.main)).toMatch(/403.*ACCESS_REFUSED/);
    expect(await publishAs('orders', `${namespace}${withdrawals.LEDGER_QUEUE}.dlx`, ledger.retry)).toMatch(
      /403.*ACCESS_REFUSED/,
    );
    const connection = await amqp.connect(urlOf('orders'));
    try {
      const channel = await connection.createChannel();
      channel.on('error', () => undefined);
      await expect(channel.consume(ledger.main, () => undefined)).rejects.toThrow(/403/);
    } finally {
      await connection.close().catch(() => undefined);
    }
  });

  it('keeps queues created with the shared dead-letter exchange working: retried and parked', async () => {
    // As an earlier build declared them, with the administrator's rights.
    const names = queueNames(legacy, orders.CHARGES_QUEUE);
    const admin = await amqp.connect(amqpUrl);
    const setup = await admin.createConfirmChannel();
    const quorum = {
      'x-queue-type': 'quorum',
      'x-dead-letter-strategy': 'at-least-once',
      'x-overflow': 'reject-publish',
    };
    await setup.assertExchange(`${legacy}dlx`, 'direct', { durable: true });
    await setup.assertExchange(`${legacy}payments.events`, 'topic', { durable: true });
    await setup.assertQueue(names.main, {
      durable: true,
      arguments: {
        ...quorum,
        'x-dead-letter-exchange': `${legacy}dlx`,
        'x-dead-letter-routing-key': names.retry,
      },
    });
    await setup.assertQueue(names.retry, {
      durable: true,
      arguments: {
        ...quorum,
        // The retry delay of orders' topology (the default): the arguments must match.
        'x-message-ttl': 1_000,
        'x-dead-letter-exchange': '',
        'x-dead-letter-routing-key': names.main,
      },
    });
    await setup.bindQueue(names.retry, `${legacy}dlx`, names.retry);
    await setup.assertQueue(names.dead, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
    await setup.bindQueue(names.dead, `${legacy}dlx`, names.dead);

    const broker = await startBroker('legacy', 'orders', legacy);
    expect(broker.isConnected()).toBe(true);
    const seen: string[] = [];
    await broker.consume(orders.CHARGES_QUEUE, async (message) => {
      const id = message.properties.messageId as string;
      seen.push(id);
      if (id === 'unprocessable') throw new UnprocessableMessageError('never');
      if (id === 'flaky' && seen.filter((s) => s === id).length === 1) throw new Error('once');
    });
    for (const id of ['flaky', 'unprocessable']) {
      setup.publish(`${legacy}payments.events`, 'internal.charge.paid', Buffer.from('{}'), {
        messageId: id,
        type: 'internal.charge.paid',
      });
    }
    await setup.waitForConfirms();
    // Failed once, back through the earlier retry path (shared dlx, then the default exchange).
    await waitFor(() => seen.filter((s) => s === 'flaky').length === 2, {
      what: 'the retried message handled',
    });
    // Parked through the queue's own dead-letter exchange.
    const parked = await waitFor(async () => setup.get(names.dead, { noAck: true }), {
      what: 'the parked message',
    });
    expect(parked && parked.properties.messageId).toBe('unprocessable');
    await admin.close();
  });
});
