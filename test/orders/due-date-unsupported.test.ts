import { addDays, todayInSaoPaulo } from '@seller-api/due-date';
import { apiPixPspEnv } from '../support/psp-simulator';
import { call } from '../support/system';
import { useSystem } from '../support/use-system';
import { CNPJ, createOrder, customer } from './fixtures';

/*
 * A live environment whose PSP does not take due-date charges (no PIX_DUE_DATE_CHARGES): payments
 * refuses the charge with a 400 on payment.due_date, and create-order answers the seller that 400,
 * with nothing stored; immediate orders go on as before.
 */

const t = useSystem({
  seller: true,
  psp: { clientId: 'orders-no-cobv-client', clientSecret: 'orders-no-cobv-secret' },
  env: ({ psp }) =>
    apiPixPspEnv(psp, 'live', { webhookSecret: 'orders-no-cobv-webhook-0123', pixKey: 'pix@seller.example' }),
});

const listed = async () => {
  const res = await call(`${t.url}/sellers/orders/`, { key: t.seller.liveKey });
  expect(res.status).toBe(200);
  return (res.body.data as { results: unknown[] }).results.length;
};

it("answers payments' refusal of a due-date charge as the 400 it is, storing nothing", async () => {
  const before = await listed();
  const res = await createOrder(t.url, t.seller.liveKey, {
    customer: customer(),
    payment: {
      gross_amount: 10_000,
      debtor_name: 'Empresa Compradora Ltda',
      debtor_document: CNPJ,
      due_date: addDays(todayInSaoPaulo(), 10),
    },
  });
  expect(res.status).toBe(400);
  expect(res.body).toMatchObject({
    code: 'validation_error',
    data: { 'payment.due_date': [expect.stringContaining('Due-date charges')] },
  });
  expect(t.psp.requests.filter((r) => r.path.startsWith('/cobv'))).toEqual([]);
  const immediate = await createOrder(t.url, t.seller.liveKey, {
    customer: customer(),
    payment: { gross_amount: 10_000 },
  });
  expect(immediate.status).toBe(201);
  expect(await listed()).toBe(before + 1);
});
