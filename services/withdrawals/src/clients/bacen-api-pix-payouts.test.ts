import type { PspFetch } from '@seller-api/api-pix';
import { bacenApiPixPayouts, idEnvioOf } from './bacen-api-pix-payouts';

// The adapter's mapping of answers with a scripted fetch; test/withdrawals/bacen-api-pix-payouts.test.ts
// runs it over HTTP against the PSP simulator.

const WITHDRAWAL = '9b8a7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d';
const request = {
  withdrawalId: WITHDRAWAL,
  amount: 5000,
  pixKey: 'seller@example.com',
  pixKeyType: 'email' as const,
  environment: 'live' as const,
};

function adapter(answers: Array<{ status: number; body: unknown }>) {
  const sent: Array<{ method: string; url: string }> = [];
  const fetchImpl: PspFetch = async (url, init) => {
    if (url.endsWith('/oauth/token')) {
      return { status: 200, text: async () => JSON.stringify({ access_token: 't', expires_in: 3600 }) };
    }
    sent.push({ method: init.method, url });
    const next = answers.shift();
    if (!next) throw new Error('no more answers');
    return { status: next.status, text: async () => JSON.stringify(next.body) };
  };
  const psp = bacenApiPixPayouts({
    apiUrl: 'https://psp.example/api/v2',
    tokenUrl: 'https://psp.example/oauth/token',
    clientId: 'id',
    clientSecret: 'secret',
    pixKey: 'payer@example.com',
    timeoutMs: 1000,
    fetchImpl,
  });
  return { psp, sent };
}

const envio = (fields: Record<string, unknown>) => ({
  idEnvio: idEnvioOf(WITHDRAWAL),
  valor: '50.00',
  e2eId: 'E9999999920300101000012345678901',
  ...fields,
});

describe('bacen-api-pix payouts', () => {
  it('uses the withdrawal id without dashes as idEnvio', () => {
    expect(idEnvioOf(WITHDRAWAL)).toBe('9b8a7c6d5e4f4a3b8c2d1e0f9a8b7c6d');
  });

  it('maps REALIZADO, EM_PROCESSAMENTO and NAO_REALIZADO', async () => {
    const { psp } = adapter([
      { status: 201, body: envio({ status: 'REALIZADO' }) },
      { status: 201, body: envio({ status: 'EM_PROCESSAMENTO' }) },
      { status: 201, body: envio({ status: 'NAO_REALIZADO', motivo: 'Conta encerrada' }) },
    ]);
    expect(await psp.pay(request)).toEqual({ status: 'paid', reference: 'E9999999920300101000012345678901' });
    expect(await psp.pay(request)).toEqual({ status: 'processing' });
    expect(await psp.pay(request)).toEqual({
      status: 'failed',
      reason: 'Payout refused by the PSP: Conta encerrada',
    });
  });

  it('never records as paid a transfer of another amount or id; it throws for an operator to look', async () => {
    const { psp } = adapter([
      { status: 201, body: envio({ status: 'REALIZADO', valor: '5.00' }) },
      { status: 409, body: {} },
      { status: 200, body: envio({ status: 'REALIZADO', idEnvio: 'other' }) },
    ]);
    await expect(psp.pay(request)).rejects.toMatchObject({ retryable: true });
    await expect(psp.pay(request)).rejects.toThrow(/another transfer/);
  });

  it('keeps the payout waiting, not failed, when the PSP refuses our credentials', async () => {
    const { psp, sent } = adapter([
      { status: 403, body: { title: 'AcessoNegado' } },
      { status: 400, body: { title: 'EnvioPixInvalido', detail: 'valor' } },
      { status: 404, body: { title: 'EnvioPixNaoEncontrado' } },
    ]);
    await expect(psp.pay(request)).rejects.toMatchObject({ retryable: true, status: 403 });
    expect(await psp.pay(request)).toEqual({
      status: 'failed',
      reason: 'Payout refused by the PSP (400: EnvioPixInvalido; valor)',
    });
    // The refusal is final only once the PSP says it has no such transfer.
    expect(sent.map((s) => s.method)).toEqual(['PUT', 'PUT', 'GET']);
  });

  it('waits on a refusal when the PSP has the transfer in another state, and on redirects and 404s', async () => {
    const { psp } = adapter([
      { status: 422, body: { title: 'SaldoInsuficiente' } },
      { status: 500, body: {} },
      { status: 302, body: {} },
      { status: 404, body: {} },
    ]);
    await expect(psp.pay(request)).rejects.toMatchObject({ retryable: true });
    await expect(psp.pay(request)).rejects.toMatchObject({ retryable: true, status: 302 });
    await expect(psp.pay(request)).rejects.toMatchObject({ retryable: true, status: 404 });
  });
});
