import type http from 'node:http';
import type { Express, RequestHandler } from 'express';
import { createHttpApp, finishHttpApp, jsonParser } from './http';
import { requireIdentity, type VerifyingSecrets } from './identity';
import { withPlainRoutes, type PlainRoute } from './plain-route';
import type { Runtime } from './runtime';

export interface ServeOptions {
  port: number;
  /** Omit to serve no `/metrics` (tests running several instances in one process). */
  metricsPort?: number;
  /** What incoming identities are verified with (identity.ts verifyingSecrets). */
  internalSecret: VerifyingSecrets;
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
  app.use(requireIdentity(options.internalSecret));
  app.use(jsonParser());
  const plain = options.mount(app) ?? [];
  finishHttpApp(app, runtime.logger);
  const listener = plain.length
    ? withPlainRoutes(app, plain, {
        secret: options.internalSecret,
        metrics: runtime.metrics,
        logger: runtime.logger,
      })
    : app;
  const { server } = await runtime.serve(listener, options.port, options.metricsPort);
  runtime.logger.info({ port: options.port }, `${runtime.service} listening`);
  return { app, server };
}
