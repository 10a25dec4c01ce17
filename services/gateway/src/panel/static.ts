import fs from 'node:fs';
import path from 'node:path';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import { setSecurityHeaders } from './security';

/** The built app: hashed assets cached for good, index.html always revalidated. */
export function mountStatic(app: Express, distDir: string): void {
  const serve = express.static(distDir, {
    index: 'index.html',
    redirect: false,
    setHeaders: (res, filePath) => {
      setSecurityHeaders(res);
      res.setHeader(
        'Cache-Control',
        filePath.includes(`${path.sep}assets${path.sep}`)
          ? 'public, max-age=31536000, immutable'
          : 'no-cache',
      );
    },
  });
  app.use((req: Request, res: Response, next: NextFunction) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    if (req.path !== '/' && req.path !== '/index.html' && !req.path.startsWith('/assets/')) return next();
    res.locals.routeTemplate = req.path.startsWith('/assets/') ? '/assets/:file' : '/';
    if (req.path === '/' && !fs.existsSync(path.join(distDir, 'index.html'))) {
      setSecurityHeaders(res);
      res.status(503).type('text/plain').send('The panel is not built: run `npm run build`.');
      return;
    }
    serve(req, res, next);
  });
}
