import { randomUUID } from 'node:crypto';
import { OrderDetail } from '@seller-api/contracts';
import { signIdentity } from '@seller-api/service-kit';
import { SEPARATE_SECRETS, call } from '../support/system';
import {
  SALE_NET,
  fund,
  newSeller,
  readWithdrawal,
  startHarness,
  withdraw,
  type Harness,
} from '../withdrawals/helpers';

/**
 * One internal secret per called service (docs/deploy.md, "Secrets"): each service verifies identities
 * with its own INTERNAL_SECRET only, and its callers sign with theirs for it. The webhook-dispatcher's
 * secret, the most exposed, signs nothing that payments or withdrawals accept.
 */
let h: Harness;

beforeAll(async () => {
  h = await startHarness({}, { separateSecrets: true });
});
afterAll(() => h.stop());

const sellerIdentity = (sellerId: string) => ({
  user_id: randomUUID(),
  seller_id: sellerId,
  environment: 'test' as const,
  role: 'seller' as const,
});

describe('with a secret per service', () => {
  it("the gateway's and orders' calls work: an order is created, paid in the sandbox and refunded", async () => {
    const seller = await newSeller(h);
    // Gateway to orders, orders to payments (the charge), and the sandbox payment.
    const uuid = await fund(h, seller);
    await fund(h, seller);
    // Orders to withdrawals (the refund's hold), then to payments (the refund).
    const refund = await call(`${h.gateway.url}/sellers/orders/${uuid}/refund/`, {
      method: 'POST',
      key: seller.key,
    });
    expect(refund.status).toBe(200);
    const order = await call(`${h.gateway.url}/sellers/orders/${uuid}/`, { key: seller.key });
    expect(OrderDetail.parse(order.body.data).payment.status).toBe('REFUNDED');
    // The gateway signs for the dispatcher with the dispatcher's own secret.
    expect((await call(`${h.gateway.url}/config/webhooks/`, { key: seller.key })).status).toBe(200);
  });

  it("payments refuses a refund signed with the dispatcher's secret, and accepts its own", async () => {
    const seller = await newSeller(h);
    const uuid = await fund(h, seller);
    const identity = sellerIdentity(seller.sellerId);
    const path = `/internal/charges/${uuid}/refund/`;
    const forged = await call(`${h.system.services.payments}${path}`, {
      method: 'POST',
      headers: signIdentity(SEPARATE_SECRETS.webhooks, identity, 'POST', path),
    });
    expect(forged.status).toBe(401);
    expect(forged.body).toMatchObject({ code: 'unauthorized' });
    const read = `/internal/charges/${uuid}/`;
    const charge = (secret: string) =>
      call(`${h.system.services.payments}${read}`, { headers: signIdentity(secret, identity, 'GET', read) });
    expect((await charge(SEPARATE_SECRETS.webhooks)).status).toBe(401);
    const own = await charge(SEPARATE_SECRETS.payments);
    expect(own.status).toBe(200);
    expect(own.body.data).toMatchObject({ status: 'APPROVED' });
  });

  it("withdrawals refuses an operator approval signed with the dispatcher's secret", async () => {
    const seller = await newSeller(h);
    await fund(h, seller);
    const withdrawal = await withdraw(h, seller.key, {
      amount: SALE_NET,
      pix_key: '7d9f2c1a-4b3e-4f6a-9c2d-1e8b5a3f6d40',
      pix_key_type: 'random',
    });
    const operator = {
      user_id: randomUUID(),
      seller_id: null,
      environment: 'test' as const,
      role: 'operator' as const,
    };
    const path = `/ops/withdrawals/${withdrawal.uuid}/approve/`;
    const forged = await call(`${h.system.services.withdrawals}${path}`, {
      method: 'POST',
      headers: signIdentity(SEPARATE_SECRETS.webhooks, operator, 'POST', path),
    });
    expect(forged.status).toBe(401);
    expect((await readWithdrawal(h, seller.key, withdrawal.uuid)).status).toBe(withdrawal.status);
    // Its own secret is accepted on the same service.
    const balance = '/finance/balance/';
    const own = await call(`${h.system.services.withdrawals}${balance}`, {
      headers: signIdentity(SEPARATE_SECRETS.withdrawals, sellerIdentity(seller.sellerId), 'GET', balance),
    });
    expect(own.status).toBe(200);
  });

  it("orders refuses the dispatcher's secret and the payments secret alike", async () => {
    const path = '/sellers/orders/';
    for (const secret of [SEPARATE_SECRETS.webhooks, SEPARATE_SECRETS.payments]) {
      const res = await call(`${h.system.services.orders}${path}`, {
        headers: signIdentity(secret, sellerIdentity(randomUUID()), 'GET', path),
      });
      expect(res.status).toBe(401);
    }
  });
});
