import type { PspFetch } from '@seller-api/api-pix';
import { efiPayouts, idEnvioOf, sendOutcome } from './efi-payouts';

// The adapter's mapping of Efí's answers with a scripted fetch; test/withdrawals/efi-payouts.test.ts
// runs it over HTTP against the Efí simulator, through the payout worker.

const WITHDRAWAL = '9b8a7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d';
const ID = '9b8a7c6d5e4f4a3b8c2d1e0f9a8b7c6d';
const E2E = 'E09089356202011251226APIff82f2e5';
const request = {
  withdrawalId: WITHDRAWAL,
  amount: 5000,
  pixKey: 'seller@example.com',
  pixKeyType: 'email' as const,
  environment: 'live' as const,
};

interface Sent {
  method: string;
  path: string;
  body?: string;
}

function adapter(answers: Array<{ status: number; body: unknown }>) {
  const sent: Sent[] = [];
  const tokenBodies: string[] = [];
  const fetchImpl: PspFetch = async (url, init) => {
    if (url.endsWith('/oauth/token')) {
      tokenBodies.push(init.body ?? '');
      return { status: 200, text: async () => JSON.stringify({ access_token: 't', expires_in: 3600 }) };
    }
    sent.push({ method: init.method, path: new URL(url).pathname, body: init.body });
    const next = answers.shift();
    if (!next) throw new Error('no more answers');
    return { status: next.status, text: async () => JSON.stringify(next.body) };
  };
  const psp = efiPayouts({
    apiUrl: 'https://efi.example',
    tokenUrl: 'https://efi.example/oauth/token',
    clientId: 'id',
    clientSecret: 'secret',
    pixKey: 'payer@example.com',
    timeoutMs: 1000,
    fetchImpl,
  });
  return { psp, sent, tokenBodies };
}

const put = (status: string, fields: Record<string, unknown> = {}) => ({
  idEnvio: ID,
  e2eId: E2E,
  valor: '50.00',
  horario: { solicitacao: '2021-11-25T12:26:42.905Z' },
  status,
  ...fields,
});
const got = (status: string, fields: Record<string, unknown> = {}) => ({
  endToEndId: E2E,
  idEnvio: ID,
  valor: '50.00',
  chave: 'payer@example.com',
  status,
  horario: { solicitacao: '2021-11-25T12:26:42.905Z' },
  favorecido: { chave: 'seller@example.com' },
  ...fields,
});
const PUT_PATH = `/v3/gn/pix/${ID}`;
const GET_PATH = `/v2/gn/pix/enviados/id-envio/${ID}`;

describe('efi payouts', () => {
  it('uses the withdrawal id without dashes as idEnvio', () => {
    expect(idEnvioOf(WITHDRAWAL)).toBe(ID);
  });

  it('sends valor, our paying key and the seller key, asking for the pix.send and read scopes', async () => {
    const { psp, sent, tokenBodies } = adapter([{ status: 201, body: put('EM_PROCESSAMENTO') }]);
    expect(await psp.pay(request)).toEqual({ status: 'processing' });
    expect(sent).toEqual([{ method: 'PUT', path: PUT_PATH, body: expect.any(String) }]);
    expect(JSON.parse(sent[0]?.body ?? '')).toEqual({
      valor: '50.00',
      pagador: { chave: 'payer@example.com' },
      favorecido: { chave: 'seller@example.com' },
    });
    expect(new URLSearchParams(tokenBodies[0]).get('scope')).toBe('pix.send gn.pix.send.read');
  });

  it('maps the statuses of a send: in progress, paid with its e2eId, refused with its reason', () => {
    expect(sendOutcome('GET', got('EM_PROCESSAMENTO'), ID, '50.00')).toEqual({ status: 'processing' });
    expect(sendOutcome('GET', got('REALIZADO'), ID, '50.00')).toEqual({ status: 'paid', reference: E2E });
    expect(sendOutcome('PUT', put('REALIZADO'), ID, '50.00')).toEqual({ status: 'paid', reference: E2E });
    expect(sendOutcome('GET', got('NAO_REALIZADO'), ID, '50.00')).toEqual({
      status: 'failed',
      reason: 'Payout refused by the PSP (NAO_REALIZADO)',
    });
    expect(
      sendOutcome(
        'GET',
        got('NAO_REALIZADO', { gnExtras: { erro: { codigo: 'AC03', motivo: 'Conta inexistente' } } }),
        ID,
        '50.00',
      ),
    ).toEqual({ status: 'failed', reason: 'Payout refused by the PSP: Conta inexistente' });
  });

  it('never records as paid an unknown status, another send, another amount or a send without e2eId', () => {
    for (const body of [
      got('DEVOLVIDO'),
      got('REALIZADO', { idEnvio: 'other' }),
      got('REALIZADO', { valor: '5.00' }),
      got('REALIZADO', { endToEndId: undefined }),
      { nome: 'erro_aplicacao' },
    ]) {
      expect(() => sendOutcome('GET', body, ID, '50.00')).toThrow(
        expect.objectContaining({ retryable: true }),
      );
    }
  });

  it('reads the send on a 409 id_envio_duplicado and takes its status', async () => {
    const { psp, sent } = adapter([
      {
        status: 409,
        body: { nome: 'id_envio_duplicado', mensagem: 'O id de envio informado já foi utilizado' },
      },
      { status: 200, body: got('REALIZADO') },
    ]);
    expect(await psp.pay(request)).toEqual({ status: 'paid', reference: E2E });
    expect(sent.map((s) => `${s.method} ${s.path}`)).toEqual([`PUT ${PUT_PATH}`, `GET ${GET_PATH}`]);
  });

  it('waits when a 409 names a send the lookup does not find', async () => {
    const { psp } = adapter([
      { status: 409, body: { nome: 'id_envio_duplicado' } },
      { status: 404, body: { title: 'Não Encontrado', detail: 'Pix enviado não encontrado' } },
    ]);
    await expect(psp.pay(request)).rejects.toMatchObject({ retryable: true, status: 409 });
  });

  it('fails on a refusal only once Efí has no such send, with its words', async () => {
    const { psp, sent } = adapter([
      { status: 422, body: { nome: 'pagamento_negado', mensagem: 'Pagamento negado por análises' } },
      { status: 404, body: { type: 'x/PixEnviadoNaoEncontrado', title: 'Não Encontrado', status: 404 } },
    ]);
    expect(await psp.pay(request)).toEqual({
      status: 'failed',
      reason: 'Payout refused by the PSP (422: pagamento_negado; Pagamento negado por análises)',
    });
    expect(sent.map((s) => s.method)).toEqual(['PUT', 'GET']);
  });

  it('takes the send Efí has when it refuses a repeat (a lost answer, then a 400 on the balance)', async () => {
    const { psp } = adapter([
      { status: 400, body: { nome: 'saldo_insuficiente' } },
      { status: 200, body: got('EM_PROCESSAMENTO') },
    ]);
    expect(await psp.pay(request)).toEqual({ status: 'processing' });
  });

  it('waits, never fails, on what is no answer about the send', async () => {
    for (const status of [401, 403, 404, 408, 429, 500, 503, 302]) {
      // A 401 is asked once more with a new token (the transport's renewal), then given up on.
      const tries = status === 401 ? 2 : 1;
      const { psp, sent } = adapter(Array.from({ length: tries }, () => ({ status, body: { nome: 'x' } })));
      await expect(psp.pay(request)).rejects.toMatchObject({ retryable: true, status });
      expect(sent).toHaveLength(tries);
    }
    // Nor when the lookup after a refusal cannot be read.
    const { psp } = adapter([
      { status: 400, body: { nome: 'valor_invalido' } },
      { status: 503, body: {} },
    ]);
    await expect(psp.pay(request)).rejects.toMatchObject({ retryable: true, status: 503 });
  });

  it('reads the send first when asked again, and sends only when Efí has none', async () => {
    const first = adapter([{ status: 200, body: got('REALIZADO') }]);
    expect(await first.psp.pay({ ...request, attempt: 2 })).toEqual({ status: 'paid', reference: E2E });
    expect(first.sent.map((s) => s.method)).toEqual(['GET']);

    const again = adapter([
      { status: 404, body: { title: 'Não Encontrado' } },
      { status: 201, body: put('EM_PROCESSAMENTO') },
    ]);
    expect(await again.psp.pay({ ...request, attempt: 3 })).toEqual({ status: 'processing' });
    expect(again.sent.map((s) => s.method)).toEqual(['GET', 'PUT']);
  });

  it('sends one PUT at a time', async () => {
    let open = 0;
    let most = 0;
    const fetchImpl: PspFetch = async (url, init) => {
      if (url.endsWith('/oauth/token')) {
        return { status: 200, text: async () => JSON.stringify({ access_token: 't', expires_in: 3600 }) };
      }
      open += 1;
      most = Math.max(most, open);
      await new Promise((resolve) => setTimeout(resolve, 5));
      open -= 1;
      const id = new URL(url).pathname.split('/').pop();
      const body = JSON.parse(init.body ?? '{}') as { valor: string };
      return {
        status: 201,
        text: async () =>
          JSON.stringify({ idEnvio: id, e2eId: E2E, valor: body.valor, status: 'EM_PROCESSAMENTO' }),
      };
    };
    const psp = efiPayouts({
      apiUrl: 'https://efi.example',
      tokenUrl: 'https://efi.example/oauth/token',
      clientId: 'id',
      clientSecret: 'secret',
      pixKey: 'payer@example.com',
      timeoutMs: 1000,
      fetchImpl,
    });
    const ids = ['1', '2', '3'].map((n) => `9b8a7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6${n}`);
    const outcomes = await Promise.all(ids.map((withdrawalId) => psp.pay({ ...request, withdrawalId })));
    expect(outcomes).toEqual(ids.map(() => ({ status: 'processing' })));
    expect(most).toBe(1);
  });
});
