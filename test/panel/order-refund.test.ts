import type { Page } from 'playwright-core';
import { Balance, CreatedOrder, OrderDetail, type ChargeRefund } from '@seller-api/contracts';
import { applyChargeState } from '../../services/orders/src/db/charge-mirror';
import { standaloneOrder } from '../orders/fixtures';
import { useSystem } from '../support/use-system';
import { waitFor } from '../support/wait';
import { expectAccessible, screenshot } from './browser';
import { login, panelCall, panelUser, type PanelLogin } from './helpers';

/*
 * The order page shows where the order's refund stands at the PSP (docs/orders.md, "Refund an
 * order") and offers the refund of a PAID order, except while one is in progress.
 */

jest.setTimeout(120_000);

const t = useSystem({ browser: true });

/** An order paid in the sandbox, once its net is in the seller's available balance. */
async function paidOrder(api: PanelLogin): Promise<string> {
  const created = await panelCall(t.origin, '/panel/api/v1/sellers/orders/', api, {
    method: 'POST',
    body: standaloneOrder(),
  });
  expect(created.status).toBe(201);
  const { uuid } = CreatedOrder.parse(created.body.data);
  const paid = await panelCall(t.origin, `/panel/api/v1/sandbox/orders/${uuid}/pay/`, api, {
    method: 'POST',
  });
  expect(paid.status).toBe(200);
  const read = await panelCall(t.origin, `/panel/api/v1/sellers/orders/${uuid}/`, api);
  const { net_amount: net } = OrderDetail.parse(read.body.data).payment;
  await waitFor(
    async () => {
      const res = await panelCall(t.origin, '/panel/api/v1/finance/balance/', api);
      return Balance.parse(res.body.data).available_amount >= net;
    },
    { what: 'the sale in the available balance', timeoutMs: 30_000 },
  );
  return uuid;
}

/** Mirrors a change of the order's refund as payments reports it (a newer version, status PAID). */
async function reportRefund(uuid: string, refund: ChargeRefund): Promise<void> {
  const em = t.system.orders.runtime.orm.em.fork();
  const [row] = await em.execute<Array<{ charge_version: number }>>(
    `select charge_version from orders.orders where id = ?`,
    [uuid],
  );
  const applied = await applyChargeState(t.system.orders.runtime.sql, {
    order_uuid: uuid,
    status: 'PAID',
    previous_status: 'PAID',
    version: Number(row?.charge_version) + 1,
    paid_at: refund.requested_at,
    changed_at: refund.updated_at,
    refund,
  });
  expect(applied).toBe(true);
}

const refundButton = (page: Page) => page.getByRole('button', { name: 'Refund the order' });
/** A value of the Refund section's list, by its label. */
const refundValue = (page: Page, label: string) =>
  page.getByRole('region', { name: 'Refund' }).locator(`dt:text-is("${label}") + dd`).textContent();

it('shows a refund in progress without the refund button, a failed one with its reason, and refunds', async () => {
  const seller = await panelUser(t.gateway.service, 'seller');
  const api = await login(t.origin, seller.email, seller.password);
  const processing = await paidOrder(api);
  const other = await paidOrder(api);
  const requestedAt = new Date().toISOString();
  await reportRefund(processing, {
    status: 'PROCESSING',
    attempt: 1,
    amount: 15000,
    requested_at: requestedAt,
    updated_at: requestedAt,
    failure_reason: null,
    hold_seq: 0,
  });

  const context = await t.browser.newContext({ baseURL: t.origin, viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error') problems.push(msg.text());
  });
  page.on('pageerror', (err) => problems.push(err.message));
  await page.goto(`/#/orders/${processing}`);
  await page.getByLabel('E-mail').fill(seller.email);
  await page.getByLabel('Password').fill(seller.password);
  await page.keyboard.press('Enter');

  // In progress: the order is PAID, the refund is shown, and it cannot be asked again.
  await page.getByRole('heading', { level: 2, name: 'Refund' }).waitFor();
  await expect(refundValue(page, 'Status')).resolves.toBe('In progress at the PSP');
  await expect(refundValue(page, 'Amount')).resolves.toMatch(/150,00/);
  await page.getByText(/The PSP is making the refund/).waitFor();
  await expect(refundButton(page).count()).resolves.toBe(0);
  await screenshot(page, 'order-refund-processing');
  await expectAccessible(page, 'order refund in progress');

  // Failed at the PSP: the reason, and the refund offered again.
  await reportRefund(processing, {
    status: 'FAILED',
    attempt: 1,
    amount: 15000,
    requested_at: requestedAt,
    updated_at: new Date().toISOString(),
    failure_reason: 'Conta do pagador encerrada',
    hold_seq: 1,
  });
  await page.reload();
  await page.getByRole('heading', { level: 2, name: 'Refund' }).waitFor();
  await expect(refundValue(page, 'Status')).resolves.toBe('Not made by the PSP');
  await expect(refundValue(page, 'Reason')).resolves.toBe('Conta do pagador encerrada');
  await page.getByText(/The PSP did not make the refund/).waitFor();
  await refundButton(page).waitFor();
  await screenshot(page, 'order-refund-failed');
  await expectAccessible(page, 'order refund failed');

  // A PAID order without a refund: the refund asks for a confirmation, then is made (the sandbox).
  await page.goto(`/#/orders/${other}`);
  await refundButton(page).click();
  const confirm = page.getByRole('button', { name: /^Confirm: refund R\$\s150,00$/ });
  await page.getByRole('button', { name: 'Cancel' }).click();
  await expect(confirm.count()).resolves.toBe(0);
  await refundButton(page).click();
  await confirm.click();
  await page.getByRole('status').getByText('Order refunded.').waitFor();
  await page.locator('dt:text-is("Status") + dd').first().getByText('REFUNDED').waitFor();
  await expect(refundButton(page).count()).resolves.toBe(0);
  expect(problems).toEqual([]);
  await context.close();
});
