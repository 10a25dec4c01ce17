import { buildDynamicBrCode, buildStaticBrCode, parseBrCode } from '../domain/brcode';
import { crc16CcittFalse } from '../domain/crc16';
import { PspError } from '../domain/psp';
import { bacenApiPix, type PspFetch } from './bacen-api-pix';

// The adapter's mapping with a scripted fetch; test/payments/bacen-api-pix.test.ts runs it over HTTP.

interface Sent {
  url: string;
  method: string;
  headers: Record<string, string>;
  body?: string;
}
type Script = (sent: Sent) => { status: number; body?: unknown } | Error;

const TXID = 'A'.repeat(35);
const LOCATION = 'psp.example/qr/v2/cob/9f2c';
const CODE = buildDynamicBrCode({
  location: LOCATION,
  amountCents: 15000,
  merchantName: 'Loja',
  merchantCity: 'Recife',
});
/** The code with `from` replaced by `to` (same length), its CRC recomputed so only the content is wrong. */
function altered(code: string, from: string, to: string): string {
  const body = code.slice(0, -4).replace(from, to);
  return body + crc16CcittFalse(body);
}
const TOKEN = { status: 200, body: { access_token: 'tok-1', token_type: 'Bearer', expires_in: 3600 } };

function scripted(
  api: Script,
  token: Script = () => TOKEN,
  scopes?: readonly string[],
  dueDateCharges = false,
) {
  const sent: Sent[] = [];
  const fetchImpl: PspFetch = async (url, init) => {
    const request = { url, method: init.method, headers: init.headers, body: init.body };
    sent.push(request);
    const answer = url.endsWith('/oauth/token') ? token(request) : api(request);
    if (answer instanceof Error) throw answer;
    const text = typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body ?? '');
    return { status: answer.status, text: async () => text };
  };
  const psp = bacenApiPix({
    apiUrl: 'https://psp.example/api/v2/',
    tokenUrl: 'https://psp.example/oauth/token',
    clientId: 'id',
    clientSecret: 'secret',
    scopes,
    dueDateCharges,
    pixKey: 'key@example.com',
    merchantName: 'Loja São João',
    merchantCity: 'Recife',
    timeoutMs: 1000,
    fetchImpl,
    now: () => new Date('2030-01-01T00:00:00.000Z'),
  });
  return { psp, sent };
}

const input = {
  txid: TXID,
  amountCents: 15000,
  expiresAt: new Date('2030-01-01T01:00:00.000Z'),
  debtorName: 'Maria',
  debtorDocument: '52998224725',
};

async function rejection(promise: Promise<unknown>): Promise<PspError> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  if (!(err instanceof PspError)) throw new Error(`expected a PspError, got ${String(err)}`);
  return err;
}

describe('bacen-api-pix createCharge', () => {
  it('PUTs the cob under the base URL and takes the code and location from the answer', async () => {
    const { psp, sent } = scripted(() => ({
      status: 201,
      body: { txid: TXID, pixCopiaECola: CODE, location: LOCATION },
    }));
    await expect(psp.createCharge(input)).resolves.toEqual({ copyAndPaste: CODE, location: LOCATION });
    const put = sent[1];
    expect(put).toMatchObject({ method: 'PUT', url: `https://psp.example/api/v2/cob/${TXID}` });
    expect(put?.headers.authorization).toBe('Bearer tok-1');
    expect(JSON.parse(put?.body ?? '')).toEqual({
      calendario: { expiracao: 3600 },
      devedor: { cpf: '52998224725', nome: 'Maria' },
      valor: { original: '150.00' },
      chave: 'key@example.com',
    });
  });

  it("reports the code's own location (what the payer's app reads), else the answer's", async () => {
    const loc = scripted(() => ({
      status: 201,
      body: { pixCopiaECola: CODE, loc: { location: 'x.example/1' } },
    }));
    await expect(loc.psp.createCharge(input)).resolves.toMatchObject({ location: LOCATION });
    const none = scripted(() => ({ status: 201, body: { pixCopiaECola: CODE } }));
    await expect(none.psp.createCharge(input)).resolves.toMatchObject({ location: LOCATION });
    const code = buildStaticBrCode({
      pixKey: 'k',
      amountCents: 15000,
      merchantName: 'A',
      merchantCity: 'B',
      txid: TXID,
    });
    const staticCode = scripted(() => ({
      status: 201,
      body: { pixCopiaECola: code, location: 'x.example/1' },
    }));
    await expect(staticCode.psp.createCharge(input)).resolves.toEqual({
      copyAndPaste: code,
      location: 'x.example/1',
    });
  });

  it.each([
    ['a wrong CRC', CODE.slice(0, -1) + (CODE.endsWith('0') ? '1' : '0')],
    ['another GUI in field 26', altered(CODE, 'br.gov.bcb.pix', 'br.gov.bcb.xix')],
    ['no field 26', altered(CODE, '26', '27')],
    [
      'another amount',
      buildDynamicBrCode({ location: LOCATION, amountCents: 100, merchantName: 'A', merchantCity: 'B' }),
    ],
    ['not a BR Code', 'hello'],
  ])('refuses an answer with %s', async (_what, code) => {
    const { psp } = scripted(() => ({ status: 201, body: { pixCopiaECola: code, location: LOCATION } }));
    const err = await rejection(psp.createCharge(input));
    expect(err.retryable).toBe(false);
  });

  it('accepts a static code the PSP answers (field 26/01), with no location', async () => {
    const code = buildStaticBrCode({
      pixKey: 'k',
      amountCents: 15000,
      merchantName: 'A',
      merchantCity: 'B',
      txid: TXID,
    });
    const { psp } = scripted(() => ({ status: 201, body: { pixCopiaECola: code } }));
    await expect(psp.createCharge(input)).resolves.toEqual({ copyAndPaste: code, location: null });
  });

  it('refuses an answer for another txid, or with neither pixCopiaECola nor location', async () => {
    const other = scripted(() => ({ status: 201, body: { txid: 'B'.repeat(35), pixCopiaECola: CODE } }));
    expect((await rejection(other.psp.createCharge(input))).retryable).toBe(false);
    const empty = scripted(() => ({ status: 201, body: { status: 'ATIVA' } }));
    const err = await rejection(empty.psp.createCharge(input));
    expect(err.retryable).toBe(false);
    expect(err.message).toMatch(/neither pixCopiaECola nor a usable location \(no location\)/);
    const array = scripted(() => ({ status: 201, body: [LOCATION] }));
    expect((await rejection(array.psp.createCharge(input))).retryable).toBe(false);
  });

  describe('bacen-api-pix createCharge without pixCopiaECola (optional since API Pix 2.6.0)', () => {
    it('builds the dynamic BR Code from location: our amount, merchant name and city', async () => {
      const { psp } = scripted(() => ({
        status: 201,
        body: { txid: TXID, revisao: 0, status: 'ATIVA', location: LOCATION, valor: { original: '150.00' } },
      }));
      const charge = await psp.createCharge(input);
      expect(charge).toEqual({ copyAndPaste: expect.any(String), location: LOCATION });
      const code = parseBrCode(charge.copyAndPaste);
      expect(code.valid).toBe(true);
      expect(code.fields).toMatchObject({
        '01': '12',
        '26': { '00': 'br.gov.bcb.pix', '25': LOCATION },
        '54': '150.00',
        '59': 'Loja Sao Joao',
        '60': 'Recife',
        '62': { '05': '***' },
      });
    });

    it('takes loc.location when location is absent, and drops a scheme', async () => {
      const loc = scripted(() => ({
        status: 201,
        body: { loc: { id: 7, location: LOCATION, tipoCob: 'cob' } },
      }));
      await expect(loc.psp.createCharge(input)).resolves.toMatchObject({ location: LOCATION });
      const https = scripted(() => ({ status: 201, body: { location: `https://${LOCATION}` } }));
      const charge = await https.psp.createCharge(input);
      expect(charge.location).toBe(LOCATION);
      expect((parseBrCode(charge.copyAndPaste).fields['26'] as Record<string, string>)['25']).toBe(LOCATION);
      const nulls = scripted(() => ({
        status: 201,
        body: { pixCopiaECola: null, location: LOCATION, loc: null },
      }));
      await expect(nulls.psp.createCharge(input)).resolves.toMatchObject({ location: LOCATION });
    });

    it.each([
      ['too long for a BR Code', `psp.example/${'a'.repeat(66)}`, /78 characters, at most 77/],
      ['with a space', 'psp.example/qr v2/1', /not a host and a path/],
      ['without a path', 'psp.example', /not a host and a path/],
      ['not ASCII', 'psp.example/qr/ç', /not a host and a path/],
      ['a bare scheme', 'https://', /not a host and a path/],
      ['empty', '  ', /no location/],
    ])('refuses a location %s when there is no code to use instead', async (_what, location, why) => {
      const { psp } = scripted(() => ({ status: 201, body: { location } }));
      const err = await rejection(psp.createCharge(input));
      expect(err.retryable).toBe(false);
      expect(err.message).toMatch(why);
    });

    it('keeps a valid pixCopiaECola when the location beside it is unusable', async () => {
      const { psp } = scripted(() => ({
        status: 201,
        body: { pixCopiaECola: CODE, location: 'bad location' },
      }));
      await expect(psp.createCharge(input)).resolves.toEqual({ copyAndPaste: CODE, location: LOCATION });
    });
  });

  describe('bacen-api-pix text fields', () => {
    it('cuts devedor.nome at 200 and solicitacaoPagador at 140 code points, never inside an emoji', async () => {
      const { psp, sent } = scripted(() => ({ status: 201, body: { location: LOCATION } }));
      await psp.createCharge({
        ...input,
        debtorName: `${'n'.repeat(199)}😀tail`,
        description: `${'d'.repeat(139)}🎉tail`,
      });
      const body = JSON.parse(sent[1]?.body ?? '{}') as {
        devedor: { nome: string };
        solicitacaoPagador: string;
      };
      expect(body.devedor.nome).toBe(`${'n'.repeat(199)}😀`);
      expect([...body.devedor.nome]).toHaveLength(200);
      expect(body.solicitacaoPagador).toBe(`${'d'.repeat(139)}🎉`);
      expect([...body.solicitacaoPagador]).toHaveLength(140);
      // No lone surrogate anywhere: the JSON text has no \\ud8xx escape.
      expect(sent[1]?.body).not.toMatch(/\\ud[89ab]/i);
    });

    it('asks the token for the scopes it is given, and for none when given none', async () => {
      const withScopes = scripted(
        () => ({ status: 201, body: { location: LOCATION } }),
        () => TOKEN,
        ['cob.write', 'cob.read', 'pix.write', 'pix.read'],
      );
      await withScopes.psp.createCharge(input);
      expect(new URLSearchParams(withScopes.sent[0]?.body).get('scope')).toBe(
        'cob.write cob.read pix.write pix.read',
      );
      const without = scripted(() => ({ status: 201, body: { location: LOCATION } }));
      await without.psp.createCharge(input);
      expect(without.sent[0]?.body).toBe('grant_type=client_credentials');
    });
  });

  it('omits devedor for a document that is neither CPF nor CNPJ, and refuses bad amounts', async () => {
    const { psp, sent } = scripted(() => ({ status: 201, body: { pixCopiaECola: CODE } }));
    await psp.createCharge({ ...input, debtorDocument: '123' });
    expect(JSON.parse(sent[1]?.body ?? '')).not.toHaveProperty('devedor');
    for (const amountCents of [0, -1, 1.5, 1e13]) {
      expect((await rejection(psp.createCharge({ ...input, amountCents }))).retryable).toBe(false);
    }
  });
});

describe('bacen-api-pix errors', () => {
  it('reports the PSP problem (title, detail, violacoes) on a 4xx, not retryable', async () => {
    const { psp } = scripted(() => ({
      status: 400,
      body: {
        type: 'https://pix.bcb.gov.br/api/v2/error/CobPayloadInvalido',
        title: 'Cobrança inválida.',
        status: 400,
        detail: 'A requisição não respeita o schema.',
        violacoes: [{ razao: 'valor inválido', propriedade: 'cob.valor.original' }],
      },
    }));
    const err = await rejection(psp.createCharge(input));
    expect(err).toMatchObject({ retryable: false, status: 400 });
    expect(err.message).toContain('Cobrança inválida.');
    expect(err.message).toContain('A requisição não respeita o schema.');
    expect(err.message).toContain('cob.valor.original: valor inválido');
  });

  it.each([500, 502, 503, 408, 429])('treats %s as retryable', async (status) => {
    const { psp } = scripted(() => ({ status, body: 'busy' }));
    expect(await rejection(psp.createCharge(input))).toMatchObject({ retryable: true, status });
  });

  it('treats a network failure as retryable', async () => {
    const { psp } = scripted(() =>
      Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
    );
    const err = await rejection(psp.createCharge(input));
    expect(err).toMatchObject({ retryable: true, status: null });
    expect(err.message).toContain('ECONNREFUSED');
  });

  it('retries a 401 once with a new token, and gives up on a second 401', async () => {
    let tokens = 0;
    const { psp, sent } = scripted(
      () => ({ status: 401, body: { title: 'Não autorizado', status: 401 } }),
      () => ({ status: 200, body: { access_token: `tok-${++tokens}`, expires_in: 3600 } }),
    );
    const err = await rejection(psp.createCharge(input));
    expect(err).toMatchObject({ retryable: false, status: 401 });
    expect(sent.map((s) => s.headers.authorization ?? s.url)).toEqual([
      expect.stringMatching(/^Basic /),
      'Bearer tok-1',
      expect.stringMatching(/^Basic /),
      'Bearer tok-2',
    ]);
  });

  it('refuses a token answer without a bearer token', async () => {
    for (const body of [{}, { access_token: 'x', token_type: 'mac' }, 'not json']) {
      const { psp } = scripted(
        () => ({ status: 201, body: { pixCopiaECola: CODE } }),
        () => ({ status: 200, body }),
      );
      expect((await rejection(psp.createCharge(input))).retryable).toBe(false);
    }
  });

  it('renews a token that lives less than the margin at half its life', async () => {
    let at = Date.parse('2030-01-01T00:00:00.000Z');
    let tokens = 0;
    const sent: string[] = [];
    const psp = bacenApiPix({
      apiUrl: 'https://psp.example',
      tokenUrl: 'https://psp.example/oauth/token',
      clientId: 'id',
      clientSecret: 'secret',
      pixKey: 'k',
      merchantName: 'Loja',
      merchantCity: 'Recife',
      timeoutMs: 1000,
      now: () => new Date(at),
      fetchImpl: async (url, init) => {
        sent.push(url.endsWith('/oauth/token') ? 'token' : String(init.headers.authorization));
        const body = url.endsWith('/oauth/token')
          ? { access_token: `tok-${++tokens}`, expires_in: 20 }
          : { pixCopiaECola: CODE };
        return { status: 200, text: async () => JSON.stringify(body) };
      },
    });
    await psp.createCharge(input);
    at += 9_000;
    await psp.createCharge(input);
    at += 2_000;
    await psp.createCharge(input);
    expect(sent).toEqual(['token', 'Bearer tok-1', 'Bearer tok-1', 'token', 'Bearer tok-2']);
  });
});

const E2E = 'E12345678202401011200abcdefghijk';
const REF = { endToEndId: E2E, refundId: 'D1' };

describe('bacen-api-pix refund', () => {
  it('PUTs the devolucao with the amount and maps each status API Pix defines', async () => {
    let answer: Record<string, unknown> = { status: 'DEVOLVIDO' };
    const { psp, sent } = scripted(() => ({
      status: 201,
      body: { id: 'D1', rtrId: 'D0', valor: '1.05', ...answer },
    }));
    await expect(psp.refund({ ...REF, amountCents: 105 })).resolves.toEqual({
      status: 'REFUNDED',
      reason: null,
    });
    expect(sent[1]).toMatchObject({
      method: 'PUT',
      url: `https://psp.example/api/v2/pix/${E2E}/devolucao/D1`,
    });
    expect(JSON.parse(sent[1]?.body ?? '')).toEqual({ valor: '1.05' });
    answer = { status: 'EM_PROCESSAMENTO' };
    await expect(psp.refund({ ...REF, amountCents: 105 })).resolves.toEqual({
      status: 'PROCESSING',
      reason: null,
    });
    answer = { status: 'NAO_REALIZADO', motivo: 'Conta encerrada.' };
    await expect(psp.refund({ ...REF, amountCents: 105 })).resolves.toEqual({
      status: 'FAILED',
      reason: 'Conta encerrada.',
    });
    answer = { status: 'NAO_REALIZADO' };
    await expect(psp.refund({ ...REF, amountCents: 105 })).resolves.toEqual({
      status: 'FAILED',
      reason: null,
    });
  });

  it("clips the PSP's reason at 140 code points, never inside an emoji", async () => {
    const motivo = `${'m'.repeat(139)}😀${'x'.repeat(500)}`;
    const { psp } = scripted(() => ({ status: 201, body: { status: 'NAO_REALIZADO', motivo } }));
    const refund = await psp.refund({ ...REF, amountCents: 105 });
    expect(refund).toEqual({ status: 'FAILED', reason: `${'m'.repeat(139)}😀…` });
  });

  it('treats an accepted answer that is not a status API Pix defines as an unknown outcome (retryable)', async () => {
    const answers: Array<{ status: number; body?: unknown }> = [
      { status: 201, body: { id: 'D1', status: 'SOMETHING_ELSE' } },
      { status: 201, body: { id: 'D1' } },
      { status: 200, body: { id: 'D1', status: 42 } },
      { status: 201, body: 'not json {' },
      { status: 204 },
    ];
    for (const answer of answers) {
      const { psp } = scripted(() => answer);
      const err = await rejection(psp.refund({ ...REF, amountCents: 105 }));
      expect({ answer, retryable: err.retryable }).toEqual({ answer, retryable: true });
    }
    // A refusal by status code stays a refusal; a PSP failing on its side may have refunded.
    const refused = scripted(() => ({ status: 400, body: { title: 'PixDevolucaoInvalida' } }));
    expect(await rejection(refused.psp.refund({ ...REF, amountCents: 105 }))).toMatchObject({
      retryable: false,
      status: 400,
    });
    const failing = scripted(() => ({ status: 503, body: { title: 'ServicoIndisponivel' } }));
    expect(await rejection(failing.psp.refund({ ...REF, amountCents: 105 }))).toMatchObject({
      retryable: true,
      status: 503,
    });
  });

  it.each([
    ['an end-to-end id of 31', { endToEndId: E2E.slice(1), refundId: 'D1' }],
    ['an end-to-end id of 33', { endToEndId: `${E2E}1`, refundId: 'D1' }],
    ['a path in the end-to-end id', { endToEndId: `../cob/${'a'.repeat(25)}`, refundId: 'D1' }],
    ['a refund id of 36', { endToEndId: E2E, refundId: 'x'.repeat(36) }],
    ['a refund id with a dash', { endToEndId: E2E, refundId: 'D-1' }],
  ])('refuses %s without calling the PSP', async (_what, ref) => {
    const { psp, sent } = scripted(() => ({ status: 201, body: { status: 'DEVOLVIDO' } }));
    expect((await rejection(psp.refund({ ...ref, amountCents: 1 }))).retryable).toBe(false);
    expect((await rejection(psp.lookupRefund(ref))).retryable).toBe(false);
    expect(sent).toHaveLength(0);
  });
});

describe('bacen-api-pix lookupRefund', () => {
  it('GETs the devolucao and maps its status as refund does', async () => {
    let answer: Record<string, unknown> = { status: 'EM_PROCESSAMENTO' };
    const { psp, sent } = scripted(() => ({
      status: 200,
      body: { id: 'D1', rtrId: 'D12345678202009091000abcde123456', valor: '1.05', ...answer },
    }));
    await expect(psp.lookupRefund(REF)).resolves.toEqual({ status: 'PROCESSING', reason: null });
    expect(sent[1]).toMatchObject({
      method: 'GET',
      url: `https://psp.example/api/v2/pix/${E2E}/devolucao/D1`,
    });
    expect(sent[1]?.body).toBeUndefined();
    answer = { status: 'DEVOLVIDO' };
    await expect(psp.lookupRefund(REF)).resolves.toEqual({ status: 'REFUNDED', reason: null });
    answer = { status: 'NAO_REALIZADO', motivo: 'Negado por timeout' };
    await expect(psp.lookupRefund(REF)).resolves.toEqual({ status: 'FAILED', reason: 'Negado por timeout' });
  });

  it('answers null when the PSP has no such refund (404)', async () => {
    const { psp } = scripted(() => ({ status: 404, body: { title: 'Devolução não encontrada' } }));
    await expect(psp.lookupRefund(REF)).resolves.toBeNull();
  });

  it('fails retryable when the PSP cannot say, and not retryable when it refuses the question', async () => {
    for (const answer of [
      { status: 503, body: 'busy' },
      { status: 200, body: { status: 'QUASE' } },
      { status: 200, body: 'not json' },
      // Another refund's answer says nothing of ours.
      { status: 200, body: { id: 'D2', status: 'NAO_REALIZADO' } },
    ]) {
      const { psp } = scripted(() => answer);
      expect({ answer, retryable: (await rejection(psp.lookupRefund(REF))).retryable }).toEqual({
        answer,
        retryable: true,
      });
    }
    const { psp } = scripted(() => ({ status: 403, body: { title: 'AcessoNegado' } }));
    expect(await rejection(psp.lookupRefund(REF))).toMatchObject({ retryable: false, status: 403 });
  });
});

describe('bacen-api-pix cancelDueDateCharge', () => {
  const COBV_TXID = 'B'.repeat(35);
  /** The PSP's answer to the PATCH: the charge, in `status`. */
  const answer = (status: string) => () => ({
    status: 200,
    body: {
      txid: COBV_TXID,
      revisao: 1,
      status,
      calendario: { dataDeVencimento: '2030-02-01', validadeAposVencimento: 30 },
      valor: { original: '150.00' },
    },
  });
  const cancel = (status: string) => {
    const { psp } = scripted(answer(status), undefined, undefined, true);
    if (!psp.cancelDueDateCharge) throw new Error('due-date charges are on in these tests');
    return psp.cancelDueDateCharge(COBV_TXID);
  };

  it('is removed only when the PSP answers the charge removed', async () => {
    await expect(cancel('REMOVIDA_PELO_USUARIO_RECEBEDOR')).resolves.toBe('removed');
    await expect(cancel('REMOVIDA_PELO_PSP')).resolves.toBe('removed');
  });

  it('is paid when the PSP answers the PATCH with the charge concluded, and retried when still active', async () => {
    await expect(cancel('CONCLUIDA')).resolves.toBe('paid');
    const active = await rejection(cancel('ATIVA'));
    expect(active.retryable).toBe(true);
  });
});
