import type { Locator, Page } from 'playwright-core';
import { DeliveryList } from '@seller-api/contracts';
import { standaloneOrder } from '../orders/fixtures';
import { useSystem } from '../support/use-system';
import { waitFor } from '../support/wait';
import { expectAccessible, screenshot } from './browser';
import { login, panelCall, panelUser } from './helpers';

jest.setTimeout(120_000);

const t = useSystem({ receiver: true, browser: true });

/** Presses Tab until `target` has the focus: it is reachable by keyboard, and focused. */
async function tabTo(page: Page, target: Locator, maxTabs = 80): Promise<void> {
  await target.waitFor();
  for (let i = 0; i < maxTabs; i += 1) {
    await page.keyboard.press('Tab');
    if (await target.evaluate((el) => el === el.ownerDocument.activeElement)) return;
  }
  throw new Error(`${target.toString()} not reached in ${maxTabs} presses of Tab`);
}

it("shows an order's postback deliveries on its page and resends a dead one by keyboard", async () => {
  const seller = await panelUser(t.gateway.service, 'seller');
  const path = `/postback-${seller.userId}`;
  let failing = true;
  t.receiver.route(path, () => ({ status: failing ? 500 : 204, body: failing ? 'receiver broken' : '' }));
  const api = await login(t.origin, seller.email, seller.password);
  const created = await panelCall(t.origin, '/panel/api/v1/sellers/orders/', api, {
    method: 'POST',
    body: standaloneOrder({ postback_url: `${t.receiver.url}${path}?token=abc` }),
  });
  expect(created.status).toBe(201);
  const orderId = (created.body.data as { uuid: string }).uuid;
  // The panel's route to the order's postback deliveries: 500 to each of the 8 attempts, then dead.
  const dead = await waitFor(
    async () => {
      const res = await panelCall(
        t.origin,
        `/panel/api/v1/sellers/orders/${orderId}/postback-deliveries/?status=dead`,
        api,
      );
      return DeliveryList.parse(res.body.data).results[0] ?? null;
    },
    { what: 'the dead postback delivery', timeoutMs: 30_000 },
  );
  const hits = () => t.receiver.forEvent(dead.event_id).map((h) => h.body.delivery_attempt);
  expect(hits()).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  failing = false;

  const context = await t.browser.newContext({ baseURL: t.origin, viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error') problems.push(msg.text());
  });
  page.on('pageerror', (err) => problems.push(err.message));
  await page.goto(`/#/orders/${orderId}`);
  await page.getByLabel('E-mail').fill(seller.email);
  await page.getByLabel('Password').fill(seller.password);
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { level: 2, name: 'Postback deliveries' }).waitFor();
  const row = page.getByRole('row', { name: new RegExp(`order\\.created ${dead.event_id}`) });
  await row.waitFor();
  const cells = await row.getByRole('cell').allTextContents();
  // Status, attempts, last response, then the dates and the button.
  expect(cells.slice(0, 3)).toEqual(['dead', '8', 'HTTP 500: receiver broken']);
  await screenshot(page, 'order-postbacks');
  await expectAccessible(page, 'order postbacks');

  await tabTo(page, page.getByRole('button', { name: `Resend postback ${dead.event_id}` }));
  await page.keyboard.press('Enter');
  await page.getByText(`Postback ${dead.event_id} re-queued.`).waitFor();
  await waitFor(() => hits().length === 9 || null, { what: 'attempt 9', timeoutMs: 30_000 });
  expect(hits()).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
  await waitFor(
    async () => {
      const status = await row.getByRole('cell').first().textContent();
      if (status === 'delivered') return true;
      await page.getByRole('button', { name: 'Refresh' }).click();
      return false;
    },
    { what: 'the postback shown as delivered', intervalMs: 200, timeoutMs: 30_000 },
  );
  expect((await row.getByRole('cell').allTextContents()).slice(0, 3)).toEqual(['delivered', '9', 'HTTP 204']);
  expect(problems).toEqual([]);
  await context.close();
});
