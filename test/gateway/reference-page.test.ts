import { screenshot } from '../panel/browser';
import { useSystem } from '../support/use-system';

// The reference page in a real browser: Swagger UI must draw every operation and webhook of the OpenAPI document
// under the page's Content-Security-Policy, with nothing fetched from anywhere but the gateway.
jest.setTimeout(120_000);

const t = useSystem({ browser: true });

/** In the page: each block's method and path (a webhook's name), as `POST /sellers/orders/`. */
const RENDERED_OPERATIONS = `[...document.querySelectorAll('.opblock')].map((block) => {
  const method = block.querySelector('.opblock-summary-method')?.textContent ?? '';
  const path = block.querySelector('.opblock-summary-path')?.getAttribute('data-path') ?? '';
  return method.trim().toUpperCase() + ' ' + path;
})`;

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'];

describe('the API reference page in Chromium', () => {
  it('renders every operation of the document, with no CSP violation and no request off this origin', async () => {
    const origin = new URL(t.gateway.url).origin;
    const spec = (await (await fetch(`${t.gateway.url}/openapi.json`)).json()) as {
      paths: Record<string, Record<string, unknown>>;
      webhooks?: Record<string, Record<string, unknown>>;
    };
    // The routes, and the webhooks (OpenAPI 3.1), which Swagger UI draws the same way under their names.
    const operations = [...Object.entries(spec.paths), ...Object.entries(spec.webhooks ?? {})].flatMap(
      ([path, item]) =>
        Object.keys(item)
          .filter((method) => METHODS.includes(method))
          .map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(operations.length).toBeGreaterThan(20);

    const page = await t.browser.newPage();
    const requests: string[] = [];
    const problems: string[] = [];
    page.on('request', (request) => requests.push(request.url()));
    page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
    page.on('console', (message) => {
      if (/content security policy/i.test(message.text())) problems.push(`console: ${message.text()}`);
    });
    // Added through the DevTools protocol, so the page's own policy does not stop it. The browser-side
    // code is text: this project's types have no DOM.
    await page.addInitScript(`
      window.cspViolations = [];
      document.addEventListener('securitypolicyviolation', (e) => {
        window.cspViolations.push(e.violatedDirective + ' ' + e.blockedURI);
      });
    `);
    try {
      const res = await page.goto(`${origin}/api/v1/docs`);
      expect(res?.status()).toBe(200);
      // Swagger UI draws one block per operation, with its method and its path.
      await page.waitForFunction(`document.querySelectorAll('.opblock').length >= ${operations.length}`);
      const rendered = await page.evaluate<string[]>(RENDERED_OPERATIONS);
      expect([...rendered].sort()).toEqual([...operations].sort());

      // Try it out, without a key: the request goes to this deployment and its answer is drawn.
      const list = page
        .locator('.opblock-get')
        .filter({ has: page.locator('.opblock-summary-path[data-path="/sellers/orders/"]') });
      await list.locator('.opblock-summary-control').click();
      await list.locator('.try-out__btn').click();
      await list.locator('.execute').click();
      await list.locator('.live-responses-table tr.response .response-col_status').first().waitFor();
      expect(
        await list.locator('.live-responses-table tr.response .response-col_status').first().textContent(),
      ).toContain('401');
      expect(requests.filter((url) => url.startsWith(`${origin}/api/v1/sellers/orders/`))).toHaveLength(1);
      await screenshot(page, 'reference-page');

      const violations = await page.evaluate<string[]>('window.cspViolations');
      expect([...violations, ...problems]).toEqual([]);
      expect(requests).toContain(`${origin}/api/v1/openapi.json`);
      // Swagger UI's icons are data: URLs inside its stylesheet; everything else comes from the gateway.
      expect(requests.filter((url) => !url.startsWith(`${origin}/`) && !url.startsWith('data:'))).toEqual([]);
    } finally {
      await page.close();
    }
  });
});
