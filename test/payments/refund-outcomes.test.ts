// A seller's refund follows the PSP to its end (docs/payments.md, "Refunds"): API Pix answers a refund
// EM_PROCESSAMENTO, DEVOLVIDO or NAO_REALIZADO, and reports the end of a processing one in a later
// notification's `devolucoes` or when it is looked up. Driven through the gateway against the PSP
// simulator, with the ledger's balance checked at each step: the money is held while the refund is on
// its way, taken once when it is made, and given back once when it is not.
import { Balance, ChargeState, CreatedOrder, type Environment } from '@seller-api/contracts';
import { signIdentity } from '@seller-api/service-kit';
import { callKey } from '../support/keys';
import { apiPixPspEnv } from '../support/psp-simulator';
import { call } from '../support/system';
import { useSystem } from '../support/use-system';
import { LogCapture } from '../support/logs';
import { waitFor } from '../support/wait';
import { createOrder, standaloneOrder } from '../orders/fixtures';

const WEBHOOK_SECRET = 'refund-outcomes-webhook-secret-01';
const logs = new LogCapture();
const t = useSystem({
  psp: { clientId: 'seller-api', clientSecret: 's3cret-client' },
  env: ({ psp }) => ({
    ...apiPixPspEnv(psp, 'live', { webhookSecret: WEBHOOK_SECRET, pixKey: 'pix@seller-api.example' }),
    // Refunds whose end has not arrived are looked up quickly here.
    REFUND_CHECK_INTERVAL_MS: '100',
    REFUND_CHECK_BASE_MS: '300',
    REFUND_CHECK_MAX_MS: '600',
    LOG_LEVEL: 'info',
  }),
  logs,
});
afterEach(() => {
  t.psp.refundStatus = 'DEVOLVIDO';
  t.psp.reusedRefundId = 'refuse';
});

const webhook = () => ({ webhookUrl: `${t.url}/psp/webhook`, secret: WEBHOOK_SECRET });

/** A live seller with one paid order of R$ 150,00, its net credited. */
async function paidOrder() {
  const { key, sellerId } = await t.newKey({ environment: 'live' as Environment });
  const order = CreatedOrder.parse((await createOrder(t.url, key, standaloneOrder())).body.data);
  const paid = await t.psp.pay(order.pix.qr_code_id, webhook());
  expect(paid.status).toBe(200);
  const net = await waitFor(
    async () => {
      const b = await balance(key);
      return b.available_amount > 0 ? b.available_amount : null;
    },
    { what: 'the sale credited' },
  );
  return { key, sellerId: sellerId as string, order, endToEndId: paid.endToEndId, net };
}

async function balance(key: string) {
  return Balance.parse((await call(`${t.url}/finance/balance/`, { key })).body.data);
}

async function detail(key: string, uuid: string) {
  const body = (await call(`${t.url}/sellers/orders/${uuid}/`, { key })).body.data as {
    payment: { status: string; refund?: { status: string; failure_reason: string | null } | null };
  };
  return body.payment;
}

/** Payments' own view of the charge: its status and its refund. */
async function charge(sellerId: string, uuid: string) {
  const path = `/internal/charges/${uuid}/`;
  const identity = {
    user_id: sellerId,
    seller_id: sellerId,
    environment: 'live' as const,
    role: 'seller' as const,
  };
  const res = await call(`${t.system.services.payments}${path}`, {
    headers: signIdentity(callKey('withdrawals', 'payments'), identity, 'GET', path),
  });
  return res.body.data as { status: string; refund: ChargeState['refund'] };
}

const refund = (key: string, uuid: string) =>
  call(`${t.url}/sellers/orders/${uuid}/refund/`, { method: 'POST', key });

async function events(key: string, type: string, uuid: string) {
  const res = await call(`${t.url}/events/?type=${type}&order_uuid=${uuid}`, { key });
  return (res.body.data as { results: Array<{ data: Record<string, unknown> }> }).results;
}

describe('a refund the PSP is still making', () => {
  it('keeps the order PAID and the money held until a notification says DEVOLVIDO, applied once', async () => {
    const { key, sellerId, order, endToEndId, net } = await paidOrder();
    t.psp.refundStatus = 'EM_PROCESSAMENTO';
    const asked = await refund(key, order.uuid);
    expect(asked.status).toBe(200);
    expect(asked.body.message).toMatch(/processing/i);
    expect((await charge(sellerId, order.uuid)).refund).toMatchObject({ status: 'PROCESSING', attempt: 1 });
    expect((await detail(key, order.uuid)).status).toBe('PAID');
    // Held, not gone: neither available nor paid back yet.
    expect((await balance(key)).available_amount).toBe(0);

    // Asked again while in progress: refused, nothing held twice.
    const again = await refund(key, order.uuid);
    expect(again.status).toBe(409);
    expect(again.body.message).toMatch(/already in progress/);

    const [made] = t.psp.refunds.filter((r) => r.endToEndId === endToEndId);
    t.psp.settleRefund(made?.id as string, 'DEVOLVIDO', undefined, endToEndId);
    const told = await t.psp.notifyRefunds([endToEndId], webhook());
    expect(told.status).toBe(200);
    await waitFor(async () => ((await detail(key, order.uuid)).status === 'REFUNDED' ? true : null), {
      what: 'order REFUNDED',
    });
    // The same notification twice, and a stale EM_PROCESSAMENTO after the end: nothing more.
    expect((await t.psp.notifyRefunds([endToEndId], webhook())).status).toBe(200);
    const stale = await t.psp.notify(
      {
        pix: [
          {
            endToEndId,
            txid: order.pix.qr_code_id,
            valor: '150.00',
            horario: new Date().toISOString(),
            devolucoes: [
              {
                id: made?.id,
                rtrId: made?.rtrId,
                valor: '150.00',
                horario: { solicitacao: new Date().toISOString() },
                status: 'EM_PROCESSAMENTO',
              },
            ],
          },
        ],
      },
      webhook(),
    );
    expect(stale.status).toBe(200);
    expect((await charge(sellerId, order.uuid)).refund).toMatchObject({ status: 'REFUNDED', attempt: 1 });
    expect(await balance(key)).toMatchObject({ available_amount: 0 });
    expect(await events(key, 'order.refunded', order.uuid)).toHaveLength(1);
    expect(net).toBeGreaterThan(0);
  });

  it('is looked up at the PSP when no notification comes, and a NAO_REALIZADO gives the money back', async () => {
    const { key, sellerId, order, endToEndId, net } = await paidOrder();
    t.psp.refundStatus = 'EM_PROCESSAMENTO';
    expect((await refund(key, order.uuid)).status).toBe(200);
    const [made] = t.psp.refunds.filter((r) => r.endToEndId === endToEndId);
    t.psp.settleRefund(made?.id as string, 'NAO_REALIZADO', 'Saldo insuficiente na conta.', endToEndId);

    // No notification: the refund checks look it up (GET /pix/{e2eid}/devolucao/{id}).
    const failed = await waitFor(
      async () => {
        const c = await charge(sellerId, order.uuid);
        return c.refund?.status === 'FAILED' ? c : null;
      },
      { what: 'refund FAILED by look-up' },
    );
    expect(failed).toMatchObject({
      status: 'APPROVED',
      refund: { failure_reason: 'Saldo insuficiente na conta.' },
    });
    expect(t.psp.requests.some((r) => r.method === 'GET' && r.path.includes('/devolucao/'))).toBe(true);
    expect((await detail(key, order.uuid)).status).toBe('PAID');
    await waitFor(async () => ((await balance(key)).available_amount === net ? true : null), {
      what: 'the hold given back',
    });
    const told = await waitFor(async () => {
      const found = await events(key, 'payment.refund_failed', order.uuid);
      return found.length > 0 ? found : null;
    });
    expect(told[0]?.data).toMatchObject({
      order: { uuid: order.uuid, status: 'PAID' },
      refund: { amount: 15000, reason: 'Saldo insuficiente na conta.' },
    });

    // Asked again: a new attempt with its own refund id, made this time; the net is taken once.
    t.psp.refundStatus = 'DEVOLVIDO';
    const second = await refund(key, order.uuid);
    expect(second.status).toBe(200);
    const ids = t.psp.refunds.filter((r) => r.endToEndId === endToEndId).map((r) => r.id);
    expect(ids).toHaveLength(2);
    expect(ids[1]).toBe(`${ids[0]}02`);
    expect((await detail(key, order.uuid)).status).toBe('REFUNDED');
    // The first attempt's failure told once more (a late notification) releases nothing now.
    expect(
      (await t.psp.notifyRefunds([endToEndId], { ...webhook(), refundIds: [ids[0] as string] })).status,
    ).toBe(200);
    await waitFor(async () => ((await balance(key)).available_amount === 0 ? true : null), {
      what: 'the net reversed once',
    });
    expect((await charge(sellerId, order.uuid)).refund).toMatchObject({ status: 'REFUNDED', attempt: 2 });
  });
});

describe("a refund's failure reason that quotes personal data", () => {
  it('is stored, answered and told to the seller masked, and logged masked', async () => {
    const { key, sellerId, order, endToEndId } = await paidOrder();
    t.psp.refundStatus = 'EM_PROCESSAMENTO';
    expect((await refund(key, order.uuid)).status).toBe(200);
    const [made] = t.psp.refunds.filter((r) => r.endToEndId === endToEndId);
    t.psp.settleRefund(
      made?.id as string,
      'NAO_REALIZADO',
      'Chave maria.souza@example.com.br (+55 11 98765-4321, CPF 123 456 789 09) encerrada.',
      endToEndId,
    );
    expect((await t.psp.notifyRefunds([endToEndId], webhook())).status).toBe(200);
    const masked = 'Chave m***@example.com.br (+55*********21, CPF 123.***.***-09) encerrada.';
    const failed = await waitFor(async () => {
      const c = await charge(sellerId, order.uuid);
      return c.refund?.status === 'FAILED' ? c : null;
    });
    expect(failed.refund).toMatchObject({ failure_reason: masked });
    // Orders learns of the failure from payments' event: waited for, not assumed.
    const mirrored = await waitFor(async () => {
      const { refund: seen } = await detail(key, order.uuid);
      return seen?.status === 'FAILED' ? seen : null;
    });
    expect(mirrored).toMatchObject({ failure_reason: masked });
    const told = await waitFor(async () => {
      const found = await events(key, 'payment.refund_failed', order.uuid);
      return found.length > 0 ? found : null;
    });
    expect(told[0]?.data).toMatchObject({ refund: { reason: masked } });
    for (const piece of ['maria.souza', '98765', '456 789', '456.789'])
      expect(logs.text()).not.toContain(piece);
  });
});

describe('a refund the PSP refuses in its answer', () => {
  it('answers the seller at once, records the reason, tells the seller and gives the hold back once', async () => {
    const { key, sellerId, order, net } = await paidOrder();
    t.psp.refundStatus = 'NAO_REALIZADO';
    const res = await refund(key, order.uuid);
    expect(res.status).toBe(503);
    expect(res.body.message).toMatch(/did not make the refund/);
    expect(await charge(sellerId, order.uuid)).toMatchObject({
      status: 'APPROVED',
      refund: { status: 'FAILED', attempt: 1 },
    });
    expect((await balance(key)).available_amount).toBe(net);
    await waitFor(async () =>
      (await events(key, 'payment.refund_failed', order.uuid)).length === 1 ? true : null,
    );
    expect((await balance(key)).available_amount).toBe(net);
  });
});

describe('a refund whose answer was lost', () => {
  it('is found at the PSP by the look-ups and completed there', async () => {
    const { key, sellerId, order } = await paidOrder();
    t.psp.loseAnswerNext(1, 'PUT');
    const res = await refund(key, order.uuid);
    expect(res.status).toBe(503);
    expect((await charge(sellerId, order.uuid)).status).toBe('APPROVED');
    // The PSP made it (DEVOLVIDO): the look-up finds it and the order is refunded, the hold reversed.
    await waitFor(async () => ((await detail(key, order.uuid)).status === 'REFUNDED' ? true : null), {
      what: 'order REFUNDED by look-up',
    });
    expect((await balance(key)).available_amount).toBe(0);
  });
});

describe('asked again', () => {
  it.each(['refuse', 'replay'] as const)(
    'after a lost answer, follows the refund the PSP already has (a PSP that %ss a known id)',
    async (reused) => {
      t.psp.reusedRefundId = reused;
      const { key, sellerId, order, endToEndId } = await paidOrder();
      t.psp.refundStatus = 'EM_PROCESSAMENTO';
      t.psp.loseAnswerNext(1, 'PUT');
      expect((await refund(key, order.uuid)).status).toBe(503);
      // The retry asks with the same refund id; a 400 for a known id is looked up, not taken as a refusal.
      const again = await refund(key, order.uuid);
      expect(again.status).toBe(200);
      expect(again.body.message).toMatch(/processing/i);
      expect(t.psp.refunds.filter((r) => r.endToEndId === endToEndId)).toHaveLength(1);
      expect((await charge(sellerId, order.uuid)).refund).toMatchObject({ status: 'PROCESSING', attempt: 1 });
      expect((await balance(key)).available_amount).toBe(0);
      const [made] = t.psp.refunds.filter((r) => r.endToEndId === endToEndId);
      t.psp.settleRefund(made?.id as string, 'DEVOLVIDO', undefined, endToEndId);
      await waitFor(async () => ((await detail(key, order.uuid)).status === 'REFUNDED' ? true : null), {
        what: 'order REFUNDED',
      });
      expect((await balance(key)).available_amount).toBe(0);
    },
  );

  it('with the same Idempotency-Key once it failed, is answered as before: no new attempt, nothing held', async () => {
    const { key, sellerId, order, endToEndId, net } = await paidOrder();
    t.psp.refundStatus = 'EM_PROCESSAMENTO';
    const keyed = () =>
      call(`${t.url}/sellers/orders/${order.uuid}/refund/`, {
        method: 'POST',
        key,
        headers: { 'Idempotency-Key': `refund-${order.uuid}` },
      });
    const first = await keyed();
    expect(first.status).toBe(200);
    const [made] = t.psp.refunds.filter((r) => r.endToEndId === endToEndId);
    t.psp.settleRefund(made?.id as string, 'NAO_REALIZADO', 'Conta encerrada.', endToEndId);
    await waitFor(async () => ((await balance(key)).available_amount === net ? true : null), {
      what: 'the failed refund released',
    });
    const replay = await keyed();
    expect(replay.status).toBe(200);
    expect(replay.text).toBe(first.text);
    expect((await charge(sellerId, order.uuid)).refund).toMatchObject({ status: 'FAILED', attempt: 1 });
    expect(t.psp.refunds.filter((r) => r.endToEndId === endToEndId)).toHaveLength(1);
    expect((await balance(key)).available_amount).toBe(net);
  });
});

describe('a keyed refund whose answer was lost with its transaction', () => {
  it('is the same refund when retried with its key: 200 as it stands, no second ask; another key is refused', async () => {
    const { key, sellerId, order, endToEndId } = await paidOrder();
    t.psp.refundStatus = 'EM_PROCESSAMENTO';
    const idempotencyKey = `refund-lost-${order.uuid}`;
    const keyed = (k: string) =>
      call(`${t.url}/sellers/orders/${order.uuid}/refund/`, {
        method: 'POST',
        key,
        headers: { 'Idempotency-Key': k },
      });
    expect((await keyed(idempotencyKey)).status).toBe(200);
    // The PSP made it, but the answer payments stored did not survive (a database restart after the
    // PSP answered; the refund checks then record it PROCESSING): the keyed answer is gone.
    await t.system.payments.runtime.orm.em
      .fork()
      .execute(`delete from payments.idempotency_keys where key = ?`, [idempotencyKey]);
    const retried = await keyed(idempotencyKey);
    expect(retried.status).toBe(200);
    expect(retried.body.message).toMatch(/processing/i);
    expect((await charge(sellerId, order.uuid)).refund).toMatchObject({ status: 'PROCESSING', attempt: 1 });
    expect(t.psp.refunds.filter((r) => r.endToEndId === endToEndId)).toHaveLength(1);
    // Another request (another key) is a second refund: refused while this one is under way.
    const other = await keyed(`another-${order.uuid}`);
    expect(other.status).toBe(409);
    expect(other.body.message).toMatch(/already in progress/);
  });
});

describe('requests that reach payments out of their order', () => {
  /** Orders' call to payments for a refund whose ledger hold is `holdSeq`. */
  const ask = (sellerId: string, uuid: string, holdSeq: number) => {
    const path = `/internal/charges/${uuid}/refund/?hold_seq=${holdSeq}`;
    const identity = {
      user_id: sellerId,
      seller_id: sellerId,
      environment: 'live' as const,
      role: 'seller' as const,
    };
    return call(`${t.system.services.payments}${path}`, {
      method: 'POST',
      headers: signIdentity(callKey('orders', 'payments'), identity, 'POST', path),
    });
  };
  const refundsAsked = (endToEndId: string) =>
    t.psp.requests.filter((r) => r.method === 'PUT' && r.path.includes(`/pix/${endToEndId}/devolucao/`))
      .length;

  it('a hold older than a failure never starts the next attempt; a newer one does', async () => {
    const { sellerId, order, endToEndId } = await paidOrder();
    t.psp.refundStatus = 'NAO_REALIZADO';
    expect((await ask(sellerId, order.uuid, 2)).status).toBe(502);
    expect(refundsAsked(endToEndId)).toBe(1);
    // Hold 1 was reserved before hold 2 but arrives after the failure that covered both: nothing asked.
    t.psp.refundStatus = 'DEVOLVIDO';
    expect((await ask(sellerId, order.uuid, 1)).status).toBe(503);
    expect(refundsAsked(endToEndId)).toBe(1);
    expect((await charge(sellerId, order.uuid)).refund).toMatchObject({
      status: 'FAILED',
      attempt: 1,
      hold_seq: 2,
    });
    // Hold 3, reserved after it: the next attempt, with its own refund id.
    expect((await ask(sellerId, order.uuid, 3)).status).toBe(200);
    expect(refundsAsked(endToEndId)).toBe(2);
    expect((await charge(sellerId, order.uuid)).refund).toMatchObject({ status: 'REFUNDED', attempt: 2 });
  });

  it('a request the PSP refused outright (a 4xx, no such refund) takes its ask back', async () => {
    const { sellerId, order, endToEndId } = await paidOrder();
    t.psp.failNext(422, 1, 'PUT');
    expect((await ask(sellerId, order.uuid, 1)).status).toBe(502);
    // The PSP was asked, then looked up (404): nothing was made, nothing is left to look up.
    expect(
      t.psp.requests.some((r) => r.method === 'GET' && r.path.includes(`/pix/${endToEndId}/devolucao/`)),
    ).toBe(true);
    const path = `/internal/charges/${order.uuid}/`;
    const identity = {
      user_id: sellerId,
      seller_id: sellerId,
      environment: 'live' as const,
      role: 'seller' as const,
    };
    const read = await call(`${t.system.services.payments}${path}`, {
      headers: signIdentity(callKey('withdrawals', 'payments'), identity, 'GET', path),
    });
    expect(read.body.data).toMatchObject({ status: 'APPROVED', refund_asked_at: null, refund: null });
  });
});
