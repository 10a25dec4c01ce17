import express, { type Express } from 'express';
import { requireSession } from './caller';
import { createPanelContext, type PanelDeps } from './deps';
import { mountKeyRoutes } from './key-routes';
import { mountLoginRoutes } from './login-routes';
import { mountOrderRoutes } from './order-routes';
import { mountProxyRoutes } from './proxy-routes';
import { setSecurityHeaders } from './security';
import { mountSessionRoutes } from './session-routes';
import { mountStatic } from './static';

export type { PanelConfig, PanelDeps } from './deps';

/**
 * The seller panel: `/panel/api/` (session login, API keys, and the public API's routes reached with
 * the session's identity) and the built single-page app at `/`. The panel keeps no data of its own:
 * what it shows and changes goes through the same services and contracts as an API key's calls.
 */
export function mountPanel(app: Express, deps: PanelDeps): void {
  const ctx = createPanelContext(deps);

  const api = express.Router();
  api.use((req, res, next) => {
    setSecurityHeaders(res);
    res.set('Cache-Control', 'no-store');
    next();
  });
  mountLoginRoutes(api, ctx);
  // Every route mounted after this needs a live session; every change its CSRF token too.
  api.use(requireSession(ctx));
  mountSessionRoutes(api, ctx);
  mountKeyRoutes(api, ctx);
  mountOrderRoutes(api, ctx);
  mountProxyRoutes(api, ctx);

  app.use('/panel/api', api);
  mountStatic(app, deps.config.PANEL_DIST_DIR);
}
