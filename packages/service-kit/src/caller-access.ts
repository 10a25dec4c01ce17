import type { Role } from '@seller-api/contracts';
import type { NextFunction, Request, Response } from 'express';
import { Counter } from 'prom-client';
import { HttpError, badRequest, forbidden } from './errors';
import { LEGACY_CALLER, identityOf } from './identity';
import type { Logger } from './logger';
import type { Metrics } from './metrics';

/**
 * What each caller may call on a service (docs/deploy.md, "Internal keys"): a verified signature says
 * who called; this table says what that caller may do. Anything outside its rows is a 403, counted in
 * `internal_calls_refused_total`: a refusal means a caller was broken into, or a release calls something
 * new without its table saying so.
 */
export interface AccessRule {
  /** `METHOD /path/` with `:name` for a path parameter, as the route is mounted. */
  routes: readonly string[];
  /** The roles of the identities the caller may present on them. */
  roles: readonly Role[];
}

/** Per caller (a service's name), its rules; a caller not in the table may call nothing. */
export type AccessTable = Readonly<Record<string, readonly AccessRule[]>>;

interface CompiledRoute {
  method: string;
  pattern: RegExp;
  roles: ReadonlySet<Role>;
}

/** The route of `METHOD /path/:param/`: as express matches it, case-insensitive, a final `/` optional. */
function compileRoute(route: string, roles: readonly Role[]): CompiledRoute {
  const [method, path] = route.split(' ');
  if (!method || !path?.startsWith('/')) throw new Error(`Bad route in an access table: ${route}`);
  const body = path
    .replace(/\/$/, '')
    .split('/')
    .map((part) => (part.startsWith(':') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/');
  return { method: method.toUpperCase(), pattern: new RegExp(`^${body}/?$`, 'i'), roles: new Set(roles) };
}

/** Every route the table names (for the service's own check that each mounted route is listed). */
export function tableRoutes(table: AccessTable): string[] {
  const all = new Set<string>();
  for (const rules of Object.values(table)) for (const rule of rules) for (const r of rule.routes) all.add(r);
  return [...all].sort();
}

export interface CallerAccess {
  /** Whether `caller` may call `method path` (path without its query) presenting `role`. */
  allows(caller: string, method: string, path: string, role: Role): boolean;
  /** Throws the 403 (and counts it) unless allowed. */
  check(caller: string, method: string, path: string, role: Role): void;
}

const refusedCounters = new WeakMap<Metrics, Counter<'caller' | 'method'>>();

function refusedCounter(metrics: Metrics): Counter<'caller' | 'method'> {
  let counter = refusedCounters.get(metrics);
  if (!counter) {
    counter = new Counter({
      name: 'internal_calls_refused_total',
      help: "Signed calls refused because the caller's table row does not allow the route or the role",
      labelNames: ['caller', 'method'] as const,
      registers: [metrics.registry],
    });
    refusedCounters.set(metrics, counter);
  }
  return counter;
}

/**
 * The access check of one service. `legacy` (a caller of the previous release, accepted only while
 * the service is given INTERNAL_SECRET) may call every route as before.
 */
export function callerAccess(table: AccessTable, metrics?: Metrics, logger?: Logger): CallerAccess {
  const compiled = new Map<string, CompiledRoute[]>();
  for (const [caller, rules] of Object.entries(table))
    compiled.set(
      caller,
      rules.flatMap((rule) => rule.routes.map((route) => compileRoute(route, rule.roles))),
    );
  const everything = [...compiled.values()].flat();
  const counter = metrics ? refusedCounter(metrics) : null;
  const allows = (caller: string, method: string, path: string, role: Role) => {
    const routes = caller === LEGACY_CALLER ? everything : compiled.get(caller);
    const upper = method.toUpperCase();
    // HEAD is served by a GET route.
    const wanted = upper === 'HEAD' ? 'GET' : upper;
    return Boolean(routes?.some((r) => r.method === wanted && r.pattern.test(path) && r.roles.has(role)));
  };
  // A route no caller may call does not exist here: a 404 as express answers it, not counted (a
  // client's typo through the gateway is not a stolen key).
  const exists = (method: string, path: string) => {
    const upper = method.toUpperCase();
    const wanted = upper === 'HEAD' ? 'GET' : upper;
    return everything.some((r) => r.method === wanted && r.pattern.test(path));
  };
  return {
    allows,
    check(caller, method, path, role) {
      // Express reads a path with these differently (it cuts at `#`, turns `\` into `/`): never let
      // the table and the router disagree on which route a request is.
      if (!/^\/[^\s#\\]*$/.test(path)) throw badRequest('Invalid request path.');
      if (allows(caller, method, path, role)) return;
      if (!exists(method, path)) throw new HttpError(404, 'not_found', `Route ${method} ${path} not found.`);
      counter?.inc({ caller, method: method.toUpperCase() });
      // Never the identity: only who called what.
      logger?.warn({ caller, method, path, role }, 'internal call refused by the access table');
      throw forbidden('This caller may not call this route.');
    },
  };
}

const pathOf = (url: string) => {
  const at = url.indexOf('?');
  return at < 0 ? url : url.slice(0, at);
};

/** Express middleware after requireIdentity: the caller's row must allow the route and the role. */
export function requireCallerAccess(access: CallerAccess) {
  return (req: Request, _res: Response, next: NextFunction) => {
    try {
      access.check(req.caller ?? '', req.method, pathOf(req.originalUrl), identityOf(req).role);
      next();
    } catch (err) {
      next(err);
    }
  };
}

interface RouteLayer {
  route?: { path?: unknown; methods?: Record<string, boolean> };
}

/** The routes mounted on `app` after its first `skip` layers, as `METHOD /path/`. */
export function mountedRoutes(app: { router: { stack: unknown[] } }, skip = 0): string[] {
  const routes: string[] = [];
  for (const layer of app.router.stack.slice(skip) as RouteLayer[]) {
    const path = layer.route?.path;
    if (typeof path !== 'string') continue;
    for (const [method, on] of Object.entries(layer.route?.methods ?? {}))
      if (on) routes.push(`${method.toUpperCase()} ${path}`);
  }
  return routes;
}

/**
 * Throws at start when a route mounted behind the identity check is missing from the table: it could
 * be called by no one, or a release forgot to say who may call it. `plain` are the plain routes
 * (`METHOD /path/`): their express twins are mounted for every method and serve only theirs.
 */
export function assertTableCovers(table: AccessTable, mounted: string[], plain: string[]): void {
  const listed = new Set(tableRoutes(table));
  const plainPaths = new Set(plain.map((route) => route.slice(route.indexOf(' ') + 1)));
  const missing = [
    ...mounted.filter((route) => !plainPaths.has(route.slice(route.indexOf(' ') + 1))),
    ...plain,
  ].filter((route) => !listed.has(route));
  if (missing.length > 0) throw new Error(`Routes missing from the access table: ${missing.join(', ')}`);
}
