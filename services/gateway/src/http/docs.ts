import { buildOpenApiDocument, renderDocsHtml } from '@seller-api/contracts';
import type { Express } from 'express';

/** The OpenAPI document and its reference page, built once from the contracts; no key needed. */
export function mountDocs(app: Express): void {
  const document = buildOpenApiDocument();
  const json = JSON.stringify(document);
  const html = renderDocsHtml(document);
  app.get('/api/v1/openapi.json', (_req, res) => {
    res.type('application/json').send(json);
  });
  app.get('/api/v1/docs', (_req, res) => {
    res
      .type('html')
      .set(
        'Content-Security-Policy',
        "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; frame-ancestors 'none'",
      )
      .send(html);
  });
}
