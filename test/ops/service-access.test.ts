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
import { Broker, classicQueueNames, createLogger, queueNames, type Topology } from '@seller-api/service-kit';
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
  const out: Array<[Right, string]> = [['configure', ns('dlx')]];
  for (const e of topology.exchanges) out.push(['configure', ns(e)]);
  if (exchange) out.push(['write', ns(exchange)]);
  for (const queue of topology.queues) {
    for (const name of allQueueNames(namespace, queue.name)) {
      // declare/delete; bind; consume, get and the dead-letter check on creation
      out.push(['configure', name], ['write', name], ['read', name]);
    }
    // bind the retry and dead queues to dlx; park; create queues dead-lettering to dlx and ''
    out.push(['read', ns('dlx')], ['write', ns('dlx')], ['write', 'amq.default']);
    for (const binding of queue.bindings) out.push(['read', ns(binding.exchange)]);
  }
  return out;
}

/** What `service` must never do: publish to another's exchange, or touch another's queues. */
function forbidden(service: string, namespace: string): Array<[Right, string]> {
  const out: Array<[Right, string]> = [];
  for (const [other, { exchange, topology }] of Object.entries(TOPOLOGIES)) {
    if (other === service) continue;
    if (exchange) out.push(['write', `${namespace}${exchange}`]);
    for (const queue of topology.queues) {
      for (const name of allQueueNames(namespace, queue.name)) {
        out.push(['configure', name], ['write', name], ['read', name]);
      }
    }
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
  const env = (service: string) => compose.services[service]?.environment ?? {};

  it.each(SERVICE_ACCESS.map((a) => a))('$service connects as $role to PostgreSQL and RabbitMQ', (access) => {
    const database = new URL(env(access.service).DATABASE_URL as string);
    const broker = new URL(env(access.service).AMQP_URL as string);
    expect(database.username).toBe(access.role);
    expect(broker.username).toBe(access.role);
    // Its own password variable, and nobody else's.
    const prefix = access.service.toUpperCase().replace(/-/g, '_');
    expect(env(access.service).DATABASE_URL).toContain(`\${${prefix}_DB_PASSWORD:-`);
    expect(env(access.service).AMQP_URL).toContain(`\${${prefix}_AMQP_PASSWORD:-`);
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
 * with unique names and deleted afterwards.
 */
describe('RabbitMQ with one user per service', () => {
  const amqpUrl = process.env.AMQP_URL ?? DEFAULT_URLS.AMQP_URL;
  const run = randomBytes(4).toString('hex');
  const namespace = `test.ops.access${run}.`;
  const vhost = decodeURIComponent(new URL(amqpUrl).pathname.slice(1)) || '/';
  const users = new Map<string, { name: string; password: string }>();
  const brokers: Broker[] = [];
  const ctl = (...args: string[]) =>
    execFileSync('rabbitmqctl', ['-q', ...args], { encoding: 'utf8', timeout: 30_000 });
  const urlOf = (service: string) => {
    const user = users.get(service) as { name: string; password: string };
    const url = new URL(amqpUrl);
    url.username = user.name;
    url.password = user.password;
    return url.toString();
  };

  beforeAll(() => {
    for (const access of SERVICE_ACCESS) {
      const user = { name: `sa_test_${run}_${access.schema}`, password: randomBytes(12).toString('hex') };
      ctl('add_user', user.name, user.password);
      users.set(access.service, user);
      const p = amqpPermissions(access, namespace);
      ctl('set_permissions', '-p', vhost, user.name, p.configure, p.write, p.read);
    }
  });

  afterAll(async () => {
    await Promise.all(brokers.map((b) => b.close()));
    const connection = await amqp.connect(amqpUrl);
    const channel = await connection.createChannel();
    const queues = Object.values(TOPOLOGIES).flatMap(({ topology }) =>
      topology.queues.flatMap((q) => allQueueNames(namespace, q.name)),
    );
    await Promise.all(queues.map((q) => channel.deleteQueue(q)));
    const exchanges = new Set(Object.values(TOPOLOGIES).flatMap(({ topology }) => topology.exchanges));
    await Promise.all([...exchanges, 'dlx'].map((e) => channel.deleteExchange(`${namespace}${e}`)));
    await connection.close();
    for (const user of users.values()) ctl('delete_user', user.name);
  });

  it('starts every service broker (declarations, bindings) as its own user', async () => {
    // Payments first: it is the one that declares payments.events in production, too.
    for (const service of ['payments', 'gateway', 'orders', 'withdrawals', 'webhook-dispatcher']) {
      const broker = new Broker({
        url: urlOf(service),
        namespace,
        logger: createLogger(`access-${service}`, 'silent'),
        topology: (TOPOLOGIES[service] as ServiceTopology).topology,
        reconnectDelayMs: 60_000,
      });
      brokers.push(broker);
      await broker.start();
      expect({ service, connected: broker.isConnected() }).toEqual({ service, connected: true });
    }
  });

  /** Publishes with a confirm; answers null when confirmed, else the error that closed the channel. */
  async function publishAs(service: string, exchange: string): Promise<string | null> {
    const connection = await amqp.connect(urlOf(service));
    try {
      const channel = await connection.createConfirmChannel();
      const closed = new Promise<string>((resolve) =>
        channel.on('error', (err: Error) => resolve(err.message)),
      );
      const confirmed = new Promise<null>((resolve, reject) =>
        channel.publish(`${namespace}${exchange}`, 'payment.approved', Buffer.from('{}'), {}, (err) =>
          err ? reject(err) : resolve(null),
        ),
      ).catch(() => closed);
      return await Promise.race([confirmed, closed]);
    } finally {
      await connection.close().catch(() => undefined);
    }
  }

  it("refuses orders' user on payments.events (403 ACCESS_REFUSED), accepts it on orders.events", async () => {
    expect(await publishAs('orders', 'orders.events')).toBeNull();
    expect(await publishAs('orders', 'payments.events')).toMatch(/403.*ACCESS_REFUSED/);
    expect(await publishAs('payments', 'payments.events')).toBeNull();
  });

  it("refuses orders' user on withdrawals' ledger queue", async () => {
    const connection = await amqp.connect(urlOf('orders'));
    try {
      const channel = await connection.createChannel();
      channel.on('error', () => undefined);
      await expect(
        channel.consume(queueNames(namespace, withdrawals.LEDGER_QUEUE).main, () => undefined),
      ).rejects.toThrow(/403/);
    } finally {
      await connection.close().catch(() => undefined);
    }
  });
});
