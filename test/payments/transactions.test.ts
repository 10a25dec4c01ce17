import { randomUUID } from 'node:crypto';
import {
  ReconciliationChargesResponse,
  type Environment,
  type Identity,
  type ReconciliationCharge,
} from '@seller-api/contracts';
import { signIdentity } from '@seller-api/service-kit';
import { callKey } from '../support/keys';
import { pspNotificationHeaders } from '../../services/payments/src/http/psp-senders';
import { loadPaymentsConfig } from '../../services/payments/src/config';
import { startPayments, type PaymentsService } from '../../services/payments/src/service';
import { testEnv } from '../support/env';
import { call } from '../support/system';

// As withdrawals' reconciliation and orders call payments.
const RECONCILER = callKey('withdrawals', 'payments');
const ORDERS_KEY = callKey('orders', 'payments');

/**
 * `GET /internal/transactions/`: the paid charges the ledger's reconciliation reads, across sellers, for
 * an operator identity of one environment. Charges are made and moved through payments' own internal
 * routes, as orders calls them.
 */
const PATH = '/internal/transactions/';
let payments: PaymentsService;
let url: string;

beforeAll(async () => {
  payments = await startPayments(loadPaymentsConfig(testEnv()), { metrics: false });
  url = `http://127.0.0.1:${payments.port}`;
});
afterAll(() => payments?.stop());

const operator = (environment: Environment = 'test'): Identity => ({
  user_id: randomUUID(),
  seller_id: null,
  environment,
  role: 'operator',
});
const seller = (environment: Environment = 'test'): Identity => ({
  user_id: randomUUID(),
  seller_id: randomUUID(),
  environment,
  role: 'seller',
  seller_name: 'Loja Exemplo',
});

function list(query: Record<string, string>, identity: Identity | null = operator()) {
  const path = `${PATH}?${new URLSearchParams(query)}`;
  return call(`${url}${path}`, {
    // Signed over the path with its query, as sent.
    headers: identity ? signIdentity(RECONCILER, identity, 'GET', path) : {},
  });
}

/** A charge of `owner`, moved by the internal actions (sandbox-pay, refund, sandbox-med, ...). */
async function charge(owner: Identity, actions: string[], gross = 15000): Promise<string> {
  return (await created(owner, actions, gross)).orderId;
}

async function created(owner: Identity, actions: string[], gross: number) {
  const orderId = randomUUID();
  const body = {
    order_uuid: orderId,
    gross_amount: gross,
    expires_at: new Date(Date.now() + 3600_000).toISOString(),
    seller_name: 'Loja Exemplo',
    debtor_name: null,
    debtor_document: null,
  };
  const created = await call(`${url}/internal/charges/`, {
    method: 'POST',
    // Signed over the bytes `call` sends.
    headers: signIdentity(ORDERS_KEY, owner, 'POST', '/internal/charges/', JSON.stringify(body)),
    body,
  });
  expect(created.status).toBe(201);
  for (const action of actions) {
    const path = `/internal/charges/${orderId}/${action}/`;
    const res = await call(`${url}${path}`, {
      method: 'POST',
      headers: signIdentity(ORDERS_KEY, owner, 'POST', path),
    });
    expect({ action, status: res.status }).toEqual({ action, status: 200 });
  }
  return { orderId, txid: (created.body.data as { txid: string }).txid };
}

/** Every page of the window, following next_cursor. */
async function all(
  query: Record<string, string>,
): Promise<{ charges: ReconciliationCharge[]; pages: number }> {
  const charges: ReconciliationCharge[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const res = await list({ ...query, ...(cursor ? { cursor } : {}) });
    expect(res.status).toBe(200);
    const page = ReconciliationChargesResponse.parse(res.body).data;
    charges.push(...page.results);
    cursor = page.next_cursor;
    pages += 1;
  } while (cursor);
  return { charges, pages };
}

it('lists the charges that were ever paid, with their amounts, status and version', async () => {
  const since = new Date().toISOString();
  const owner = seller();
  const paid = await charge(owner, ['sandbox-pay']);
  const refunded = await charge(owner, ['sandbox-pay', 'refund']);
  const med = await charge(owner, ['sandbox-pay', 'sandbox-med']);
  const back = await charge(owner, [
    'sandbox-pay',
    'sandbox-med',
    'sandbox-med-rejected',
    'sandbox-chargeback',
  ]);
  // Never paid: left out.
  await charge(owner, []);
  await charge(owner, ['cancel']);
  await charge(owner, ['sandbox-expire']);

  const { charges } = await all({ environment: 'test', changed_after: since });
  const mine = charges.filter((c) => c.seller_id === owner.seller_id);
  expect(mine.map((c) => [c.order_uuid, c.charge_status, c.version])).toEqual([
    [paid, 'PAID', 1],
    [refunded, 'REFUNDED', 2],
    [med, 'MED', 2],
    [back, 'CHARGEBACK', 4],
  ]);
  expect(mine[0]).toMatchObject({
    environment: 'test',
    gross_amount: 15000,
    fee_amount: 599,
    net_amount: 14401,
  });
  const [row] = await payments.runtime.orm.em
    .fork()
    .execute<Array<{ status_changed_at: Date }>>(
      `select status_changed_at from payments.transactions where order_id = ?`,
      [back],
    );
  expect(mine[3]?.status_changed_at).toBe(new Date(row?.status_changed_at as Date).toISOString());
});

it('pages oldest change first, each charge once, within [changed_after, changed_before)', async () => {
  const owner = seller();
  const since = new Date().toISOString();
  const orders: string[] = [];
  for (let i = 0; i < 5; i += 1) orders.push(await charge(owner, ['sandbox-pay'], 1000 + i));
  // A charge that moves again goes to the end: its last change is the newest.
  const moved = await charge(owner, ['sandbox-pay']);
  const first = orders.shift() as string;
  const refund = `/internal/charges/${first}/refund/`;
  expect(
    (
      await call(`${url}${refund}`, {
        method: 'POST',
        headers: signIdentity(ORDERS_KEY, owner, 'POST', refund),
      })
    ).status,
  ).toBe(200);
  const until = new Date(Date.now() + 1).toISOString();

  const { charges, pages } = await all({
    environment: 'test',
    changed_after: since,
    changed_before: until,
    limit: '2',
  });
  const mine = charges.filter((c) => c.seller_id === owner.seller_id);
  expect(mine.map((c) => c.order_uuid)).toEqual([...orders, moved, first]);
  // Six charges in the window, two a page: the third page is the last.
  expect(charges).toHaveLength(6);
  expect(pages).toBe(3);
  const times = charges.map((c) => Date.parse(c.status_changed_at));
  expect(times).toEqual([...times].sort((a, b) => a - b));
  for (const t of times) {
    expect(t).toBeGreaterThanOrEqual(Date.parse(since));
    expect(t).toBeLessThan(Date.parse(until));
  }
  // The end of a window is its next one's start: the boundary charge is in one of them only.
  const boundary = mine[2] as ReconciliationCharge;
  const before = await all({
    environment: 'test',
    changed_after: since,
    changed_before: boundary.status_changed_at,
  });
  const after = await all({
    environment: 'test',
    changed_after: boundary.status_changed_at,
    changed_before: until,
  });
  const ids = (r: { charges: ReconciliationCharge[] }) =>
    r.charges.filter((c) => c.seller_id === owner.seller_id).map((c) => c.order_uuid);
  expect(ids(before)).toEqual(mine.slice(0, 2).map((c) => c.order_uuid));
  expect(ids(after)).toEqual(mine.slice(2).map((c) => c.order_uuid));
});

it("keeps each environment to itself: an operator lists only its own environment's charges", async () => {
  const since = new Date().toISOString();
  // Sandbox actions are for test keys: a live charge is paid by the PSP's notification.
  const { orderId: live, txid } = await created(seller('live'), [], 15000);
  const notified = await call(`${url}/psp/webhook/pix`, {
    method: 'POST',
    headers: pspNotificationHeaders(testEnv().PSP_WEBHOOK_SECRET as string),
    body: {
      pix: [
        {
          // API Pix end-to-end ids are 32 letters and digits.
          endToEndId: `E${randomUUID().replace(/-/g, '')}`.slice(0, 32),
          txid,
          valor: '150.00',
          horario: new Date().toISOString(),
        },
      ],
    },
  });
  expect(notified.body).toMatchObject({ data: { outcomes: ['applied'] } });
  const res = await list({ environment: 'live', changed_after: since }, operator('live'));
  expect(res.status).toBe(200);
  const { results } = ReconciliationChargesResponse.parse(res.body).data;
  expect(results.map((c) => c.order_uuid)).toContain(live);
  expect(results.every((c) => c.environment === 'live')).toBe(true);
  const test = await all({ environment: 'test', changed_after: since });
  expect(test.charges.map((c) => c.order_uuid)).not.toContain(live);
});

it('answers only an operator identity of the environment asked about', async () => {
  expect((await list({ environment: 'test' }, null)).status).toBe(401);
  const asSeller = await list({ environment: 'test' }, seller());
  expect(asSeller.status).toBe(403);
  expect(asSeller.body).toMatchObject({
    code: 'forbidden',
    message: 'This caller may not call this route.',
  });
  const otherEnvironment = await list({ environment: 'live' }, operator('test'));
  expect(otherEnvironment.status).toBe(403);
  expect(otherEnvironment.body.message).toBe('This operator identity may list test transactions only.');
  // Signed for another path: refused like any forged identity.
  const forged = await call(`${url}${PATH}?environment=test`, {
    headers: signIdentity(RECONCILER, operator(), 'GET', '/internal/charges/'),
  });
  expect(forged.status).toBe(401);
});

it('refuses a bad query with a 400 naming every field', async () => {
  const res = await list({
    changed_after: 'yesterday',
    changed_before: '2026-12-01',
    limit: '0',
    cursor: '',
  });
  expect(res.status).toBe(400);
  expect(res.body).toMatchObject({ code: 'validation_error', message: 'Invalid query.' });
  expect(Object.keys(res.body.data as object).sort()).toEqual([
    'changed_after',
    'changed_before',
    'cursor',
    'environment',
    'limit',
  ]);
  const reversed = await list({
    environment: 'test',
    changed_after: '2026-12-02T00:00:00Z',
    changed_before: '2026-12-01T00:00:00Z',
  });
  expect(reversed.status).toBe(400);
  expect(reversed.body.data).toEqual({ changed_before: ['Must be later than changed_after'] });
  const tampered = await list({ environment: 'test', cursor: 'bm90IGEgY3Vyc29y' });
  expect(tampered.status).toBe(400);
  expect(tampered.body.data).toEqual({ cursor: ['Must be a next_cursor value returned by this list.'] });
  const twicePath = `${PATH}?environment=test&environment=live`;
  const twice = await call(`${url}${twicePath}`, {
    headers: signIdentity(RECONCILER, operator(), 'GET', twicePath),
  });
  expect(twice.status).toBe(400);
});
