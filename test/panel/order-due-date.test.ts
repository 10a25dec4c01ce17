import type { Page, Route } from 'playwright-core';
import {
  AmountDueResponse,
  CreatedOrder,
  OrderDetailResponse,
  type AmountDueDetail,
  type OrderDetail,
  type OrderDueDateDetail,
} from '@seller-api/contracts';
import { standaloneOrder } from '../orders/fixtures';
import { useSystem } from '../support/use-system';
import { expectAccessible, screenshot } from './browser';
import { login, panelCall, panelUser } from './helpers';

/*
 * The order page of a due-date charge (docs/pix.md, "Due-date charges"): its dates, its rules in words,
 * "Overdue", what is owed today from GET /sellers/orders/{uuid}/amount-due/ through the panel's proxy,
 * "No longer payable", and the amount paid with its components.
 *
 * The order is a real one made through the panel; the browser's calls for its detail and its amount
 * due are answered here with what orders answers for a due-date order (checked against the contracts),
 * so the page is tested on its own, whatever the orders service of the branch serves.
 */

jest.setTimeout(120_000);

const t = useSystem({ browser: true });

// R$ 150,00 due Saturday 2025-09-06 (effective Monday 2025-09-08), paid 7 days late: base 145,00 after
// the rebate, fine 2 % = 2,90, interest 1 % a month / 30 x 7 days = 0,34 (rounded half up).
const TERMS: OrderDueDateDetail = {
  due_date: '2025-09-06',
  days_after_due: 30,
  fine: { type: 'percent', rate: 200 },
  interest: { type: 'percent_per_month', value: 100, days: 'calendar' },
  rebate: { type: 'fixed', amount: 500 },
  discount: { type: 'fixed_until', tiers: [{ until: '2025-09-01', value: 300 }] },
  calendar: { state: 'SP' },
  effective_due_date: '2025-09-08',
  last_payable_date: '2025-10-08',
  overdue: true,
};
const COMPONENTS = { original: 15000, rebate: 500, discount: 0, fine: 290, interest: 34 };
const PAYABLE: AmountDueDetail = {
  date: '2025-09-15',
  effective_due_date: '2025-09-08',
  last_payable_date: '2025-10-08',
  payable: true,
  overdue: true,
  days_late: 7,
  components: COMPONENTS,
  final: 14824,
};
const NOT_PAYABLE: AmountDueDetail = {
  ...PAYABLE,
  date: '2025-10-09',
  payable: false,
  days_late: 31,
  components: null,
  final: null,
};

const plain = (text: string | null) => (text ?? '').replace(/\s/g, ' ').trim();
/** A value of a section's list, by its label. */
const value = (page: Page, section: string, label: string) =>
  page
    .getByRole('region', { name: section })
    .locator(`dt:text-is("${label}") + dd`)
    .first()
    .textContent()
    .then(plain);

it('shows the due date, the rules, Overdue and what is owed today; no longer payable; the amount paid', async () => {
  const seller = await panelUser(t.gateway.service, 'seller');
  const api = await login(t.origin, seller.email, seller.password);
  const created = await panelCall(t.origin, '/panel/api/v1/sellers/orders/', api, {
    method: 'POST',
    body: standaloneOrder(),
  });
  expect(created.status).toBe(201);
  const { uuid } = CreatedOrder.parse(created.body.data);

  // What orders answers for this order once it is a due-date one: the real detail, with its terms.
  let detail: (o: OrderDetail) => OrderDetail = (o) => ({
    ...o,
    payment: { ...o.payment, status: 'PENDING', due_date: TERMS, amount_paid: null },
  });
  let amountDue = PAYABLE;
  const amountDueAsked: string[] = [];

  const context = await t.browser.newContext({ baseURL: t.origin, viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error') problems.push(msg.text());
  });
  page.on('pageerror', (err) => problems.push(err.message));
  await page.route(`**/panel/api/v1/sellers/orders/${uuid}/`, async (route: Route) => {
    const real = await route.fetch();
    expect(real.status()).toBe(200);
    const body = OrderDetailResponse.parse(await real.json());
    await route.fulfill({
      response: real,
      json: OrderDetailResponse.parse({ ...body, data: detail(body.data) }),
    });
  });
  await page.route(`**/panel/api/v1/sellers/orders/${uuid}/amount-due/**`, async (route: Route) => {
    amountDueAsked.push(new URL(route.request().url()).pathname);
    await route.fulfill({
      status: 200,
      json: AmountDueResponse.parse({ message: 'Amount due computed.', data: amountDue }),
    });
  });

  await page.goto(`/#/orders/${uuid}`);
  await page.getByLabel('E-mail').fill(seller.email);
  await page.getByLabel('Password').fill(seller.password);
  await page.keyboard.press('Enter');

  // PENDING and overdue: the dates, the badge, the rules, and what is owed today.
  const dueDate = page.getByRole('region', { name: 'Due date' });
  await dueDate.waitFor();
  await dueDate.getByText('Overdue', { exact: true }).waitFor();
  await expect(value(page, 'Due date', 'Due date')).resolves.toBe('2025-09-06');
  await expect(value(page, 'Due date', 'Effective due date')).resolves.toBe(
    '2025-09-08 (the due date is not a business day)',
  );
  await expect(value(page, 'Due date', 'Last payable date')).resolves.toBe('2025-10-08');
  const rules = (await page.getByRole('list', { name: 'Rules' }).getByRole('listitem').allTextContents()).map(
    plain,
  );
  expect(rules).toEqual([
    'Rebate: R$ 5,00 off the amount, whatever the day paid.',
    'Discount: R$ 3,00 when paid on or before 2025-09-01.',
    'Fine: 2%, once, when paid after the effective due date (of the amount less any rebate).',
    'Interest: 1% a month (1/30 of it for each calendar day late).',
    'Payable until 30 days after the effective due date (the next business day if that is not one).',
    'Holidays: Brazilian national holidays and those of state SP.',
  ]);
  await page.getByRole('heading', { level: 3, name: 'Owed today' }).waitFor();
  await expect(value(page, 'Due date', 'Total owed')).resolves.toBe('R$ 148,24');
  await expect(value(page, 'Due date', 'Original amount')).resolves.toBe('R$ 150,00');
  await expect(value(page, 'Due date', 'Rebate')).resolves.toBe('− R$ 5,00');
  await expect(value(page, 'Due date', 'Fine')).resolves.toBe('+ R$ 2,90');
  await expect(value(page, 'Due date', 'Interest')).resolves.toBe('+ R$ 0,34');
  await expect(value(page, 'Due date', 'Days late')).resolves.toBe('7');
  await expect(dueDate.locator('dt:text-is("Discount")').count()).resolves.toBe(0);
  // Through the panel's proxy of the public route, with no date: today in São Paulo.
  expect(amountDueAsked).toEqual([`/panel/api/v1/sellers/orders/${uuid}/amount-due/`]);
  await expect(page.getByRole('region', { name: 'Amount paid' }).count()).resolves.toBe(0);
  await screenshot(page, 'order-due-date-overdue');
  await expectAccessible(page, 'order with a due date, overdue');

  // Past the last payable date.
  amountDue = NOT_PAYABLE;
  await page.reload();
  await dueDate.getByText('No longer payable').waitFor();
  await expect(dueDate.getByText(/the last payable date was 2025-10-08/).count()).resolves.toBe(1);
  await expect(dueDate.locator('dt:text-is("Total owed")').count()).resolves.toBe(0);

  // Paid: the amount paid and what it is made of; nothing owed, not overdue.
  detail = (o) => ({
    ...o,
    payment: {
      ...o.payment,
      status: 'PAID',
      gross_amount: 14824,
      due_date: { ...TERMS, overdue: false },
      amount_paid: { amount: 14824, date: '2025-09-15', components: COMPONENTS },
    },
  });
  amountDueAsked.length = 0;
  await page.reload();
  const paid = page.getByRole('region', { name: 'Amount paid' });
  await paid.waitFor();
  await expect(value(page, 'Amount paid', 'Amount paid')).resolves.toBe('R$ 148,24');
  await expect(value(page, 'Amount paid', 'Paid on (São Paulo)')).resolves.toBe('2025-09-15');
  await expect(value(page, 'Amount paid', 'Original amount')).resolves.toBe('R$ 150,00');
  await expect(value(page, 'Amount paid', 'Rebate')).resolves.toBe('− R$ 5,00');
  await expect(value(page, 'Amount paid', 'Fine')).resolves.toBe('+ R$ 2,90');
  await expect(value(page, 'Amount paid', 'Interest')).resolves.toBe('+ R$ 0,34');
  await expect(value(page, 'Due date', 'Due date')).resolves.toBe('2025-09-06');
  await expect(dueDate.getByText('Overdue', { exact: true }).count()).resolves.toBe(0);
  await expect(page.getByRole('heading', { name: 'Owed today' }).count()).resolves.toBe(0);
  expect(amountDueAsked).toEqual([]);
  await screenshot(page, 'order-due-date-paid');
  await expectAccessible(page, 'order with a due date, paid');

  expect(problems).toEqual([]);
  await context.close();
});
