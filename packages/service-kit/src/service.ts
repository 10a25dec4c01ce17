import type http from 'node:http';
import type { Express, RequestHandler } from 'express';
import { createHttpApp, finishHttpApp, jsonParser } from './http';
import {
  assertTableCovers,
  callerAccess,
  mountedRoutes,
  requireCallerAccess,
  type AccessTable,
} from './caller-access';
import { requireIdentity, type CallerKeys } from './identity';
import { withPlainRoutes, type PlainRoute } from './plain-route';
import type { Runtime } from './runtime';

export interface ServeOptions {
  port: number;
  /** Omit to serve no `/metrics` (tests running several instances in one process). */
  metricsPort?: number;
  /** What incoming calls are verified with (internal-keys.ts callerKeysOf). */
  callerKeys: CallerKeys;
  /** What each caller may call (caller-access.ts); every mounted route must be in it. */
  access: AccessTable;
  /**
   * Mounts the service's routes; every one of them sits behind the gateway's signed identity. The
   * hottest may also be returned, to be served on plain node:http first (plain-route.ts).
   */
  mount(app: Express): PlainRoute[] | void;
  /**
   * Routes that authenticate themselves (a PSP's notifications), mounted before the identity check.
   * They parse their own bodies with `json`, after their own check, as the other routes do after the
   * identity check: a caller without credentials learns nothing from how its body is read.
   */
  mountPublic?(app: Express, json: RequestHandler): void;
}

/** The HTTP side of a service behind the gateway: health, identity check, its routes, errors. */
export async function serveService(
  runtime: Runtime,
  options: ServeOptions,
): Promise<{ app: Express; server: http.Server }> {
  // The body is parsed after the identity check: without the gateway's identity a request is a 401,
  // whatever its body (as on the plain routes).
  const app = createHttpApp({ logger: runtime.logger, metrics: runtime.metrics, parseJson: false });
  runtime.mountHealth(app);
  options.mountPublic?.(app, jsonParser());
  const access = callerAccess(options.access, runtime.metrics, runtime.logger);
  const guarded = app.router.stack.length;
  app.use(requireIdentity(options.callerKeys));
  app.use(requireCallerAccess(access));
  app.use(jsonParser());
  const plain = options.mount(app) ?? [];
  assertTableCovers(
    options.access,
    mountedRoutes(app, guarded),
    plain.map((route) => `${route.method} ${route.path}`),
  );
  finishHttpApp(app, runtime.logger);
  const listener = plain.length
    ? withPlainRoutes(app, plain, {
        keys: options.callerKeys,
        access,
        metrics: runtime.metrics,
        logger: runtime.logger,
      })
    : app;
  const { server } = await runtime.serve(listener, options.port, options.metricsPort);
  runtime.logger.info({ port: options.port }, `${runtime.service} listening`);
  return { app, server };
}
