import { randomBytes, randomUUID } from 'node:crypto';
import { OrderDetail, Withdrawal, type Role } from '@seller-api/contracts';
import {
  SERVICE_NAMES,
  callKeyOf,
  callerAccess,
  signIdentity,
  tableRoutes,
  type AccessTable,
  type CallKey,
  type Runtime,
} from '@seller-api/service-kit';
import { ORDERS_ACCESS } from '../../services/orders/src/http/callers';
import { PAYMENTS_ACCESS } from '../../services/payments/src/http/callers';
import { WITHDRAWALS_ACCESS } from '../../services/withdrawals/src/http/callers';
import { DISPATCHER_ACCESS } from '../../services/webhook-dispatcher/src/http/callers';
import { standaloneOrder } from '../orders/fixtures';
import { callKey } from '../support/keys';
import { SEPARATE_KEYS, call } from '../support/system';
import { useSystem } from '../support/use-system';
import {
  fund,
  newOperator,
  newSeller,
  readWithdrawal,
  useHarness,
  withdraw,
  type Seller,
} from '../withdrawals/helpers';

/**
 * Internal keys (docs/deploy.md, "Internal keys"): each service signs its calls with its own key, each
 * callee holds per caller the key derived for it, and each callee's table says what each caller may
 * call with which role. A verified caller outside its rows is a 403 `forbidden`, counted in
 * `internal_calls_refused_total`; a signature that does not hold is a 401.
 */
const REFUSED = 'This caller may not call this route.';
const ROLES: Role[] = ['seller', 'operator'];
const RANDOM_PIX = '7d9f2c1a-4b3e-4f6a-9c2d-1e8b5a3f6d40';

const sellerIdentity = (sellerId: string = randomUUID()) => ({
  user_id: randomUUID(),
  seller_id: sellerId,
  environment: 'test' as const,
  role: 'seller' as const,
});
const operatorIdentity = () => ({
  user_id: randomUUID(),
  seller_id: null,
  environment: 'test' as const,
  role: 'operator' as const,
});
const identityOf = (role: Role) => (role === 'operator' ? operatorIdentity() : sellerIdentity());

/** What `caller` signs with in a system started with `separateKeys` (SEPARATE_KEYS). */
const separateKey = (caller: keyof typeof SEPARATE_KEYS, callee: string): CallKey =>
  callKeyOf({ INTERNAL_KEY: SEPARATE_KEYS[caller] }, caller, callee);

/** A call signed with `key` straight to a service (`base`), as `call` sends it. */
function signedCall(
  base: string,
  key: CallKey,
  identity: ReturnType<typeof identityOf>,
  method: string,
  path: string,
  options: { body?: string; headers?: Record<string, string> } = {},
) {
  const headers: Record<string, string> = { ...options.headers };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const signed = signIdentity(key, identity, method, path, options.body ?? null, headers);
  return call(`${base}${path}`, {
    method,
    headers: { ...headers, ...signed },
    ...(options.body !== undefined ? { rawBody: options.body } : {}),
  });
}

/** `work` over `items`, at most `limit` at a time. */
async function atMost<T>(limit: number, items: readonly T[], work: (item: T) => Promise<void>) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await work(items[next++] as T);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

describe('with a key per service', () => {
  const h = useHarness({}, { separateKeys: true });
  let seller: Seller;

  beforeAll(async () => {
    seller = await newSeller(h);
    await fund(h, seller);
  });

  it("the gateway's and orders' calls work: an order is created, paid, refunded; webhooks listed", async () => {
    const own = await newSeller(h);
    // Gateway to orders, orders to payments (the charge), the sandbox payment; the ledger credits it.
    const uuid = await fund(h, own);
    await fund(h, own);
    // Orders to withdrawals (the refund's hold), then to payments (the refund).
    const refund = await call(`${h.gateway.url}/sellers/orders/${uuid}/refund/`, {
      method: 'POST',
      key: own.key,
    });
    expect(refund.status).toBe(200);
    const order = await call(`${h.gateway.url}/sellers/orders/${uuid}/`, { key: own.key });
    expect(OrderDetail.parse(order.body.data).payment.status).toBe('REFUNDED');
    // The gateway signs for the dispatcher with its key derived for it.
    const webhooks = await call(`${h.gateway.url}/config/webhooks/`, { key: own.key });
    expect(webhooks.status).toBe(200);
    // And these keys are not the development ones: a call signed with those is refused.
    const dev = await signedCall(
      h.system.services.orders,
      callKey('gateway', 'orders'),
      sellerIdentity(),
      'GET',
      '/sellers/orders/',
    );
    expect(dev.status).toBe(401);
  });

  it("an identity signed with orders' key can neither request nor approve a withdrawal", async () => {
    const withdrawal = await withdraw(h, seller.key, {
      amount: 5000,
      pix_key: RANDOM_PIX,
      pix_key_type: 'random',
    });
    expect(withdrawal.status).toBe('PENDING');
    const orders = separateKey('orders', 'withdrawals');
    const base = h.system.services.withdrawals;

    const requested = await signedCall(
      base,
      orders,
      sellerIdentity(seller.sellerId),
      'POST',
      '/finance/withdrawals/',
      {
        body: JSON.stringify({ amount: 1000, pix_key: RANDOM_PIX, pix_key_type: 'random' }),
        headers: { 'idempotency-key': randomUUID() },
      },
    );
    expect(requested.status).toBe(403);
    expect(requested.body).toMatchObject({ code: 'forbidden' });
    const approve = `/ops/withdrawals/${withdrawal.uuid}/approve/`;
    const approved = await signedCall(base, orders, operatorIdentity(), 'POST', approve, { body: '{}' });
    expect(approved.status).toBe(403);
    expect(approved.body).toMatchObject({ code: 'forbidden' });

    // Nothing changed: the withdrawal still waits, and no other was made.
    expect((await readWithdrawal(h, seller.key, withdrawal.uuid)).status).toBe('PENDING');
    const list = await call(`${h.gateway.url}/finance/withdrawals/`, { key: seller.key });
    const results = (list.body.data as { results: unknown[] }).results.map((w) => Withdrawal.parse(w));
    expect(results.map((w) => w.uuid)).toEqual([withdrawal.uuid]);
    // Orders' key does verify there (its refund holds): the refusal is its table row, not its signature.
    const hold = await signedCall(
      base,
      orders,
      sellerIdentity(seller.sellerId),
      'POST',
      `/internal/refund-holds/${randomUUID()}/`,
      {
        body: '{}',
      },
    );
    expect([401, 403]).not.toContain(hold.status);
    // The same approval through the gateway, by an operator, goes through.
    const operator = await newOperator(h);
    const decided = await call(`${h.gateway.url}/ops/withdrawals/${withdrawal.uuid}/approve/`, {
      method: 'POST',
      key: operator,
    });
    expect(decided.status).toBe(200);
    expect(decided.body.data).toMatchObject({ uuid: withdrawal.uuid, status: 'APPROVED' });
  });

  it('a call captured with one Idempotency-Key is refused with another (401)', async () => {
    const gateway = separateKey('gateway', 'withdrawals');
    const body = JSON.stringify({ amount: 1000, pix_key: RANDOM_PIX, pix_key_type: 'random' });
    const identity = sellerIdentity(seller.sellerId);
    const keyA = randomUUID();
    const headers: Record<string, string> = { 'content-type': 'application/json', 'idempotency-key': keyA };
    const captured = {
      ...headers,
      ...signIdentity(gateway, identity, 'POST', '/finance/withdrawals/', body, headers),
    };
    const url = `${h.system.services.withdrawals}/finance/withdrawals/`;
    for (const replayed of [
      { ...captured, 'idempotency-key': randomUUID() },
      // Dropped, and added alongside.
      Object.fromEntries(Object.entries(captured).filter(([name]) => name !== 'idempotency-key')),
      { ...captured, 'x-idempotency-route': 'POST /finance/withdrawals/' },
    ]) {
      const res = await call(url, { method: 'POST', headers: replayed, rawBody: body });
      expect(res.status).toBe(401);
      expect(res.body).toMatchObject({ code: 'unauthorized' });
    }
    // As captured, it is accepted: the key alone made the difference.
    const original = await call(url, { method: 'POST', headers: captured, rawBody: body });
    expect(original.status).toBe(201);
    const made = Withdrawal.parse(original.body.data);
    expect((await readWithdrawal(h, seller.key, made.uuid)).amount).toBe(1000);

    // The same on orders' plain route (plain-route.ts checks the signature on its own path).
    const orders = separateKey('gateway', 'orders');
    const order = JSON.stringify(standaloneOrder());
    const orderHeaders: Record<string, string> = {
      'content-type': 'application/json',
      'idempotency-key': randomUUID(),
    };
    const signedOrder = {
      ...orderHeaders,
      ...signIdentity(orders, identity, 'POST', '/sellers/orders/', order, orderHeaders),
    };
    const ordersUrl = `${h.system.services.orders}/sellers/orders/`;
    const replayed = await call(ordersUrl, {
      method: 'POST',
      headers: { ...signedOrder, 'idempotency-key': randomUUID() },
      rawBody: order,
    });
    expect(replayed.status).toBe(401);
    expect(replayed.body).toMatchObject({ code: 'unauthorized' });
    expect((await call(ordersUrl, { method: 'POST', headers: signedOrder, rawBody: order })).status).toBe(
      201,
    );
  });

  it('a caller whose key the callee was not given is refused (401) by every service', async () => {
    const { services } = h.system;
    const reads: Array<[string, string, string]> = [
      ['orders', services.orders, '/sellers/orders/'],
      ['payments', services.payments, `/internal/charges/${randomUUID()}/`],
      ['withdrawals', services.withdrawals, '/finance/balance/'],
      ['webhook-dispatcher', services.webhooks, '/config/webhooks/'],
    ];
    const randomKey = () => randomBytes(32).toString('base64url');
    for (const [callee, base, path] of reads) {
      const identity = sellerIdentity(seller.sellerId);
      for (const key of [
        // A key of its own for the gateway, which no callee was given.
        callKeyOf({ INTERNAL_KEY: randomKey() }, 'gateway', callee),
        // A caller no callee knows.
        callKeyOf({ INTERNAL_KEY: randomKey() }, 'intruder', callee),
        // The gateway's key derived for another callee.
        separateKey('gateway', callee === 'orders' ? 'payments' : 'orders'),
      ]) {
        const res = await signedCall(base, key, identity, 'GET', path);
        expect({ callee, caller: key.caller, status: res.status, code: res.body.code }).toEqual({
          callee,
          caller: key.caller,
          status: 401,
          code: 'unauthorized',
        });
      }
      // The gateway's own key for it passes the signature check (a 404 for an unknown charge at most).
      const own = await signedCall(base, separateKey('gateway', callee), identity, 'GET', path);
      expect({ callee, status: own.status }).toEqual({ callee, status: callee === 'payments' ? 404 : 200 });
    }
  });
});

describe('every caller outside its table rows (generated from the tables)', () => {
  // The development keys: every service's key is known to every callee, so a refusal is the table's.
  const t = useSystem({ gateway: false });

  const TABLES: Record<string, AccessTable> = {
    orders: ORDERS_ACCESS,
    payments: PAYMENTS_ACCESS,
    withdrawals: WITHDRAWALS_ACCESS,
    'webhook-dispatcher': DISPATCHER_ACCESS,
  };

  const refusedCounts = async (runtime: Runtime): Promise<Map<string, number>> => {
    const metric = runtime.metrics.registry.getSingleMetric('internal_calls_refused_total');
    const counts = new Map<string, number>();
    if (!metric) return counts;
    for (const { labels, value } of (await metric.get()).values)
      counts.set(`${String(labels.caller)} ${String(labels.method)}`, value);
    return counts;
  };

  it('answers 403 forbidden to each, counts each, and lets each allowed one through', async () => {
    const services = {
      orders: { url: t.system.services.orders, runtime: t.system.orders.runtime },
      payments: { url: t.system.services.payments, runtime: t.system.payments.runtime },
      withdrawals: { url: t.system.services.withdrawals, runtime: t.system.withdrawals.runtime },
      'webhook-dispatcher': { url: t.system.services.webhooks, runtime: t.system.dispatcher.runtime },
    };
    interface Case {
      service: keyof typeof services;
      caller: string;
      route: string;
      method: string;
      path: string;
      role: Role;
      allowed: boolean;
    }
    const cases: Case[] = [];
    for (const [service, table] of Object.entries(TABLES) as Array<[keyof typeof services, AccessTable]>) {
      const access = callerAccess(table);
      for (const caller of SERVICE_NAMES)
        for (const route of tableRoutes(table)) {
          const [method, template] = route.split(' ') as [string, string];
          const path = template.replace(/:[a-z_]+/g, () => randomUUID());
          for (const role of ROLES)
            cases.push({
              service,
              caller,
              route,
              method,
              path,
              role,
              allowed: access.allows(caller, method, path, role),
            });
        }
    }
    const refusals = cases.filter((c) => !c.allowed);
    // Every table refuses someone something (at least every caller the operator role on a seller route).
    for (const service of Object.keys(TABLES)) expect(refusals.some((c) => c.service === service)).toBe(true);

    const before = new Map(
      await Promise.all(
        Object.entries(services).map(async ([name, s]) => [name, await refusedCounts(s.runtime)] as const),
      ),
    );
    const wrong: unknown[] = [];
    await atMost(8, cases, async (c) => {
      const hasBody = c.method === 'POST' || c.method === 'PATCH';
      const res = await signedCall(
        services[c.service].url,
        callKey(c.caller, c.service),
        identityOf(c.role),
        c.method,
        c.path,
        {
          ...(hasBody ? { body: '{}' } : {}),
        },
      );
      const refusedByTable =
        res.status === 403 && res.body.code === 'forbidden' && res.body.message === REFUSED;
      // Refused: exactly the table's 403. Allowed: past the signature and the table (the handler may
      // still answer 400 or 404 for a made-up id or an empty body).
      const ok = c.allowed ? res.status !== 401 && !refusedByTable : refusedByTable;
      if (!ok) wrong.push({ ...c, status: res.status, body: res.body });
    });
    expect(wrong).toEqual([]);

    // Each refusal counted once, by caller and method, at the service that refused it.
    for (const [name, s] of Object.entries(services)) {
      const expected = new Map<string, number>();
      for (const c of refusals.filter((r) => r.service === name)) {
        const label = `${c.caller} ${c.method}`;
        expected.set(label, (expected.get(label) ?? 0) + 1);
      }
      const after = await refusedCounts(s.runtime);
      const was = before.get(name) ?? new Map<string, number>();
      const counted = new Map(
        [...after]
          .map(([label, value]) => [label, value - (was.get(label) ?? 0)])
          .filter(([, d]) => d !== 0) as Array<[string, number]>,
      );
      expect({ service: name, counted: Object.fromEntries(counted) }).toEqual({
        service: name,
        counted: Object.fromEntries(expected),
      });
    }
  });
});
