import type http from 'node:http';
import type { Express } from 'express';
import { createHttpApp, finishHttpApp } from './http';
import { requireIdentity } from './identity';
import type { Runtime } from './runtime';

export interface ServeOptions {
  port: number;
  /** Omit to serve no `/metrics` (tests running several instances in one process). */
  metricsPort?: number;
  internalSecret: string;
  /** Mounts the service's routes; every one of them sits behind the gateway's signed identity. */
  mount(app: Express): void;
  /** Routes that authenticate themselves (a PSP's notifications), mounted before the identity check. */
  mountPublic?(app: Express): void;
}

/** The HTTP side of a service behind the gateway: health, identity check, its routes, errors. */
export async function serveService(
  runtime: Runtime,
  options: ServeOptions,
): Promise<{ app: Express; server: http.Server }> {
  const app = createHttpApp({ logger: runtime.logger, metrics: runtime.metrics });
  runtime.mountHealth(app);
  options.mountPublic?.(app);
  app.use(requireIdentity(options.internalSecret));
  options.mount(app);
  finishHttpApp(app, runtime.logger);
  const { server } = await runtime.serve(app, options.port, options.metricsPort);
  runtime.logger.info({ port: options.port }, `${runtime.service} listening`);
  return { app, server };
}
