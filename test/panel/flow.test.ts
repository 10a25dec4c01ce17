import type { BrowserContext, Locator, Page } from 'playwright-core';
import { Withdrawal } from '@seller-api/contracts';
import { standaloneOrder } from '../orders/fixtures';
import { decodeQrPng } from '../support/pix';
import { call } from '../support/system';
import { useSystem } from '../support/use-system';
import { waitFor } from '../support/wait';
import { expectAccessible, screenshot } from './browser';
import { login, panelCall, panelUser } from './helpers';

jest.setTimeout(120_000);

const t = useSystem({ receiver: true, browser: true });

/** A page that records what the browser complains about: CSP violations show up as console errors. */
async function openPage(context: BrowserContext): Promise<{ page: Page; problems: string[] }> {
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error') problems.push(msg.text());
  });
  page.on('pageerror', (err) => problems.push(err.message));
  return { page, problems };
}

/** Logs in with the keyboard alone: Tab to each field, type, Enter. */
async function loginByKeyboard(page: Page, email: string, password: string): Promise<void> {
  await page.getByRole('heading', { name: 'Log in to the seller panel' }).waitFor();
  await page.keyboard.press('Tab');
  expect(await page.evaluate('document.activeElement.labels[0].textContent')).toBe('E-mail *');
  await page.keyboard.type(email);
  await page.keyboard.press('Tab');
  await page.keyboard.type(password);
  await page.keyboard.press('Enter');
}

/** Presses Tab until `target` has the focus: it is reachable by keyboard, and focused. */
async function tabTo(page: Page, target: Locator, maxTabs = 60): Promise<void> {
  await target.waitFor();
  for (let i = 0; i < maxTabs; i += 1) {
    await page.keyboard.press('Tab');
    if (await target.evaluate((el) => el === el.ownerDocument.activeElement)) return;
  }
  throw new Error(`${target.toString()} not reached in ${maxTabs} presses of Tab`);
}

const isFocused = (target: Locator) => target.evaluate((el) => el === el.ownerDocument.activeElement);

async function nav(page: Page, name: string, heading: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name }).click();
  await page.getByRole('heading', { level: 1, name: heading }).waitFor();
}

it('takes a seller from login to a paid order, a delivered webhook and a withdrawal an operator approves', async () => {
  const seller = await panelUser(t.gateway.service, 'seller');
  const operator = await panelUser(t.gateway.service, 'operator');
  const context = await t.browser.newContext({
    baseURL: t.origin,
    viewport: { width: 1280, height: 900 },
    permissions: ['clipboard-read', 'clipboard-write'],
  });
  const { page, problems } = await openPage(context);

  // The page itself: strict CSP and the built app.
  const index = await page.goto('/');
  expect(index?.status()).toBe(200);
  const csp = (await index?.headerValue('content-security-policy')) ?? '';
  expect(csp).toContain("default-src 'self'");
  expect(csp).toContain("script-src 'self'");
  expect(csp).not.toContain('unsafe-inline');

  // Log in.
  await page.getByRole('heading', { name: 'Log in to the seller panel' }).waitFor();
  await screenshot(page, '01-login');
  await expectAccessible(page, 'login');
  await page.getByLabel('E-mail').fill(seller.email);
  await page.getByLabel('Password').fill('wrong password');
  await page.getByRole('button', { name: 'Log in' }).click();
  await expect(page.getByRole('alert').textContent()).resolves.toBe('Invalid e-mail or password.');
  // The refused login is the one request the browser may report as failed.
  expect(problems).toEqual([expect.stringContaining('401 (Unauthorized)')]);
  problems.length = 0;
  await page.reload();
  await loginByKeyboard(page, seller.email, seller.password);
  await page.getByRole('heading', { level: 1, name: 'Home' }).waitFor();
  const cookies = await context.cookies();
  expect(cookies.find((c) => c.name === 'sa_session')).toMatchObject({ httpOnly: true, sameSite: 'Strict' });

  // Settings > API keys: generate a test key, shown once with a copy button and the warning.
  await nav(page, 'Settings: API keys', 'Settings: API keys');
  await expect(page.getByRole('row', { name: /^test No active key/ }).count()).resolves.toBe(1);
  // By keyboard: Tab to the environment (test already), on to the label, then Space on the button.
  const environment = page.getByLabel('Environment', { exact: true });
  await tabTo(page, environment);
  await expect(environment.inputValue()).resolves.toBe('test');
  await page.keyboard.press('Tab');
  await expect(isFocused(page.getByLabel('Label (optional)'))).resolves.toBe(true);
  await page.keyboard.type('e2e');
  await tabTo(page, page.getByRole('button', { name: 'Generate key' }));
  await page.keyboard.press('Space');
  const keyField = page.getByLabel('New API key', { exact: true });
  await keyField.waitFor();
  const key = await keyField.inputValue();
  expect(key).toMatch(/^mk_test_[A-Za-z0-9]{40}$/);
  await expect(page.getByText(/revoked now/).count()).resolves.toBe(1);
  // The box with the key took the focus; its copy button is the next stop or two.
  await tabTo(page, page.getByRole('button', { name: 'Copy new API key' }), 3);
  await page.keyboard.press('Enter');
  await page.getByText('Copied to the clipboard.').waitFor();
  expect(await page.evaluate('navigator.clipboard.readText()')).toBe(key);
  const row = page.getByRole('row', { name: /^test e2e/ });
  await expect(row.textContent()).resolves.toContain(`${key.slice(0, 12)}…${key.slice(-4)}`);
  await screenshot(page, '02-api-keys');
  await expectAccessible(page, 'api keys');

  // The key works with a plain HTTP call.
  const created = await call(`${t.url}/sellers/orders/`, {
    method: 'POST',
    key,
    body: standaloneOrder(),
  });
  expect(created.status).toBe(201);
  const orderId = (created.body.data as { uuid: string }).uuid;

  // Orders: the list, then the detail with the QR code of the PENDING order.
  await nav(page, 'Orders', 'Orders');
  const orderLink = page.getByRole('link', { name: `Order ${orderId}` });
  await orderLink.waitFor();
  await page.getByLabel('Status', { exact: true }).selectOption('PAID');
  await page.getByRole('button', { name: 'Search', exact: true }).click();
  await page.getByText('No orders match these filters.').waitFor();
  await page.getByLabel('Status', { exact: true }).selectOption('PENDING');
  await page.getByRole('button', { name: 'Search', exact: true }).click();
  await orderLink.waitFor();
  // The live environment has its own data: the test order is not there.
  await page.getByLabel('Panel environment').selectOption('live');
  await page.getByText(/^No orders yet/).waitFor();
  await page.getByLabel('Panel environment').selectOption('test');
  await orderLink.waitFor();
  await screenshot(page, '03-orders');
  await expectAccessible(page, 'orders');
  await orderLink.click();
  const qr = page.getByRole('img', { name: `PIX QR code to pay order ${orderId}` });
  await qr.waitFor();
  expect(
    await page.evaluate(
      "document.querySelector('img.qr').complete && document.querySelector('img.qr').naturalWidth > 0",
    ),
  ).toBe(true);
  const src = (await qr.getAttribute('src')) ?? '';
  expect(src.startsWith('data:image/png;base64,')).toBe(true);
  const copyAndPaste = await page.getByLabel('PIX copy and paste code').inputValue();
  expect(decodeQrPng(src.slice('data:image/png;base64,'.length))).toBe(copyAndPaste);
  await expect(page.getByRole('heading', { name: 'Customer' }).count()).resolves.toBe(1);
  await expect(page.getByRole('heading', { name: 'Parties' }).count()).resolves.toBe(1);
  await screenshot(page, '04-order-detail');
  await expectAccessible(page, 'order detail');

  // Webhooks: register one for order.paid at the local receiver; the secret is shown once.
  // By keyboard: the URL, the event with the arrow keys, Enter on the button.
  await nav(page, 'Webhooks', 'Webhooks');
  await tabTo(page, page.getByLabel('URL'));
  await page.keyboard.type(`${t.receiver.url}/hooks/paid`);
  await page.keyboard.press('Tab');
  const event = page.getByLabel('Event', { exact: true });
  await expect(isFocused(event)).resolves.toBe(true);
  await expect(event.inputValue()).resolves.toBe('order.created');
  await page.keyboard.press('ArrowDown');
  await expect(event.inputValue()).resolves.toBe('order.paid');
  await tabTo(page, page.getByRole('button', { name: 'Register webhook' }));
  await page.keyboard.press('Enter');
  const secret = await page.getByLabel('Signing secret', { exact: true }).inputValue();
  expect(secret).toMatch(/^whsec_/);
  await page.getByRole('row', { name: /^order\.paid/ }).waitFor();
  await screenshot(page, '05-webhooks');
  await expectAccessible(page, 'webhooks');

  // Pay the order in the sandbox: order.paid reaches the receiver, and the seller has a balance.
  expect((await call(`${t.url}/sandbox/orders/${orderId}/pay/`, { method: 'POST', key })).status).toBe(200);
  const hook = await waitFor(() => t.receiver.received.find((h) => h.body.event === 'order.paid'), {
    what: 'the order.paid delivery',
    timeoutMs: 30_000,
  });
  const eventId = String(hook.headers['x-webhook-event-id']);

  // Deliveries: the attempt with its answer, the status filter, resend one, resend all dead.
  await page.getByRole('link', { name: 'Deliveries of the order.paid webhook' }).click();
  await page.getByRole('heading', { level: 1, name: 'Deliveries of order.paid' }).waitFor();
  const delivered = page.getByRole('heading', { level: 2, name: `order.paid ${eventId}: delivered` });
  await waitFor(
    async () => {
      if ((await delivered.count()) > 0) return true;
      await page.getByRole('button', { name: 'Refresh' }).click();
      return false;
    },
    { what: 'the delivery shown as delivered', intervalMs: 200, timeoutMs: 30_000 },
  );
  const attempts = page.getByRole('table', { name: `Attempts of ${eventId}` });
  await expect(attempts.getByRole('row').nth(1).textContent()).resolves.toMatch(/^1.*200/);
  await page.getByLabel('Status', { exact: true }).selectOption('dead');
  await page.getByText('No deliveries with status dead.').waitFor();
  await page.getByLabel('Status', { exact: true }).selectOption('delivered');
  await delivered.waitFor();
  // Resend by keyboard: from the status filter, Tab to the delivery's button and Enter.
  await tabTo(page, page.getByRole('button', { name: `Resend delivery ${eventId}` }));
  await page.keyboard.press('Enter');
  await page.getByText(`Delivery ${eventId} re-queued.`).waitFor();
  await waitFor(() => t.receiver.forEvent(eventId).length === 2, {
    what: 'the resent delivery',
    timeoutMs: 30_000,
  });
  await page.getByRole('button', { name: 'Resend all dead deliveries' }).click();
  await page.getByText('0 dead deliveries re-queued.').waitFor();
  await screenshot(page, '06-deliveries');
  await expectAccessible(page, 'deliveries');

  // Back on the list: pause and resume the webhook; register another and delete it.
  await page.getByRole('link', { name: 'Back to webhooks' }).click();
  await page.getByRole('heading', { level: 1, name: 'Webhooks' }).waitFor();
  await page.getByRole('button', { name: 'Disable the order.paid webhook' }).click();
  await page.getByText('Webhook for order.paid disabled.').waitFor();
  await page
    .getByRole('row', { name: /^order\.paid/ })
    .filter({ hasText: 'DISABLED' })
    .waitFor();
  await page.getByRole('button', { name: 'Enable the order.paid webhook' }).click();
  await page.getByText('Webhook for order.paid enabled.').waitFor();
  await page
    .getByRole('row', { name: /^order\.paid/ })
    .filter({ hasText: 'ACTIVE' })
    .waitFor();
  await page.getByLabel('URL').fill(`${t.receiver.url}/hooks/created`);
  await page.getByLabel('Event', { exact: true }).selectOption('order.created');
  await page.getByRole('button', { name: 'Register webhook' }).click();
  await page.getByRole('row', { name: /^order\.created/ }).waitFor();
  await page.getByRole('button', { name: 'Delete the order.created webhook' }).click();
  await page.getByRole('button', { name: 'Confirm: delete the order.created webhook' }).click();
  await page.getByText('Webhook for order.created deleted.').waitFor();
  await page.getByRole('row', { name: /^order\.created/ }).waitFor({ state: 'detached' });
  const hooks = await call(`${t.url}/config/webhooks/`, { key });
  expect((hooks.body.data as { results: { event: string; status: string }[] }).results).toEqual([
    expect.objectContaining({ event: 'order.paid', status: 'ACTIVE' }),
  ]);

  // Finance: wait for the credit, then request a withdrawal with the keyboard.
  await nav(page, 'Finance', 'Finance');
  const available = page.getByText('Available').locator('xpath=following-sibling::dd[1]');
  await waitFor(
    async () => {
      if (((await available.textContent()) ?? '').includes('144,01')) return true;
      await page.getByRole('button', { name: 'Refresh' }).click();
      return false;
    },
    { what: 'the credited balance', intervalMs: 200, timeoutMs: 30_000 },
  );
  // Each withdrawal request carries an Idempotency-Key. The answer to the first is lost on the way
  // back (the gateway did make the withdrawal): Enter again retries with the same key, and the
  // gateway replays its answer instead of making a second withdrawal.
  const withdrawalKeys: string[] = [];
  page.on('request', (r) => {
    if (r.method() === 'POST' && r.url().endsWith('/panel/api/v1/finance/withdrawals/')) {
      withdrawalKeys.push(r.headers()['idempotency-key'] ?? '');
    }
  });
  const withdrawals = '**/panel/api/v1/finance/withdrawals/';
  let lost = false;
  await page.route(withdrawals, async (route) => {
    if (route.request().method() !== 'POST' || lost) return route.fallback();
    lost = true;
    await route.fetch();
    await route.abort('connectionreset');
  });
  await page.getByLabel('Amount (R$)').focus();
  await page.keyboard.type('50,00');
  await page.keyboard.press('Tab');
  await page.keyboard.press('Tab');
  await page.keyboard.type('maria@example.com');
  await page.keyboard.press('Enter');
  await page.getByText('No answer from the server. Check the connection and try again.').waitFor();
  expect(problems).toEqual([expect.stringContaining('ERR_CONNECTION_RESET')]);
  problems.length = 0;
  const retried = page.waitForResponse(
    (r) => r.request().method() === 'POST' && r.url().endsWith('/panel/api/v1/finance/withdrawals/'),
  );
  await page.keyboard.press('Enter');
  await page.getByText('Withdrawal of R$ 50,00 requested: PENDING.').waitFor();
  expect((await retried).headers()['idempotent-replayed']).toBe('true');
  expect(withdrawalKeys).toHaveLength(2);
  expect(withdrawalKeys[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  expect(withdrawalKeys[1]).toBe(withdrawalKeys[0]);
  // A second one, with the mouse, for the operator to deny.
  await page.getByLabel('Amount (R$)').fill('20');
  await page.getByLabel('PIX key type').selectOption('random');
  await page.getByRole('textbox', { name: 'PIX key', exact: true }).fill('not-a-uuid');
  await page.getByRole('button', { name: 'Request withdrawal' }).click();
  await page.getByText('Must be a UUID.').waitFor();
  expect(problems).toEqual([expect.stringContaining('400 (Bad Request)')]);
  problems.length = 0;
  await page
    .getByRole('textbox', { name: 'PIX key', exact: true })
    .fill('123e4567-e89b-42d3-a456-426614174000');
  await page.getByRole('button', { name: 'Request withdrawal' }).click();
  await page.getByText('Withdrawal of R$ 20,00 requested: PENDING.').waitFor();
  await page
    .getByRole('row', { name: /PENDING/ })
    .nth(1)
    .waitFor();
  await screenshot(page, '07-finance');
  await expectAccessible(page, 'finance');

  // Log out; the operator logs in and approves the withdrawal from the queue.
  await page.getByRole('button', { name: 'Log out' }).click();
  await loginByKeyboard(page, operator.email, operator.password);
  await page.getByRole('heading', { level: 1, name: 'Withdrawals queue' }).waitFor();
  const approve = page.getByRole('button', {
    name: `Approve withdrawal of R$ 50,00 for ${seller.sellerName}`,
  });
  await approve.waitFor();
  await screenshot(page, '08-ops-withdrawals');
  await expectAccessible(page, 'operator withdrawals');
  await tabTo(page, approve);
  await page.keyboard.press('Space');
  await page.getByText(`Withdrawal of R$ 50,00 for ${seller.sellerName}: APPROVED.`).waitFor();
  await page
    .getByLabel(`Reason for denying the withdrawal of R$ 20,00 for ${seller.sellerName}`)
    .fill('Key not verified');
  await page.getByRole('button', { name: `Deny withdrawal of R$ 20,00 for ${seller.sellerName}` }).click();
  await page.getByText(`Withdrawal of R$ 20,00 for ${seller.sellerName}: DENIED.`).waitFor();
  // Decided: neither is in the PENDING queue any more.
  await page
    .getByRole('row', { name: new RegExp(`^${seller.sellerName} `) })
    .first()
    .waitFor({ state: 'detached' });

  const mine = await call(`${t.url}/finance/withdrawals/`, { key });
  const made = (mine.body.data as { results: unknown[] }).results.map((w) => Withdrawal.parse(w));
  // The retried request made one withdrawal; each later request (another body) had a new key.
  expect(made.filter((w) => w.amount === 5000)).toHaveLength(1);
  expect(withdrawalKeys).toHaveLength(4);
  expect(new Set(withdrawalKeys).size).toBe(3);
  const approved = made.find((w) => w.amount === 5000);
  expect(['APPROVED', 'PROCESSING', 'PAID']).toContain(approved?.status);
  expect(made.find((w) => w.amount === 2000)).toMatchObject({
    status: 'DENIED',
    deny_reason: 'Key not verified',
  });

  expect(problems).toEqual([]);
  await context.close();
});

it('resends the dead deliveries of a webhook, by keyboard: the receiver gets attempt 9', async () => {
  const seller = await panelUser(t.gateway.service, 'seller');
  const path = `/hooks/dead-${seller.userId}`;
  let failing = true;
  t.receiver.route(path, () => ({ status: failing ? 500 : 204 }));
  const api = await login(t.origin, seller.email, seller.password);
  const registered = await panelCall(t.origin, '/panel/api/v1/config/webhooks/', api, {
    method: 'POST',
    body: { url: `${t.receiver.url}${path}`, event: 'order.created' },
  });
  expect(registered.status).toBe(201);
  const webhookId = (registered.body.data as { id: string }).id;
  const order = await panelCall(t.origin, '/panel/api/v1/sellers/orders/', api, {
    method: 'POST',
    body: standaloneOrder(),
  });
  expect(order.status).toBe(201);
  // 500 to each of the 8 attempts (50 ms apart in tests): the delivery is dead.
  const deadList = `/panel/api/v1/config/webhooks/${webhookId}/deliveries/?status=dead`;
  const dead = await waitFor(
    async () => {
      const res = await panelCall(t.origin, deadList, api);
      return (res.body.data as { results: { event_id: string }[] }).results[0] ?? null;
    },
    { what: 'the dead delivery', timeoutMs: 30_000 },
  );
  const hits = () => t.receiver.forEvent(dead.event_id).map((h) => h.body.delivery_attempt);
  expect(hits()).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  failing = false;

  const context = await t.browser.newContext({ baseURL: t.origin });
  const { page, problems } = await openPage(context);
  await page.goto(`/#/webhooks/${webhookId}`);
  await loginByKeyboard(page, seller.email, seller.password);
  await page.getByRole('heading', { level: 1, name: 'Deliveries of order.created' }).waitFor();
  await page.getByRole('heading', { level: 2, name: `order.created ${dead.event_id}: dead` }).waitFor();
  await tabTo(page, page.getByRole('button', { name: 'Resend all dead deliveries' }));
  await page.keyboard.press('Enter');
  await page.getByText('1 dead deliveries re-queued.').waitFor();
  await waitFor(() => hits().length === 9 || null, { what: 'attempt 9', timeoutMs: 30_000 });
  expect(hits()).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
  const delivered = page.getByRole('heading', {
    level: 2,
    name: `order.created ${dead.event_id}: delivered`,
  });
  await waitFor(
    async () => {
      if ((await delivered.count()) > 0) return true;
      await page.getByRole('button', { name: 'Refresh' }).click();
      return false;
    },
    { what: 'the delivery shown as delivered', intervalMs: 200, timeoutMs: 30_000 },
  );
  expect(problems).toEqual([]);
  await context.close();
});

it('is usable by keyboard: skip link first, then the navigation, with the current page marked', async () => {
  const seller = await panelUser(t.gateway.service, 'seller');
  const context = await t.browser.newContext({ baseURL: t.origin });
  const { page, problems } = await openPage(context);
  await page.goto('/');
  await loginByKeyboard(page, seller.email, seller.password);
  await page.getByRole('heading', { level: 1, name: 'Home' }).waitFor();
  // After logging in, focus is on the page's content, not lost with the login form.
  expect(await page.evaluate('document.activeElement.id')).toBe('main');
  await page.reload();
  await page.getByRole('heading', { level: 1, name: 'Home' }).waitFor();
  await page.keyboard.press('Tab');
  expect(await page.evaluate('document.activeElement.textContent')).toBe('Skip to content');
  await page.keyboard.press('Enter');
  expect(await page.evaluate('document.activeElement.id')).toBe('main');
  // Walk the header and navigation with Tab to the Webhooks link and follow it with Enter.
  // From the top of a fresh page load.
  await page.reload();
  await page.getByRole('heading', { level: 1, name: 'Home' }).waitFor();
  for (let i = 0; i < 12; i += 1) {
    await page.keyboard.press('Tab');
    if ((await page.evaluate('document.activeElement.textContent')) === 'Webhooks') break;
  }
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { level: 1, name: 'Webhooks' }).waitFor();
  await expect(page.getByRole('link', { name: 'Webhooks' }).getAttribute('aria-current')).resolves.toBe(
    'page',
  );
  // Focus moved to the new page's content.
  expect(await page.evaluate('document.activeElement.id')).toBe('main');
  expect(problems).toEqual([]);
  await context.close();
});
