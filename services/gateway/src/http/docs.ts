import { readFileSync } from 'node:fs';
import path from 'node:path';
import { buildOpenApiDocument } from '@seller-api/contracts';
import type { Express } from 'express';

const BASE = '/api/v1';
/** The reference page's own files live under this path; the public API passes it to express (api.ts). */
export const DOCS_ASSETS = `${BASE}/docs/assets/`;

// Swagger UI from the npm package, served from this origin: the page loads nothing from elsewhere.
const SWAGGER_UI_DIR = path.dirname(require.resolve('swagger-ui-dist/package.json'));
const SWAGGER_UI_VERSION = (
  JSON.parse(readFileSync(path.join(SWAGGER_UI_DIR, 'package.json'), 'utf8')) as { version: string }
).version;
// The version is in the path, so an upgrade changes the URL and the files can be cached for a year.
const ASSETS = `${DOCS_ASSETS}${SWAGGER_UI_VERSION}`;
const YEAR_MS = 365 * 24 * 60 * 60 * 1000;

/**
 * Starts Swagger UI on the document. A file of its own, not an inline script, so the page's
 * Content-Security-Policy allows scripts from this origin only. Try-it-out sends requests to this
 * deployment (the document's server is `/api/v1`); the filter box searches by tag.
 */
const INIT_SCRIPT = `window.addEventListener('DOMContentLoaded', function () {
  window.ui = SwaggerUIBundle({
    url: ${JSON.stringify(`${BASE}/openapi.json`)},
    dom_id: '#reference',
    deepLinking: true,
    filter: true,
    displayRequestDuration: true,
    validatorUrl: null,
  });
});
`;

const PAGE = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Seller API reference</title>
<link rel="stylesheet" href="${ASSETS}/swagger-ui.css">
</head>
<body>
<noscript>This page needs JavaScript. The same reference is at <a href="${BASE}/openapi.json">${BASE}/openapi.json</a>.</noscript>
<div id="reference"></div>
<script src="${ASSETS}/swagger-ui-bundle.js"></script>
<script src="${DOCS_ASSETS}init.js"></script>
</body>
</html>
`;

/**
 * Scripts and styles from this origin only, nothing inline: Swagger UI 5 styles what it renders through
 * the DOM (which the policy does not govern), not with style attributes or elements, as the browser test
 * shows. Images are its inline data: icons.
 */
const PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** The OpenAPI document and its reference page, built once from the contracts; no key needed. */
export function mountDocs(app: Express): void {
  const json = JSON.stringify(buildOpenApiDocument());
  app.get(`${BASE}/openapi.json`, (_req, res) => {
    res.type('application/json').send(json);
  });
  app.get(`${BASE}/docs`, (_req, res) => {
    res.type('html').set('Content-Security-Policy', PAGE_CSP).set('Cache-Control', 'no-cache').send(PAGE);
  });
  for (const file of ['swagger-ui-bundle.js', 'swagger-ui.css']) {
    app.get(`${ASSETS}/${file}`, (_req, res, next) => {
      res.sendFile(path.join(SWAGGER_UI_DIR, file), { maxAge: YEAR_MS, immutable: true }, (err) => {
        if (err) next(err);
      });
    });
  }
  // Not under the versioned path: it changes with this code, not with Swagger UI.
  app.get(`${DOCS_ASSETS}init.js`, (_req, res) => {
    res.type('application/javascript').set('Cache-Control', 'no-cache').send(INIT_SCRIPT);
  });
}
