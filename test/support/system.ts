import http from 'node:http';
import type pino from 'pino';
import { loadGatewayConfig } from '../../services/gateway/src/config';
import { startGateway, type GatewayService } from '../../services/gateway/src/service';
import { createApiKey } from '../../services/gateway/src/db/api-keys';
import { ensureUser } from '../../services/gateway/src/db/users';
import { loadOrdersConfig } from '../../services/orders/src/config';
import { startOrders, type OrdersService } from '../../services/orders/src/service';
import { loadPaymentsConfig } from '../../services/payments/src/config';
import { startPayments, type PaymentsService } from '../../services/payments/src/service';
import { loadWithdrawalsConfig } from '../../services/withdrawals/src/config';
import { startWithdrawals, type WithdrawalsService } from '../../services/withdrawals/src/service';
import { loadDispatcherConfig } from '../../services/webhook-dispatcher/src/config';
import { startDispatcher, type DispatcherService } from '../../services/webhook-dispatcher/src/service';
import { deriveCallKey, type Resolver } from '@seller-api/service-kit';
import type { Environment, Role } from '@seller-api/contracts';
import { topology as ordersTopology } from '../../services/orders/src/events/topology';
import { topology as withdrawalsTopology } from '../../services/withdrawals/src/events/topology';
import { topology as dispatcherTopology } from '../../services/webhook-dispatcher/src/events/topology';
import { calleeUrls, internalKeyEnv } from '../../scripts/stack.cjs';
import { testEnv } from './env';
import { deleteQueues } from './queues';

/** Every queue the services consume (their topologies), to remove when a test file is done. */
export const SERVICE_QUEUES = [ordersTopology, withdrawalsTopology, dispatcherTopology].flatMap((t) =>
  t.queues.map((q) => q.name),
);

export interface Services {
  orders: string;
  payments: string;
  withdrawals: string;
  webhooks: string;
}

export interface System {
  env: NodeJS.ProcessEnv;
  services: Services;
  dispatcher: DispatcherService;
  orders: OrdersService;
  withdrawals: WithdrawalsService;
  /** Another payments replica on the same database (stopped with the system). */
  startPaymentsReplica(overrides?: Record<string, string>): Promise<PaymentsService>;
  payments: PaymentsService;
  /** Another dispatcher replica on the same database and queue (stopped with the system). */
  startDispatcherReplica(overrides?: Record<string, string>): Promise<DispatcherService>;
  stopServices(): Promise<void>;
  startGateway(
    overrides?: Record<string, string>,
    logDestination?: pino.DestinationStream,
  ): Promise<RunningGateway>;
  stop(): Promise<void>;
}

export interface RunningGateway {
  url: string;
  service: GatewayService;
}

/** Each service's own INTERNAL_KEY when a system is started with `separateKeys` (not the defaults). */
export const SEPARATE_KEYS = {
  gateway: 'test-gateway-key-0123456789abcdef0123456789',
  orders: 'test-orders-key-0123456789abcdef0123456789',
  payments: 'test-payments-key-0123456789abcdef0123456789',
  withdrawals: 'test-withdrawals-key-0123456789abcdef0123456789',
  'webhook-dispatcher': 'test-dispatcher-key-0123456789abcdef0123456789',
} as const;

/**
 * What each service is given with `separateKeys`, as a deployment gives it (docs/deploy.md, "Internal
 * keys"): its own INTERNAL_KEY, and its callers' keys derived for it (scripts/stack.cjs).
 */
function keysOf(service: keyof typeof SEPARATE_KEYS): Record<string, string> {
  return internalKeyEnv(service, SEPARATE_KEYS, deriveCallKey) as Record<string, string>;
}

/**
 * The four services behind the gateway, in this process, on free ports. All share the test
 * development keys, unless `separateKeys` gives each its own (SEPARATE_KEYS).
 */
export async function startSystem(
  overrides: Record<string, string> = {},
  logDestination?: pino.DestinationStream,
  options: {
    wrapPayments?: (url: string) => Promise<string>;
    resolve?: Resolver;
    separateKeys?: boolean;
  } = {},
): Promise<System> {
  const env = testEnv(overrides);
  const secrets = (service: keyof typeof SEPARATE_KEYS) => (options.separateKeys ? keysOf(service) : {});
  const opts = { logDestination, metrics: false };
  // Payments first: orders calls it, possibly through a proxy a test can cut.
  const payments = await startPayments(loadPaymentsConfig({ ...env, ...secrets('payments') }), opts);
  const paymentsUrl = `http://127.0.0.1:${payments.port}`;
  const ordersPaymentsUrl =
    overrides.PAYMENTS_URL ?? (await (options.wrapPayments?.(paymentsUrl) ?? paymentsUrl));
  // Withdrawals before orders: a seller's refund reserves the order's net there first.
  const [withdrawals, webhooks] = await Promise.all([
    startWithdrawals(
      loadWithdrawalsConfig({
        ...env,
        ...secrets('withdrawals'),
        ...calleeUrls('withdrawals', () => paymentsUrl),
      }),
      opts,
    ),
    startDispatcher(loadDispatcherConfig({ ...env, ...secrets('webhook-dispatcher') }), {
      ...opts,
      resolve: options.resolve,
    }),
  ]);
  const orders = await startOrders(
    loadOrdersConfig({
      ...env,
      ...secrets('orders'),
      ...calleeUrls('orders', (callee) =>
        callee === 'payments'
          ? ordersPaymentsUrl
          : (overrides.WITHDRAWALS_URL ?? `http://127.0.0.1:${withdrawals.port}`),
      ),
    }),
    opts,
  );
  const services: Services = {
    orders: `http://127.0.0.1:${orders.port}`,
    payments: paymentsUrl,
    withdrawals: `http://127.0.0.1:${withdrawals.port}`,
    webhooks: `http://127.0.0.1:${webhooks.port}`,
  };
  const gateways: GatewayService[] = [];
  let servicesStopped = false;
  const stopServices = async () => {
    if (servicesStopped) return;
    servicesStopped = true;
    await Promise.all([orders.stop(), payments.stop(), withdrawals.stop(), webhooks.stop()]);
  };
  const replicas: Array<{ stop(): Promise<void> }> = [];
  return {
    env,
    services,
    dispatcher: webhooks,
    payments,
    orders,
    withdrawals,
    async startPaymentsReplica(replicaOverrides = {}) {
      const replica = await startPayments(
        loadPaymentsConfig({ ...env, ...secrets('payments'), ...replicaOverrides }),
        opts,
      );
      replicas.push(replica);
      return replica;
    },
    async startDispatcherReplica(replicaOverrides = {}) {
      const replica = await startDispatcher(
        loadDispatcherConfig({ ...env, ...secrets('webhook-dispatcher'), ...replicaOverrides }),
        {
          ...opts,
          resolve: options.resolve,
        },
      );
      replicas.push(replica);
      return replica;
    },
    stopServices,
    async startGateway(gatewayOverrides = {}, destination = logDestination) {
      const config = loadGatewayConfig({
        ...env,
        ...secrets('gateway'),
        ...calleeUrls('gateway', (callee) =>
          callee === 'webhook-dispatcher' ? services.webhooks : services[callee as keyof Services],
        ),
        ...gatewayOverrides,
      });
      const service = await startGateway(config, { logDestination: destination, metrics: false });
      gateways.push(service);
      const address = service.server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      return { url: `http://127.0.0.1:${port}/api/v1`, service };
    },
    async stop() {
      await Promise.all(gateways.map((g) => g.stop()));
      await Promise.all(replicas.map((r) => r.stop().catch(() => undefined)));
      await stopServices();
      await deleteQueues(env.AMQP_URL as string, env.AMQP_NAMESPACE as string, SERVICE_QUEUES);
    },
  };
}

let counter = 0;
/** A fresh e-mail per call, so tests never share users. */
export function uniqueEmail(tag = 'seller'): string {
  counter += 1;
  return `${tag}-${process.pid}-${Date.now()}-${counter}@example.com`;
}

/** A user (and seller) with a new key, made the way the CLI makes them. */
export async function createKey(
  gateway: GatewayService,
  options: { email?: string; environment?: Environment; role?: Role; label?: string } = {},
): Promise<{ key: string; userId: string; sellerId: string | null; email: string }> {
  const em = gateway.runtime.orm.em.fork();
  const email = options.email ?? uniqueEmail(options.role ?? 'seller');
  const { user } = await ensureUser(gateway.runtime.sql, em, { email, role: options.role ?? 'seller' });
  const { key } = await createApiKey(
    gateway.runtime.sql,
    em,
    gateway.keyVersions,
    user.id,
    options.environment ?? 'test',
    options.label ?? null,
  );
  return { key, userId: user.id, sellerId: user.sellerId, email };
}

export async function call(
  url: string,
  options: {
    method?: string;
    key?: string;
    body?: unknown;
    rawBody?: string | Buffer;
    headers?: Record<string, string>;
  } = {},
): Promise<{ status: number; headers: Headers; body: Record<string, unknown>; text: string }> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  let body: string | Buffer | undefined;
  if (options.rawBody !== undefined) body = options.rawBody;
  else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['content-type'] ??= 'application/json';
  }
  const res = await fetch(url, { method: options.method ?? 'GET', headers, body });
  const text = await res.text();
  let parsed: Record<string, unknown>;
  try {
    parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    parsed = {};
  }
  return { status: res.status, headers: res.headers, body: parsed, text };
}

/**
 * A request with a chosen Host header (fetch does not let one set it), from 127.0.0.1; the answer's
 * status and its JSON body ({} when empty).
 */
export function requestWithHost(
  url: string,
  host: string,
  options: { method?: string; body?: string; headers?: Record<string, string> } = {},
): Promise<{ status: number; body: Record<string, unknown> }> {
  const target = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname + target.search,
        method: options.method ?? 'GET',
        headers: { ...options.headers, host },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({
            status: res.statusCode ?? 0,
            body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
          });
        });
      },
    );
    req.on('error', reject);
    req.end(options.body);
  });
}
