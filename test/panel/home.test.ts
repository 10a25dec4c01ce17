import { randomUUID } from 'node:crypto';
import type { BrowserContext, Page } from 'playwright-core';
import { isValidCpf } from '@seller-api/contracts';
import { CNPJ, customer, standaloneOrder } from '../orders/fixtures';
import { useSystem } from '../support/use-system';
import { waitFor } from '../support/wait';
import { expectAccessible, screenshot } from './browser';
import { login, panelCall, panelUser } from './helpers';

jest.setTimeout(240_000);

// The paging test makes a few hundred panel calls in a minute.
const t = useSystem({ env: { RATE_LIMIT_PER_MINUTE: '5000' }, receiver: true, browser: true });

type Session = Awaited<ReturnType<typeof login>>;

/** Money as the panel writes it (pt-BR), with the non-breaking space made plain. */
const brl = (cents: number) =>
  new Intl.NumberFormat('pt-BR', { style: 'currency', currency: 'BRL' })
    .format(cents / 100)
    .replace(/\s/g, ' ');
const plain = (text: string | null) => (text ?? '').replace(/\s/g, ' ').trim();

async function seller() {
  const user = await panelUser(t.gateway.service, 'seller');
  const api = await login(t.origin, user.email, user.password);
  expect(api.status).toBe(200);
  return { user, api };
}

async function createOrder(api: Session, body: unknown): Promise<string> {
  const res = await panelCall(t.origin, '/panel/api/v1/sellers/orders/', api, { method: 'POST', body });
  expect(res.status).toBe(201);
  return (res.body.data as { uuid: string }).uuid;
}

async function pay(api: Session, uuid: string): Promise<void> {
  const res = await panelCall(t.origin, `/panel/api/v1/sandbox/orders/${uuid}/pay/`, api, { method: 'POST' });
  expect(res.status).toBe(200);
}

async function registerWebhook(api: Session, event: string, path: string): Promise<string> {
  const res = await panelCall(t.origin, '/panel/api/v1/config/webhooks/', api, {
    method: 'POST',
    body: { url: `${t.receiver.url}${path}`, event },
  });
  expect(res.status).toBe(201);
  return (res.body.data as { id: string }).id;
}

async function availableBalance(api: Session): Promise<number> {
  const res = await panelCall(t.origin, '/panel/api/v1/finance/balance/', api);
  return (res.body.data as { available_amount: number }).available_amount;
}

async function requestWithdrawal(api: Session, amount: number): Promise<void> {
  const res = await panelCall(t.origin, '/panel/api/v1/finance/withdrawals/', api, {
    method: 'POST',
    headers: { 'idempotency-key': randomUUID() },
    body: { amount, pix_key: 'maria@example.com', pix_key_type: 'email' },
  });
  expect(res.status).toBe(201);
}

async function openPage(context: BrowserContext): Promise<{ page: Page; problems: string[] }> {
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error') problems.push(msg.text());
  });
  page.on('pageerror', (err) => problems.push(err.message));
  return { page, problems };
}

async function logIn(page: Page, email: string, password: string, path = '/'): Promise<void> {
  await page.goto(path);
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Log in' }).click();
}

const figure = (page: Page, name: string) => page.locator(`[data-figure="${name}"]`);

/** The page is no wider than the window: nothing scrolls sideways but the tables' own boxes. */
const pageOverflow = (page: Page) =>
  page.evaluate(
    'document.documentElement.scrollWidth - document.documentElement.clientWidth',
  ) as Promise<number>;

it('shows on Home the figures of the orders created and paid, webhook health and withdrawals under way', async () => {
  const { user, api } = await seller();
  const deadPath = `/hooks/home-dead-${user.userId}`;
  t.receiver.route(deadPath, () => ({ status: 500 }));
  const deadHook = await registerWebhook(api, 'order.created', deadPath);
  const paidHook = await registerWebhook(api, 'order.paid', `/hooks/home-paid-${user.userId}`);

  const amounts = [15000, 2500, 4000];
  const orders: string[] = [];
  for (const gross of amounts)
    orders.push(await createOrder(api, standaloneOrder({ payment: { gross_amount: gross } })));
  await pay(api, orders[0]!);
  await pay(api, orders[2]!);
  // What the orders themselves say they cost and leave: the Home figures must match.
  let fees = 0;
  let net = 0;
  for (const uuid of [orders[0]!, orders[2]!]) {
    const detail = await panelCall(t.origin, `/panel/api/v1/sellers/orders/${uuid}/`, api);
    const payment = (detail.body.data as { payment: { fee_amount: number; net_amount: number } }).payment;
    fees += payment.fee_amount;
    net += payment.net_amount;
  }
  expect(fees).toBeGreaterThan(0);

  // Three order.created deliveries die (8 answers of 500); two order.paid ones are delivered.
  let health: unknown = null;
  await waitFor(
    async () => {
      const res = await panelCall(t.origin, '/panel/api/v1/config/webhooks/health/', api);
      health = res.body;
      const hooks = (res.body.data as { webhooks: { webhook_id: string; dead: number; delivered: number }[] })
        .webhooks;
      const dead = hooks.find((w) => w.webhook_id === deadHook)?.dead;
      const delivered = hooks.find((w) => w.webhook_id === paidHook)?.delivered;
      if (dead === 3 && delivered === 2) return true;
      throw new Error(JSON.stringify(health));
    },
    { what: 'three dead and two delivered deliveries', timeoutMs: 90_000 },
  );
  await waitFor(async () => (await availableBalance(api)) >= 1000, { what: 'the credit', timeoutMs: 90_000 });
  await requestWithdrawal(api, 1000);

  const context = await t.browser.newContext({
    baseURL: t.origin,
    viewport: { width: 1280, height: 900 },
    timezoneId: 'America/Sao_Paulo',
  });
  const { page, problems } = await openPage(context);
  const summaries: string[] = [];
  page.on('request', (r) => {
    if (r.url().includes('/sellers/orders/summary/')) summaries.push(r.url());
  });
  await logIn(page, user.email, user.password);
  await page.getByRole('heading', { level: 1, name: 'Home' }).waitFor();
  await expect(
    page
      .getByRole('navigation', { name: 'Main' })
      .getByRole('link', { name: 'Home' })
      .getAttribute('aria-current'),
  ).resolves.toBe('page');

  // Last 7 days, by day, in the browser's time zone.
  await figure(page, 'orders_created').filter({ hasText: '3' }).waitFor();
  const week = new URL(summaries[summaries.length - 1]!);
  expect(week.searchParams.get('granularity')).toBe('day');
  expect(week.searchParams.get('time_zone')).toBe('America/Sao_Paulo');
  await expect(figure(page, 'orders_paid').textContent()).resolves.toBe('2');
  expect(plain(await figure(page, 'amount_paid').textContent())).toBe(brl(19000));
  expect(plain(await figure(page, 'fees').textContent())).toBe(brl(fees));
  expect(plain(await figure(page, 'net').textContent())).toBe(brl(net));
  await expect(figure(page, 'outcome_paid').textContent()).resolves.toBe('2');
  await expect(figure(page, 'outcome_expired').textContent()).resolves.toBe('0');
  await page.getByText('The figures of each day as a table').click();
  await expect(page.getByRole('table', { name: 'Figures per day' }).getByRole('row').count()).resolves.toBe(
    8,
  );
  await expect(page.getByRole('img', { name: /Amount paid per day/ }).count()).resolves.toBe(1);
  await screenshot(page, 'home-1280');
  await expectAccessible(page, 'home');

  // Today, by hour: the same orders, and the choice is kept in the URL.
  // A click, then the state: the page may re-render the radios under the first click.
  const todayRadio = page.getByRole('radio', { name: 'Today' });
  await waitFor(
    async () => {
      if (!(await todayRadio.isChecked())) await todayRadio.click();
      return (await todayRadio.isChecked()) || null;
    },
    { what: 'Today chosen' },
  );
  await page.getByText('The figures of each hour as a table').waitFor();
  // The same path (no move of focus to the page's top), the period in the hash's query.
  expect(page.url()).toMatch(/#\/(home)?\?period=today$/);
  const today = new URL(summaries[summaries.length - 1]!);
  expect(today.searchParams.get('granularity')).toBe('hour');
  await expect(figure(page, 'orders_created').textContent()).resolves.toBe('3');
  expect(plain(await figure(page, 'amount_paid').textContent())).toBe(brl(19000));
  await page.reload();
  await expect(page.getByRole('radio', { name: 'Today' }).isChecked()).resolves.toBe(true);
  await page.getByText('The figures of each hour as a table').click();
  const hours = await page.getByRole('table', { name: 'Figures per hour' }).getByRole('row').count();
  expect(hours).toBe(25);
  await screenshot(page, 'home-today-1280');

  // Webhook health: the dead count links to that webhook's dead deliveries.
  const healthRow = page.getByRole('row', { name: /^order\.created/ });
  await expect(healthRow.getByRole('cell').nth(0).textContent()).resolves.toBe('0');
  await page.getByRole('link', { name: '3 dead deliveries of the order.created webhook' }).click();
  await page.getByRole('heading', { level: 1, name: 'Deliveries of order.created' }).waitFor();
  expect(page.url()).toContain(`#/webhooks/${deadHook}?status=dead`);
  await expect(page.getByLabel('Status', { exact: true }).inputValue()).resolves.toBe('dead');
  await expect(page.getByRole('heading', { level: 2, name: /: dead$/ }).count()).resolves.toBe(3);
  await page.goBack();
  await page.getByRole('heading', { level: 1, name: 'Home' }).waitFor();

  // The withdrawal under way, and the way to Finance.
  await page.getByRole('table', { name: 'Withdrawals under way, newest first' }).waitFor();
  const withdrawal = page.getByRole('row', { name: /PENDING/ });
  expect(plain(await withdrawal.textContent())).toContain(brl(1000));
  expect(
    plain(
      await page
        .getByText('In withdrawals under way', { exact: true })
        .locator('xpath=following-sibling::dd[1]')
        .textContent(),
    ),
  ).toBe(brl(1000));
  await page.getByRole('link', { name: 'Withdrawals in Finance' }).click();
  await page.getByRole('heading', { level: 1, name: 'Finance' }).waitFor();
  expect(problems).toEqual([]);
  await context.close();
});

it('searches orders by e-mail, tax id and uuid, and pages orders, deliveries and withdrawals both ways', async () => {
  const { user, api } = await seller();
  const hook = await registerWebhook(api, 'order.created', `/hooks/paging-${user.userId}`);
  const otherCpf = '111.444.777-35';
  expect(isValidCpf(otherCpf.replace(/\D/g, ''))).toBe(true);
  const email = `ana.${user.userId.slice(0, 8)}@example.com`;
  const byEmail = await createOrder(api, standaloneOrder({ customer: customer({ email }) }));
  const byCpf = await createOrder(
    api,
    standaloneOrder({ customer: customer({ tax_id: otherCpf, email: 'b@example.com' }) }),
  );
  const byCnpj = await createOrder(
    api,
    standaloneOrder({ customer: customer({ tax_id: CNPJ, tax_id_type: 'CNPJ', email: 'c@example.com' }) }),
  );
  // 22 in all: a first page of 20 and a second of 2.
  const rest: string[] = [];
  for (let i = 0; i < 19; i += 1) rest.push(await createOrder(api, standaloneOrder()));
  await pay(api, rest[0]!);
  await waitFor(async () => (await availableBalance(api)) >= 2100, { what: 'the credit', timeoutMs: 90_000 });
  for (let i = 0; i < 21; i += 1) await requestWithdrawal(api, 100);
  await waitFor(
    async () => {
      const res = await panelCall(
        t.origin,
        `/panel/api/v1/config/webhooks/${hook}/deliveries/?status=delivered&limit=100`,
        api,
      );
      return (res.body.data as { results: unknown[] }).results.length >= 22;
    },
    { what: '22 delivered deliveries', timeoutMs: 90_000 },
  );

  const context = await t.browser.newContext({ baseURL: t.origin, viewport: { width: 1280, height: 900 } });
  const { page, problems } = await openPage(context);
  await logIn(page, user.email, user.password, '/#/orders');
  await page.getByRole('heading', { level: 1, name: 'Orders' }).waitFor();
  const orderRows = page.getByRole('table', { name: 'Orders, newest first' }).locator('tbody tr');
  const firstOrder = () => orderRows.first().getByRole('link').getAttribute('aria-label');

  // Search: an e-mail typed in another case, a CPF with punctuation, a CNPJ as digits, a uuid.
  const search = async (text: string) => {
    await page.getByRole('searchbox', { name: 'Search' }).fill(text);
    await page.getByRole('button', { name: 'Search', exact: true }).click();
  };
  await search(email.toUpperCase());
  await page.getByRole('link', { name: `Order ${byEmail}` }).waitFor();
  await expect(orderRows.count()).resolves.toBe(1);
  await search(otherCpf);
  await page.getByRole('link', { name: `Order ${byCpf}` }).waitFor();
  await expect(orderRows.count()).resolves.toBe(1);
  await search(CNPJ.replace(/\D/g, ''));
  await page.getByRole('link', { name: `Order ${byCnpj}` }).waitFor();
  await expect(orderRows.count()).resolves.toBe(1);
  await search('not an order');
  await page.getByText('Search by order id, customer e-mail, or CPF/CNPJ').first().waitFor();
  await search(byEmail);
  await page.getByRole('heading', { level: 1, name: `Order ${byEmail}` }).waitFor();
  await page.getByRole('link', { name: 'Back to orders' }).click();
  await page.getByRole('heading', { level: 1, name: 'Orders' }).waitFor();
  await expect(page.getByRole('searchbox', { name: 'Search' }).inputValue()).resolves.toBe('');

  // Paging: Next, a reload that keeps page 2, then Previous back to the same first page.
  await expect(orderRows.count()).resolves.toBe(20);
  const top = await firstOrder();
  await page.getByRole('button', { name: 'Next page' }).click();
  await page.getByText('Page 2').waitFor();
  await waitFor(async () => (await orderRows.count()) === 2, { what: 'the second page of orders' });
  await page.reload();
  await page.getByText('Page 2').waitFor();
  await waitFor(async () => (await orderRows.count()) === 2, { what: 'page 2 after a reload' });
  await expect(page.getByRole('button', { name: 'Next page' }).count()).resolves.toBe(0);
  await page.getByRole('button', { name: 'Previous page' }).click();
  await page.getByText('Page 1').waitFor();
  await waitFor(async () => (await orderRows.count()) === 20, { what: 'the first page again' });
  await expect(firstOrder()).resolves.toBe(top);
  await expect(page.getByRole('button', { name: 'Previous page' }).count()).resolves.toBe(0);
  // With a status filter, paging goes over the filtered list.
  await page.getByLabel('Status', { exact: true }).selectOption('PAID');
  await page.getByRole('button', { name: 'Search', exact: true }).click();
  // The link may be on the page before the filtered list replaces it: wait for the list itself.
  await waitFor(async () => (await orderRows.count()) === 1, { what: 'the filtered list' });
  await page.getByRole('link', { name: `Order ${rest[0]}` }).waitFor();

  // Deliveries of the webhook: 22, so 20 then 2.
  await page.goto(`/#/webhooks/${hook}`);
  await page.getByRole('heading', { level: 1, name: 'Deliveries of order.created' }).waitFor();
  const deliveries = page.getByRole('main').getByRole('heading', { level: 2 });
  await waitFor(async () => (await deliveries.count()) === 20, { what: 'the first page of deliveries' });
  const firstDelivery = await deliveries.first().textContent();
  await page.getByRole('button', { name: 'Next page' }).click();
  await waitFor(async () => (await deliveries.count()) === 2, { what: 'the second page of deliveries' });
  await page.getByRole('button', { name: 'Previous page' }).click();
  await waitFor(async () => (await deliveries.count()) === 20, {
    what: 'the first page of deliveries again',
  });
  await expect(deliveries.first().textContent()).resolves.toBe(firstDelivery);

  // Withdrawals in Finance: 21, so 20 then 1.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Finance' }).click();
  await page.getByRole('heading', { level: 1, name: 'Finance' }).waitFor();
  const withdrawals = page.getByRole('table', { name: 'Withdrawals, newest first' }).locator('tbody tr');
  await waitFor(async () => (await withdrawals.count()) === 20, { what: 'the first page of withdrawals' });
  const firstWithdrawal = await withdrawals.first().textContent();
  await page.getByRole('button', { name: 'Next page' }).click();
  await waitFor(async () => (await withdrawals.count()) === 1, { what: 'the second page of withdrawals' });
  await page.getByRole('button', { name: 'Previous page' }).click();
  await waitFor(async () => (await withdrawals.count()) === 20, {
    what: 'the first page of withdrawals again',
  });
  await expect(withdrawals.first().textContent()).resolves.toBe(firstWithdrawal);
  // Back undoes the last move: to page 2.
  await page.goBack();
  await waitFor(async () => (await withdrawals.count()) === 1, { what: 'page 2 after Back' });
  expect(problems).toEqual([]);
  await context.close();
});

it('fits a 360 px phone and a 1280 px desktop: Home, Orders and an order, with no serious axe finding', async () => {
  const { user, api } = await seller();
  const hook = await registerWebhook(api, 'order.paid', `/hooks/layout-${user.userId}`);
  const uuid = await createOrder(api, standaloneOrder());
  await createOrder(
    api,
    standaloneOrder({ customer: customer({ email: 'joao.pereira.da.silva.longo@example.com' }) }),
  );
  await pay(api, uuid);
  const pending = await createOrder(api, standaloneOrder({ payment: { gross_amount: 990 } }));
  // The deliveries page shows what was there when it loaded: wait for the delivery first.
  await waitFor(
    async () => {
      const res = await panelCall(
        t.origin,
        `/panel/api/v1/config/webhooks/${hook}/deliveries/?status=delivered`,
        api,
      );
      return (res.body.data as { results: unknown[] }).results.length === 1;
    },
    { what: 'the order.paid delivery', timeoutMs: 90_000 },
  );

  for (const width of [360, 1280]) {
    const context = await t.browser.newContext({ baseURL: t.origin, viewport: { width, height: 800 } });
    const { page, problems } = await openPage(context);
    await logIn(page, user.email, user.password);
    await page.getByRole('heading', { level: 1, name: 'Home' }).waitFor();
    await figure(page, 'orders_created').filter({ hasText: '3' }).waitFor();
    await page.getByRole('row', { name: /^order\.paid/ }).waitFor();
    const menu = page.getByRole('button', { name: 'Menu' });
    const ordersLink = page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Orders' });
    if (width === 360) {
      // The navigation is folded behind the Menu button.
      await expect(ordersLink.isVisible()).resolves.toBe(false);
      await expect(menu.getAttribute('aria-expanded')).resolves.toBe('false');
      await menu.click();
      await expect(menu.getAttribute('aria-expanded')).resolves.toBe('true');
      await expect(ordersLink.isVisible()).resolves.toBe(true);
      await menu.click();
    } else {
      await expect(menu.isVisible()).resolves.toBe(false);
    }
    await screenshot(page, `home-${width}`);
    if (width === 360) expect(await pageOverflow(page)).toBeLessThanOrEqual(0);
    await expectAccessible(page, `home at ${width}px`);

    await page.goto('/#/orders');
    await page.getByRole('link', { name: `Order ${pending}` }).waitFor();
    // Dates in the browser's time zone, with UTC on hover.
    const created = page.getByRole('table', { name: 'Orders, newest first' }).locator('time').first();
    await expect(created.getAttribute('title')).resolves.toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC$/);
    await screenshot(page, `orders-${width}`);
    if (width === 360) expect(await pageOverflow(page)).toBeLessThanOrEqual(0);
    await expectAccessible(page, `orders at ${width}px`);

    await page.getByRole('link', { name: `Order ${pending}` }).click();
    await page.getByRole('img', { name: `PIX QR code to pay order ${pending}` }).waitFor();
    await screenshot(page, `order-detail-${width}`);
    if (width === 360) expect(await pageOverflow(page)).toBeLessThanOrEqual(0);
    await expectAccessible(page, `order detail at ${width}px`);

    if (width === 360) {
      // The other pages fit the phone too.
      const others: [string, string, () => Promise<void>][] = [
        ['webhooks', 'Webhooks', () => page.getByRole('row', { name: /^order\.paid/ }).waitFor()],
        ['deliveries', 'Deliveries of order.paid', () => page.getByText(/: delivered$/).waitFor()],
        ['finance', 'Finance', () => page.getByText('Available', { exact: true }).waitFor()],
        ['settings', 'Settings: API keys', () => page.getByRole('row', { name: /^live/ }).waitFor()],
      ];
      for (const [route, heading, loaded] of others) {
        await page.goto(route === 'deliveries' ? `/#/webhooks/${hook}` : `/#/${route}`);
        await page.getByRole('heading', { level: 1, name: heading }).waitFor();
        await loaded();
        await screenshot(page, `${route}-360`);
        expect({ route, overflow: await pageOverflow(page) }).toEqual({ route, overflow: 0 });
        await expectAccessible(page, `${route} at 360px`);
      }
    }
    expect(problems).toEqual([]);
    await context.close();
  }
});
