import type { AddressInfo } from 'node:net';
import express from 'express';
import {
  assertTableCovers,
  callerAccess,
  mountedRoutes,
  tableRoutes,
  type AccessTable,
} from './caller-access';
import { HttpError } from './errors';
import { LEGACY_CALLER } from './identity';
import { createMetrics } from './metrics';

/**
 * A service's table of callers (caller-access.ts): a verified caller may call only the routes of its
 * rows, presenting only their roles; anything else is a 403 `forbidden`, counted.
 */
const TABLE: AccessTable = {
  gateway: [
    {
      roles: ['seller'],
      routes: [
        'GET /finance/withdrawals/',
        'GET /finance/withdrawals/:uuid/',
        'POST /finance/withdrawals/',
        'PATCH /config/webhooks/:id/',
        'GET /files/a.b/',
      ],
    },
    {
      roles: ['operator'],
      routes: ['GET /ops/withdrawals/:uuid/', 'POST /ops/withdrawals/:uuid/approve/'],
    },
  ],
  orders: [
    {
      roles: ['seller'],
      routes: ['POST /internal/refund-holds/:uuid/', 'POST /internal/charges/:uuid/:action/'],
    },
  ],
};
const access = callerAccess(TABLE);
const UUID = '5f0c7c1e-8a1b-4c2d-9e3f-0a1b2c3d4e5f';

describe('callerAccess.allows', () => {
  it("allows a caller its rows' routes with their roles, and nothing else", () => {
    expect(access.allows('gateway', 'GET', `/finance/withdrawals/${UUID}/`, 'seller')).toBe(true);
    expect(access.allows('gateway', 'POST', '/finance/withdrawals/', 'seller')).toBe(true);
    expect(access.allows('gateway', 'POST', `/ops/withdrawals/${UUID}/approve/`, 'operator')).toBe(true);
    expect(access.allows('orders', 'POST', `/internal/refund-holds/${UUID}/`, 'seller')).toBe(true);
    expect(access.allows('orders', 'POST', `/internal/charges/${UUID}/refund/`, 'seller')).toBe(true);
    // Another caller's route: orders may not request or approve a withdrawal, nor the gateway hold one.
    expect(access.allows('orders', 'POST', '/finance/withdrawals/', 'seller')).toBe(false);
    expect(access.allows('orders', 'POST', `/ops/withdrawals/${UUID}/approve/`, 'operator')).toBe(false);
    expect(access.allows('gateway', 'POST', `/internal/refund-holds/${UUID}/`, 'seller')).toBe(false);
    // A route in no row at all.
    expect(access.allows('gateway', 'GET', '/finance/balance/', 'seller')).toBe(false);
  });

  it('requires a role the row allows on that route', () => {
    expect(access.allows('gateway', 'POST', `/ops/withdrawals/${UUID}/approve/`, 'seller')).toBe(false);
    expect(access.allows('gateway', 'GET', '/finance/withdrawals/', 'operator')).toBe(false);
    expect(access.allows('orders', 'POST', `/internal/refund-holds/${UUID}/`, 'operator')).toBe(false);
  });

  it('requires the method of the route; HEAD is served by a GET route', () => {
    expect(access.allows('gateway', 'DELETE', '/finance/withdrawals/', 'seller')).toBe(false);
    expect(access.allows('gateway', 'PUT', `/finance/withdrawals/${UUID}/`, 'seller')).toBe(false);
    expect(access.allows('gateway', 'GET', `/config/webhooks/${UUID}/`, 'seller')).toBe(false);
    expect(access.allows('gateway', 'patch', `/config/webhooks/${UUID}/`, 'seller')).toBe(true);
    expect(access.allows('gateway', 'HEAD', '/finance/withdrawals/', 'seller')).toBe(true);
    expect(access.allows('gateway', 'head', `/ops/withdrawals/${UUID}/`, 'operator')).toBe(true);
    // HEAD is not POST.
    expect(access.allows('gateway', 'HEAD', `/ops/withdrawals/${UUID}/approve/`, 'operator')).toBe(false);
    expect(access.allows('gateway', 'OPTIONS', '/finance/withdrawals/', 'seller')).toBe(false);
  });

  it('matches a path as express does: any case, a final slash optional, a parameter one segment', () => {
    expect(access.allows('gateway', 'GET', '/FINANCE/Withdrawals/', 'seller')).toBe(true);
    expect(access.allows('gateway', 'GET', '/finance/withdrawals', 'seller')).toBe(true);
    expect(access.allows('gateway', 'GET', `/finance/withdrawals/${UUID}`, 'seller')).toBe(true);
    // A parameter never spans a slash: this is no route of the gateway's row.
    expect(access.allows('gateway', 'GET', `/finance/withdrawals/${UUID}/x/`, 'seller')).toBe(false);
    expect(access.allows('gateway', 'GET', '/finance/withdrawals/a/b/', 'seller')).toBe(false);
    expect(access.allows('gateway', 'GET', '/finance/withdrawals//', 'seller')).toBe(false);
    expect(access.allows('gateway', 'GET', '/finance/withdrawals/a//', 'seller')).toBe(false);
    expect(access.allows('orders', 'POST', `/internal/refund-holds/${UUID}/release/`, 'seller')).toBe(false);
    expect(access.allows('orders', 'POST', `/internal/charges/${UUID}/`, 'seller')).toBe(false);
    // Nor does the path match by prefix or suffix, nor a route's dot as any character.
    expect(access.allows('gateway', 'GET', '/finance/withdrawals/extra/more/', 'seller')).toBe(false);
    expect(access.allows('gateway', 'GET', '/api/finance/withdrawals/', 'seller')).toBe(false);
    expect(access.allows('gateway', 'GET', '/files/a.b/', 'seller')).toBe(true);
    expect(access.allows('gateway', 'GET', '/files/axb/', 'seller')).toBe(false);
  });

  it("agrees with express's routing on every path tried", async () => {
    // Every route of the table mounted on express; a path is allowed exactly when express routes it.
    const table: AccessTable = { gateway: [{ roles: ['seller'], routes: tableRoutes(TABLE) }] };
    const one = callerAccess(table);
    const app = express();
    for (const route of tableRoutes(TABLE)) {
      const [method, path] = route.split(' ') as [string, string];
      app[method.toLowerCase() as 'get' | 'post' | 'patch'](path, (_req, res) => {
        res.setHeader('x-route', route);
        res.status(200).end();
      });
    }
    app.use((_req, res) => {
      res.status(404).end();
    });
    const server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    const { port } = server.address() as AddressInfo;
    const paths = [
      '/finance/withdrawals/',
      '/finance/withdrawals',
      '/FINANCE/WITHDRAWALS/',
      `/finance/withdrawals/${UUID}/`,
      `/Finance/Withdrawals/${UUID}`,
      `/finance/withdrawals/${UUID}/x/`,
      '/finance/withdrawals//',
      '/finance/withdrawals/a//',
      '/finance/withdrawals/a%2Fb/',
      '/finance/withdrawals/a%20b/',
      '/finance//withdrawals/',
      `/ops/withdrawals/${UUID}/approve/`,
      `/ops/withdrawals/${UUID}/approve`,
      `/ops/withdrawals/${UUID}/APPROVE/`,
      `/ops/withdrawals/a/b/approve/`,
      `/internal/charges/${UUID}/refund/`,
      `/internal/charges/${UUID}/refund/x/`,
      '/files/a.b/',
      '/files/a.b',
      '/files/axb/',
    ];
    try {
      for (const path of paths)
        for (const method of ['GET', 'HEAD', 'POST', 'PATCH']) {
          const res = await fetch(`http://127.0.0.1:${port}${path}`, { method });
          const routed = res.status === 200;
          expect({ method, path, allowed: one.allows('gateway', method, path, 'seller') }).toEqual({
            method,
            path,
            allowed: routed,
          });
        }
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('refuses a caller not in the table, and lets legacy call every route of it, with any role its rows name', () => {
    for (const caller of ['payments', 'webhook-dispatcher', '', 'Gateway', 'constructor', '__proto__'])
      expect(access.allows(caller, 'GET', '/finance/withdrawals/', 'seller')).toBe(false);
    expect(access.allows(LEGACY_CALLER, 'GET', '/finance/withdrawals/', 'seller')).toBe(true);
    expect(access.allows(LEGACY_CALLER, 'POST', `/ops/withdrawals/${UUID}/approve/`, 'operator')).toBe(true);
    expect(access.allows(LEGACY_CALLER, 'POST', `/internal/refund-holds/${UUID}/`, 'seller')).toBe(true);
    // Still only the table's routes and each route's own roles, as the previous release served them.
    expect(access.allows(LEGACY_CALLER, 'GET', '/finance/balance/', 'seller')).toBe(false);
    expect(access.allows(LEGACY_CALLER, 'POST', `/ops/withdrawals/${UUID}/approve/`, 'seller')).toBe(false);
    // A table that names no caller lets no one, legacy included, call anything.
    expect(callerAccess({}).allows(LEGACY_CALLER, 'GET', '/finance/withdrawals/', 'seller')).toBe(false);
  });

  it('refuses a table with a malformed route when it is built', () => {
    expect(() => callerAccess({ gateway: [{ roles: ['seller'], routes: ['/no/method/'] }] })).toThrow(
      /Bad route in an access table: \/no\/method\//,
    );
    expect(() => callerAccess({ gateway: [{ roles: ['seller'], routes: ['GET no-slash/'] }] })).toThrow(
      /Bad route/,
    );
  });
});

describe('callerAccess.check', () => {
  const refused = async (metrics: ReturnType<typeof createMetrics>) =>
    metrics.registry.getSingleMetricAsString('internal_calls_refused_total');

  it('throws the 403 forbidden and counts it by caller and method; an allowed call is not counted', async () => {
    const metrics = createMetrics('withdrawals');
    const checked = callerAccess(TABLE, metrics);
    expect(() => checked.check('gateway', 'GET', '/finance/withdrawals/', 'seller')).not.toThrow();
    expect(await refused(metrics)).not.toMatch(/^internal_calls_refused_total\{/m);

    let error: unknown;
    try {
      checked.check('orders', 'post', `/ops/withdrawals/${UUID}/approve/`, 'operator');
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(HttpError);
    expect(error).toMatchObject({ status: 403, code: 'forbidden' });
    expect(() => checked.check('orders', 'POST', '/finance/withdrawals/', 'seller')).toThrow(HttpError);
    expect(() => checked.check('gateway', 'GET', '/finance/withdrawals/', 'operator')).toThrow(HttpError);
    expect(() => checked.check('payments', 'HEAD', '/finance/withdrawals/', 'seller')).toThrow(HttpError);

    const text = await refused(metrics);
    expect(text).toContain(
      'internal_calls_refused_total{caller="orders",method="POST",service="withdrawals"} 2',
    );
    expect(text).toContain(
      'internal_calls_refused_total{caller="gateway",method="GET",service="withdrawals"} 1',
    );
    expect(text).toContain(
      'internal_calls_refused_total{caller="payments",method="HEAD",service="withdrawals"} 1',
    );
  });

  it("shares one counter among a service's checks, and none between services", async () => {
    const metrics = createMetrics('payments');
    const first = callerAccess(TABLE, metrics);
    // A second check on the same registry (plain routes and express share it) does not register twice.
    const second = callerAccess(
      { gateway: [{ roles: ['seller'], routes: ['GET /x/'] }], orders: [] },
      metrics,
    );
    expect(() => first.check('orders', 'GET', '/finance/withdrawals/', 'seller')).toThrow(HttpError);
    expect(() => second.check('orders', 'GET', '/x/', 'seller')).toThrow(HttpError);
    expect(await refused(metrics)).toContain(
      'internal_calls_refused_total{caller="orders",method="GET",service="payments"} 2',
    );
    const elsewhere = createMetrics('orders');
    callerAccess(TABLE, elsewhere);
    expect(await refused(elsewhere)).not.toMatch(/^internal_calls_refused_total\{/m);
  });

  it('answers 404, uncounted, for a route no caller may call, and 400 for a path express reads otherwise', async () => {
    const metrics = createMetrics('withdrawals');
    const access = callerAccess(TABLE, metrics);
    const error = (path: string, method = 'GET') => {
      try {
        access.check('gateway', method, path, 'seller');
      } catch (err) {
        return err as HttpError;
      }
      return null;
    };
    // A client's typo through the gateway is not a stolen key: no 403, no count.
    expect(error('/finance/nope/')?.status).toBe(404);
    expect(error('/finance/withdrawals/', 'DELETE')?.status).toBe(404);
    expect(await refused(metrics)).not.toMatch(/^internal_calls_refused_total\{/m);
    for (const path of [
      '/finance/withdrawals/x#/',
      '/finance/withdrawals/a\\b/',
      '/finance/withdrawals/a b/',
      'x',
    ])
      expect({ path, status: error(path)?.status }).toEqual({ path, status: 400 });
    expect(error('/finance/withdrawals/')).toBeNull();
  });

  it('never logs the identity: only who called what', () => {
    const warnings: unknown[][] = [];
    const logger = { warn: (...args: unknown[]) => warnings.push(args) };
    const checked = callerAccess(TABLE, undefined, logger as never);
    expect(() => checked.check('orders', 'GET', '/finance/withdrawals/', 'seller')).toThrow(HttpError);
    expect(warnings).toEqual([
      [
        { caller: 'orders', method: 'GET', path: '/finance/withdrawals/', role: 'seller' },
        'internal call refused by the access table',
      ],
    ]);
  });
});

describe('assertTableCovers', () => {
  it('throws at start naming every mounted route the table misses', () => {
    const app = express();
    const noop: express.RequestHandler = (_req, res) => {
      res.end();
    };
    app.use(noop);
    const guarded = app.router.stack.length;
    app.get('/finance/withdrawals/', noop);
    app.post('/finance/withdrawals/', noop);
    app.get('/finance/balance/', noop);
    app.delete('/config/webhooks/:id/', noop);
    const mounted = mountedRoutes(app, guarded);
    expect(mounted).toEqual([
      'GET /finance/withdrawals/',
      'POST /finance/withdrawals/',
      'GET /finance/balance/',
      'DELETE /config/webhooks/:id/',
    ]);
    expect(() => assertTableCovers(TABLE, mounted, [])).toThrow(
      'Routes missing from the access table: GET /finance/balance/, DELETE /config/webhooks/:id/',
    );
    // The same route under another method is another route.
    expect(() => assertTableCovers(TABLE, ['DELETE /finance/withdrawals/'], [])).toThrow(
      /DELETE \/finance\/withdrawals\//,
    );
    expect(() =>
      assertTableCovers(TABLE, ['GET /finance/withdrawals/', 'POST /internal/refund-holds/:uuid/'], []),
    ).not.toThrow();
  });

  it('accepts a plain route listed in the table, whose express twin is mounted for every method', () => {
    const app = express();
    const guarded = app.router.stack.length;
    app.all('/finance/withdrawals/', (_req, res) => {
      res.end();
    });
    app.get('/finance/withdrawals/:uuid/', (_req, res) => {
      res.end();
    });
    const mounted = mountedRoutes(app, guarded);
    expect(() => assertTableCovers(TABLE, mounted, ['POST /finance/withdrawals/'])).not.toThrow();
    // A plain route the table does not list is named, though express's twin is not.
    expect(() => assertTableCovers(TABLE, mounted, ['PUT /finance/withdrawals/'])).toThrow(
      'Routes missing from the access table: PUT /finance/withdrawals/',
    );
  });

  it('lists every route the table names once', () => {
    const routes = tableRoutes({
      gateway: [
        { roles: ['seller'], routes: ['GET /a/', 'POST /b/'] },
        { roles: ['operator'], routes: ['GET /a/'] },
      ],
      orders: [{ roles: ['seller'], routes: ['POST /b/', 'GET /c/:id/'] }],
    });
    expect(routes).toEqual(['GET /a/', 'GET /c/:id/', 'POST /b/']);
  });
});
