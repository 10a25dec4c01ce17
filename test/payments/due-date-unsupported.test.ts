import { randomUUID } from 'node:crypto';
import { CreateChargesResponse, type CreateChargeRequest, type Identity } from '@seller-api/contracts';
import { addDays, todayInSaoPaulo } from '@seller-api/due-date';
import { signIdentity, signedIdentity } from '@seller-api/service-kit';
import { callKey } from '../support/keys';
import { apiPixPspEnv } from '../support/psp-simulator';
import { call } from '../support/system';
import { useSystem } from '../support/use-system';

/*
 * An API Pix PSP without PIX_DUE_DATE_CHARGES: a due-date charge asked of it is refused with a 400 on
 * `payment.due_date` before any call (its token never asks the cobv scopes), alone or in a batch;
 * immediate charges go on as before.
 */

const ORDERS_KEY = callKey('orders', 'payments');
const t = useSystem({
  gateway: false,
  psp: { clientId: 'no-cobv-client', clientSecret: 'no-cobv-secret' },
  env: ({ psp }) =>
    apiPixPspEnv(psp, 'live', { webhookSecret: 'no-cobv-webhook-secret-0123', pixKey: 'pix@seller.example' }),
});

const who: Identity = {
  user_id: randomUUID(),
  seller_id: randomUUID(),
  environment: 'live',
  role: 'seller',
  seller_name: 'Loja Exemplo',
};

function charge(dueDate: boolean): CreateChargeRequest {
  return {
    order_uuid: randomUUID(),
    gross_amount: 10_000,
    expires_at: new Date(Date.now() + 3600_000).toISOString(),
    seller_name: 'Loja Exemplo',
    debtor_name: 'Maria Silva',
    debtor_document: '52998224725',
    due_date: dueDate
      ? {
          due_date: addDays(todayInSaoPaulo(), 10),
          days_after_due: 30,
          fine: null,
          interest: null,
          rebate: null,
          discount: null,
          calendar: null,
        }
      : null,
  };
}

const post = (path: string, body: unknown) =>
  call(`${t.system.services.payments}${path}`, {
    method: 'POST',
    body,
    headers: signIdentity(ORDERS_KEY, who, 'POST', path, JSON.stringify(body)),
  });

it('refuses a due-date charge with a 400 on payment.due_date, asking the PSP nothing', async () => {
  const res = await post('/internal/charges/', charge(true));
  expect(res.status).toBe(400);
  expect(res.body).toMatchObject({
    code: 'validation_error',
    message: 'Due-date charges are not available in this environment.',
    data: { 'payment.due_date': ['Due-date charges are not available in this environment.'] },
  });
  expect(t.psp.requests.filter((r) => r.path.startsWith('/cobv'))).toEqual([]);

  const charges = [charge(true), charge(false)].map((c) => ({
    signed: signedIdentity(ORDERS_KEY, who, 'POST', '/internal/charges/', JSON.stringify(c)),
    charge: c,
  }));
  const batch = await post('/internal/charges/batch/', { charges });
  expect(batch.status).toBe(200);
  const [refused, made] = CreateChargesResponse.parse(batch.body).data.results;
  expect(refused).toEqual({
    status: 400,
    code: 'validation_error',
    message: 'Due-date charges are not available in this environment.',
  });
  expect(made).toMatchObject({ status: 201 });
  // The immediate charge's token asked the charge scopes only.
  const token = t.psp.requests.find((r) => r.path === '/oauth/token');
  expect(new URLSearchParams(token?.body).get('scope')).toBe('cob.write cob.read pix.write pix.read');
  expect(t.psp.requests.filter((r) => r.path.startsWith('/cobv'))).toEqual([]);
});
