import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { hasError, isDynamicPix, parsePix } from 'pix-utils';
import { PspPixNotification, PspPixPayment } from '@seller-api/contracts';
import {
  API_PIX_CHARGE_SCOPES,
  bacenApiPix,
  type BacenApiPixAdapter,
  type BacenApiPixOptions,
} from '../../services/payments/src/clients/bacen-api-pix';
import {
  PSP_NOTIFICATION_SECRET_HEADER,
  isPspNotificationAuthorized,
} from '../../services/payments/src/http/psp-senders';
import { parseBrCode } from '../../services/payments/src/domain/brcode';
import type { PspChargeInput } from '../../services/payments/src/domain/psp';
import { txid, rejection } from '../support/api-pix';
import { startPspSimulator, type PspSimulator } from '../support/psp-simulator';
import { startReceiver } from '../support/receiver';
import { waitFor } from '../support/wait';

// The bacen-api-pix adapter against the PSP simulator: real HTTP, no database or broker needed.

const CLIENT_ID = 'seller-api-client';
const CLIENT_SECRET = 'client-secret-0123456789';
const PIX_KEY = 'pix@seller.example';
const WEBHOOK_SECRET = 'psp-webhook-secret-0123456789';
const E2E = /^E\d{8}\d{12}[A-Za-z0-9]{11}$/;

let sim: PspSimulator;
let clockMs: number;
const adapters: BacenApiPixAdapter[] = [];

function adapter(overrides: Partial<BacenApiPixOptions> = {}): BacenApiPixAdapter {
  const made = bacenApiPix({
    apiUrl: sim.url,
    tokenUrl: sim.tokenUrl,
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    scopes: API_PIX_CHARGE_SCOPES,
    pixKey: PIX_KEY,
    merchantName: 'Seller API',
    merchantCity: 'Sao Paulo',
    timeoutMs: 2000,
    tokenRefreshMarginSeconds: 30,
    now: () => new Date(clockMs),
    ...overrides,
  });
  adapters.push(made);
  return made;
}

function charge(overrides: Partial<PspChargeInput> = {}): PspChargeInput {
  return {
    txid: txid(),
    amountCents: 15000,
    expiresAt: new Date(clockMs + 3600_000),
    debtorName: 'Maria Silva',
    debtorDocument: '52998224725',
    ...overrides,
  };
}

async function freePort(): Promise<number> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

beforeEach(async () => {
  clockMs = Date.now();
  sim = await startPspSimulator({ clientId: CLIENT_ID, clientSecret: CLIENT_SECRET });
});

afterEach(async () => {
  await Promise.all(adapters.splice(0).map((a) => a.close()));
  await sim.close();
});

describe('bacen-api-pix charges', () => {
  it('answers a dynamic BR Code pointing at the location, that parsers accept', async () => {
    const psp = adapter();
    const input = charge();
    const { copyAndPaste, location } = await psp.createCharge(input);

    const cob = sim.cobs.get(input.txid);
    expect(cob).toBeDefined();
    expect(location).toBe(cob?.location);
    expect(copyAndPaste).toBe(cob?.pixCopiaECola);
    expect(location).toMatch(/^pix\.sim\.example\/qr\/v2\/[0-9a-f-]{36}$/);

    const parsed = parseBrCode(copyAndPaste);
    expect(parsed.error).toBeUndefined();
    expect(parsed.valid).toBe(true);
    expect(parsed.fields).toMatchObject({
      '00': '01',
      '01': '12',
      '26': { '00': 'br.gov.bcb.pix', '25': location },
      '54': '150.00',
      '62': { '05': '***' },
    });

    const pix = parsePix(copyAndPaste);
    if (hasError(pix) || !isDynamicPix(pix)) throw new Error(`pix-utils refused ${copyAndPaste}`);
    expect(pix.url).toBe(location);
    expect(psp.name).toBe('bacen-api-pix');
    expect(psp.txidLength).toBeGreaterThanOrEqual(26);
  });

  it('sends the cob as the standard has it: expiracao, valor.original, chave, devedor', async () => {
    const psp = adapter();
    const cpf = charge({ expiresAt: new Date(clockMs + 900_500) });
    await psp.createCharge(cpf);
    expect(sim.cobs.get(cpf.txid)).toMatchObject({
      txid: cpf.txid,
      revisao: 0,
      status: 'ATIVA',
      calendario: { expiracao: 900 },
      valor: { original: '150.00' },
      chave: PIX_KEY,
      devedor: { cpf: '52998224725', nome: 'Maria Silva' },
    });

    const cnpj = charge({ amountCents: 1, debtorDocument: '11.222.333/0001-81', description: 'Pedido 42' });
    await psp.createCharge(cnpj);
    expect(sim.cobs.get(cnpj.txid)).toMatchObject({
      valor: { original: '0.01' },
      devedor: { cnpj: '11222333000181', nome: 'Maria Silva' },
      solicitacaoPagador: 'Pedido 42',
    });

    // Only the name known: no devedor at all. An expiry already past still asks for 1 second.
    const anonymous = charge({
      amountCents: 999_999_999_999,
      debtorDocument: null,
      expiresAt: new Date(clockMs - 5000),
    });
    await psp.createCharge(anonymous);
    const stored = sim.cobs.get(anonymous.txid);
    expect(stored?.devedor).toBeUndefined();
    expect(stored).toMatchObject({ valor: { original: '9999999999.99' }, calendario: { expiracao: 1 } });

    const put = sim.requests.find((r) => r.method === 'PUT' && r.path === `/cob/${cpf.txid}`);
    expect(put?.headers['content-type']).toMatch(/^application\/json/);
    expect(put?.headers.authorization).toMatch(/^Bearer \S+$/);
    expect(Object.keys(JSON.parse(put?.body ?? '{}') as object).sort()).toEqual([
      'calendario',
      'chave',
      'devedor',
      'valor',
    ]);
  });

  it.each(['location', 'loc'] as const)(
    'builds the dynamic BR Code when the PSP answers without pixCopiaECola (%s only)',
    async (shape) => {
      sim.cobAnswer = shape;
      const psp = adapter();
      const input = charge({ amountCents: 4250 });
      const { copyAndPaste, location } = await psp.createCharge(input);
      const cob = sim.cobs.get(input.txid);
      expect(location).toBe(cob?.location);
      const answer = JSON.parse(sim.requests.at(-1)?.body ?? '{}') as object;
      expect(answer).toEqual(expect.any(Object));
      const parsed = parseBrCode(copyAndPaste);
      expect(parsed.valid).toBe(true);
      expect(parsed.fields).toMatchObject({
        '01': '12',
        '26': { '00': 'br.gov.bcb.pix', '25': location },
        '54': '42.50',
        '59': 'Seller API',
        '60': 'Sao Paulo',
      });
      const pix = parsePix(copyAndPaste);
      if (hasError(pix) || !isDynamicPix(pix)) throw new Error(`pix-utils refused ${copyAndPaste}`);
      expect(pix.url).toBe(location);
    },
  );

  it('sends names cut by code points, which the PSP accepts, never half an emoji', async () => {
    const input = charge({ debtorName: `${'M'.repeat(199)}😀 Silva`, description: `${'p'.repeat(139)}🎉!` });
    await adapter().createCharge(input);
    expect(sim.cobs.get(input.txid)).toMatchObject({
      devedor: { nome: `${'M'.repeat(199)}😀` },
      solicitacaoPagador: `${'p'.repeat(139)}🎉`,
    });
  });

  it('refuses a txid API Pix would refuse, without calling the PSP', async () => {
    const psp = adapter();
    const err = await rejection(psp.createCharge(charge({ txid: 'AbC123dEf456GhI789jKl0MnO' })));
    expect(err.retryable).toBe(false);
    expect(err.message).toMatch(/26 to 35/);
    expect(sim.requests).toHaveLength(0);
  });
});

describe('bacen-api-pix OAuth2', () => {
  it('asks for a token with client credentials in HTTP Basic, form-encoded, with its scopes', async () => {
    await adapter().createCharge(charge());
    const tokenCall = sim.requests.find((r) => r.path === '/oauth/token');
    expect(tokenCall?.method).toBe('POST');
    expect(tokenCall?.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect(tokenCall?.body).toBe('grant_type=client_credentials&scope=cob.write+cob.read+pix.write+pix.read');
    const basic = Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64');
    expect(tokenCall?.headers.authorization).toBe(`Basic ${basic}`);
  });

  it('keeps the token until shortly before it expires, then fetches another', async () => {
    sim.tokenTtlSeconds = 120;
    const psp = adapter({ tokenRefreshMarginSeconds: 30 });
    await Promise.all([psp.createCharge(charge()), psp.createCharge(charge())]);
    await psp.createCharge(charge());
    expect(sim.tokenRequests).toBe(1);

    clockMs += 89_000; // 31 s before expiry: still good
    await psp.createCharge(charge());
    expect(sim.tokenRequests).toBe(1);

    clockMs += 2_000; // inside the 30 s margin
    await psp.createCharge(charge());
    await psp.createCharge(charge());
    expect(sim.tokenRequests).toBe(2);
    expect(sim.cobs.size).toBe(6);
  });

  it('on a 401 fetches a new token once and retries the call', async () => {
    const psp = adapter();
    await psp.createCharge(charge());
    sim.revokeTokens();
    const input = charge();
    await psp.createCharge(input);
    expect(sim.tokenRequests).toBe(2);
    expect(sim.cobs.has(input.txid)).toBe(true);
    expect(sim.requests.filter((r) => r.path === `/cob/${input.txid}`)).toHaveLength(2);
  });

  it('a token without the scope an operation needs is refused (403), not retryable', async () => {
    const psp = adapter({ scopes: ['cob.write'] });
    const input = charge();
    await psp.createCharge(input);
    const { endToEndId } = await sim.pay(input.txid, {
      webhookUrl: `http://127.0.0.1:${await freePort()}/api/v1/psp/webhook`,
      secret: WEBHOOK_SECRET,
    });
    const err = await rejection(psp.refund({ endToEndId, refundId: 'D1', amountCents: 100 }));
    expect(err).toMatchObject({ retryable: false, status: 403 });
    expect(sim.refunds).toHaveLength(0);
  });

  it('a bad client secret is a PspError that retrying will not fix', async () => {
    const psp = adapter({ clientSecret: 'wrong-secret' });
    const err = await rejection(psp.createCharge(charge()));
    expect(err).toMatchObject({ retryable: false, status: 401 });
    expect(err.message).toMatch(/invalid_client/);
    expect(err.message).not.toContain('wrong-secret');
    expect(sim.cobs.size).toBe(0);
  });
});

describe('bacen-api-pix payments and refunds', () => {
  it('a payment reaches our route with the standard notification and the per-PSP secret', async () => {
    const receiver = await startReceiver();
    try {
      const input = charge();
      await adapter().createCharge(input);
      const paid = await sim.pay(input.txid, {
        webhookUrl: `${receiver.url}/api/v1/psp/webhook`,
        secret: WEBHOOK_SECRET,
      });
      expect(paid.status).toBe(200);
      expect(paid.endToEndId).toMatch(E2E);
      expect(paid.endToEndId).toHaveLength(32);

      const hook = await waitFor(() => receiver.received[0], { what: 'the PSP notification' });
      expect(hook.path).toBe('/api/v1/psp/webhook/pix');
      expect(hook.headers.authorization).toBe(`Bearer ${WEBHOOK_SECRET}`);
      expect(isPspNotificationAuthorized(hook.headers[PSP_NOTIFICATION_SECRET_HEADER], WEBHOOK_SECRET)).toBe(
        true,
      );
      expect(
        isPspNotificationAuthorized(hook.headers[PSP_NOTIFICATION_SECRET_HEADER], 'another-secret'),
      ).toBe(false);
      const notification = PspPixNotification.parse(JSON.parse(hook.rawBody));
      expect(notification.pix).toEqual([
        { endToEndId: paid.endToEndId, txid: input.txid, valor: '150.00', horario: expect.any(String) },
      ]);
      expect(sim.cobs.get(input.txid)?.status).toBe('CONCLUIDA');
    } finally {
      await receiver.close();
    }
  });

  async function paidCharge(amountCents = 15000) {
    const psp = adapter();
    const input = charge({ amountCents });
    await psp.createCharge(input);
    // Nobody listens there: the payment stands even when the notification cannot be delivered.
    const { endToEndId } = await sim.pay(input.txid, {
      webhookUrl: `http://127.0.0.1:${await freePort()}/api/v1/psp/webhook`,
      secret: WEBHOOK_SECRET,
    });
    return { psp, endToEndId };
  }

  it('refunds a payment: DEVOLVIDO is REFUNDED, EM_PROCESSAMENTO is PROCESSING', async () => {
    const { psp, endToEndId } = await paidCharge();
    await expect(psp.refund({ endToEndId, refundId: 'D1', amountCents: 5000 })).resolves.toEqual({
      status: 'REFUNDED',
      reason: null,
    });
    sim.refundStatus = 'EM_PROCESSAMENTO';
    await expect(psp.refund({ endToEndId, refundId: 'D2', amountCents: 10000 })).resolves.toEqual({
      status: 'PROCESSING',
      reason: null,
    });
    expect(sim.refunds.map((r) => [r.id, r.valor, r.status])).toEqual([
      ['D1', '50.00', 'DEVOLVIDO'],
      ['D2', '100.00', 'EM_PROCESSAMENTO'],
    ]);
    const put = sim.requests.find((r) => r.path === `/pix/${endToEndId}/devolucao/D1`);
    expect(put?.method).toBe('PUT');
    expect(JSON.parse(put?.body ?? '{}')).toEqual({ valor: '50.00' });
  });

  it('a refund in processing ends where the PSP says, read with lookupRefund', async () => {
    const { psp, endToEndId } = await paidCharge();
    sim.refundStatus = 'EM_PROCESSAMENTO';
    const asked = [
      { endToEndId, refundId: 'D1', amountCents: 1000 },
      { endToEndId, refundId: 'D2', amountCents: 2000 },
    ];
    for (const refund of asked) {
      await expect(psp.refund(refund)).resolves.toEqual({ status: 'PROCESSING', reason: null });
    }
    await expect(psp.lookupRefund({ endToEndId, refundId: 'D1' })).resolves.toEqual({
      status: 'PROCESSING',
      reason: null,
    });

    sim.settleRefund('D1', 'DEVOLVIDO');
    sim.settleRefund('D2', 'NAO_REALIZADO', 'Conta do pagador encerrada.');
    await expect(psp.lookupRefund({ endToEndId, refundId: 'D1' })).resolves.toEqual({
      status: 'REFUNDED',
      reason: null,
    });
    await expect(psp.lookupRefund({ endToEndId, refundId: 'D2' })).resolves.toEqual({
      status: 'FAILED',
      reason: 'Conta do pagador encerrada.',
    });
    // Asking again with the same id: API Pix refuses an id it has (400, not retryable: payments then
    // looks the refund up); a PSP that replays it answers the refund as it stands now.
    expect(await rejection(psp.refund(asked[1] as (typeof asked)[number]))).toMatchObject({
      retryable: false,
      status: 400,
    });
    sim.reusedRefundId = 'replay';
    try {
      await expect(psp.refund(asked[1] as (typeof asked)[number])).resolves.toEqual({
        status: 'FAILED',
        reason: 'Conta do pagador encerrada.',
      });
    } finally {
      sim.reusedRefundId = 'refuse';
    }
    await expect(psp.lookupRefund({ endToEndId, refundId: 'D9' })).resolves.toBeNull();
    expect(() => sim.settleRefund('D1', 'NAO_REALIZADO')).toThrow(/DEVOLVIDO/);
  });

  it("notifies a refund's end as the spec's callback does, in pix[].devolucoes", async () => {
    const receiver = await startReceiver();
    try {
      const { psp, endToEndId } = await paidCharge();
      sim.refundStatus = 'EM_PROCESSAMENTO';
      await psp.refund({ endToEndId, refundId: 'D1', amountCents: 1000 });
      sim.settleRefund('D1', 'NAO_REALIZADO', 'Saldo insuficiente.');
      const sent = await sim.notifyRefunds([endToEndId], {
        webhookUrl: `${receiver.url}/api/v1/psp/webhook`,
        secret: WEBHOOK_SECRET,
      });
      expect(sent.status).toBe(200);
      const hook = await waitFor(() => receiver.received[0], { what: 'the refund notification' });
      expect(hook.path).toBe('/api/v1/psp/webhook/pix');
      const envelope = PspPixNotification.parse(JSON.parse(hook.rawBody));
      const item = PspPixPayment.parse(envelope.pix[0]);
      expect(item).toMatchObject({
        endToEndId,
        valor: '150.00',
        devolucoes: [
          {
            id: 'D1',
            rtrId: expect.stringMatching(/^D\d{20}[A-Za-z0-9]{11}$/),
            valor: '10.00',
            status: 'NAO_REALIZADO',
            motivo: 'Saldo insuficiente.',
            horario: { solicitacao: expect.any(String) },
          },
        ],
      });
      expect(item.devolucoes?.[0]).not.toHaveProperty('endToEndId');
    } finally {
      await receiver.close();
    }
  });

  it('a refund the PSP refuses: a 4xx is a PspError, NAO_REALIZADO a FAILED refund with the reason', async () => {
    const { psp, endToEndId } = await paidCharge(15000);
    const tooMuch = await rejection(psp.refund({ endToEndId, refundId: 'D1', amountCents: 15001 }));
    expect(tooMuch).toMatchObject({ retryable: false, status: 400 });
    expect(tooMuch.message).toMatch(/exceed/);

    const unknown = await rejection(
      psp.refund({ endToEndId: sim.newEndToEndId(), refundId: 'D2', amountCents: 100 }),
    );
    expect(unknown).toMatchObject({ retryable: false, status: 404 });

    sim.refundStatus = 'NAO_REALIZADO';
    await expect(psp.refund({ endToEndId, refundId: 'D3', amountCents: 100 })).resolves.toEqual({
      status: 'FAILED',
      reason: 'Conta do pagador encerrada.',
    });
  });
});

describe('bacen-api-pix failures', () => {
  it('a PSP that is down is a retryable PspError', async () => {
    const url = `http://127.0.0.1:${await freePort()}`;
    const psp = adapter({ apiUrl: url, tokenUrl: `${url}/oauth/token` });
    const err = await rejection(psp.createCharge(charge()));
    expect(err).toMatchObject({ retryable: true, status: null });
    expect(err.message).toMatch(/did not answer/);
  });

  it('a 5xx is retryable, with the PSP status', async () => {
    const psp = adapter();
    await psp.createCharge(charge());
    sim.failNext(503);
    const err = await rejection(psp.createCharge(charge()));
    expect(err).toMatchObject({ retryable: true, status: 503 });
    await expect(psp.createCharge(charge())).resolves.toMatchObject({ location: expect.any(String) });
  });

  it('a PSP that does not answer in time is a retryable PspError', async () => {
    const psp = adapter({ timeoutMs: 300 });
    await psp.createCharge(charge());
    sim.hangNext();
    const err = await rejection(psp.createCharge(charge()));
    expect(err.retryable).toBe(true);
    expect(err.message).toMatch(/300 ms/);
  });
});
