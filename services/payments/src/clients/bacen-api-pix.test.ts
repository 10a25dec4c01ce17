import { buildDynamicBrCode, buildStaticBrCode } from '../domain/brcode';
import { crc16CcittFalse } from '../domain/crc16';
import { PspError } from '../domain/psp';
import {
  PSP_NOTIFICATION_SECRET_HEADER,
  bacenApiPix,
  isPspNotificationAuthorized,
  pspNotificationHeaders,
  type PspFetch,
} from './bacen-api-pix';

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

function scripted(api: Script, token: Script = () => TOKEN) {
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
    pixKey: 'key@example.com',
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

  it('finds the location in loc.location or in the code when the answer has no location', async () => {
    const loc = scripted(() => ({
      status: 201,
      body: { pixCopiaECola: CODE, loc: { location: 'x.example/1' } },
    }));
    await expect(loc.psp.createCharge(input)).resolves.toMatchObject({ location: 'x.example/1' });
    const none = scripted(() => ({ status: 201, body: { pixCopiaECola: CODE } }));
    await expect(none.psp.createCharge(input)).resolves.toMatchObject({ location: LOCATION });
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

  it('refuses an answer for another txid or without pixCopiaECola', async () => {
    const other = scripted(() => ({ status: 201, body: { txid: 'B'.repeat(35), pixCopiaECola: CODE } }));
    expect((await rejection(other.psp.createCharge(input))).retryable).toBe(false);
    const empty = scripted(() => ({ status: 201, body: { status: 'ATIVA' } }));
    expect((await rejection(empty.psp.createCharge(input))).retryable).toBe(false);
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

describe('bacen-api-pix refund', () => {
  it('PUTs the devolucao with the amount and maps the status', async () => {
    let status = 'DEVOLVIDO';
    const { psp, sent } = scripted(() => ({
      status: 201,
      body: { id: 'D1', rtrId: 'D0', valor: '1.05', status },
    }));
    const e2e = 'E12345678202401011200abcdefghijk';
    await expect(psp.refund({ endToEndId: e2e, refundId: 'D1', amountCents: 105 })).resolves.toEqual({
      status: 'REFUNDED',
    });
    expect(sent[1]).toMatchObject({
      method: 'PUT',
      url: `https://psp.example/api/v2/pix/${e2e}/devolucao/D1`,
    });
    expect(JSON.parse(sent[1]?.body ?? '')).toEqual({ valor: '1.05' });
    status = 'EM_PROCESSAMENTO';
    await expect(psp.refund({ endToEndId: e2e, refundId: 'D1', amountCents: 105 })).resolves.toEqual({
      status: 'PROCESSING',
    });
    status = 'NAO_REALIZADO';
    expect(
      (await rejection(psp.refund({ endToEndId: e2e, refundId: 'D1', amountCents: 105 }))).retryable,
    ).toBe(false);
  });

  it('treats an accepted answer that is not a definite refusal as an unknown outcome (retryable)', async () => {
    const e2e = 'E12345678202401011200abcdefghijk';
    const answers: Array<{ status: number; body?: unknown }> = [
      { status: 201, body: { id: 'D1', status: 'SOMETHING_ELSE' } },
      { status: 201, body: { id: 'D1' } },
      { status: 200, body: { id: 'D1', status: 42 } },
      { status: 201, body: 'not json {' },
      { status: 204 },
    ];
    for (const answer of answers) {
      const { psp } = scripted(() => answer);
      const err = await rejection(psp.refund({ endToEndId: e2e, refundId: 'D1', amountCents: 105 }));
      expect({ answer, retryable: err.retryable }).toEqual({ answer, retryable: true });
    }
    // A refusal by status code stays a refusal.
    const { psp } = scripted(() => ({ status: 400, body: { title: 'PixDevolucaoInvalida' } }));
    expect(
      (await rejection(psp.refund({ endToEndId: e2e, refundId: 'D1', amountCents: 105 }))).retryable,
    ).toBe(false);
  });

  it('refuses ids that cannot be a path segment of API Pix, without calling the PSP', async () => {
    const { psp, sent } = scripted(() => ({ status: 201, body: { status: 'DEVOLVIDO' } }));
    await rejection(psp.refund({ endToEndId: '../cob', refundId: 'D1', amountCents: 1 }));
    await rejection(psp.refund({ endToEndId: 'E1', refundId: 'x'.repeat(36), amountCents: 1 }));
    expect(sent).toHaveLength(0);
  });
});

describe('PSP notification secret', () => {
  const secret = 's'.repeat(20);
  it('is a bearer token in Authorization, compared exactly', () => {
    expect(PSP_NOTIFICATION_SECRET_HEADER).toBe('authorization');
    expect(pspNotificationHeaders(secret)).toEqual({ authorization: `Bearer ${secret}` });
    expect(isPspNotificationAuthorized(`Bearer ${secret}`, secret)).toBe(true);
    expect(isPspNotificationAuthorized(`bearer ${secret}`, secret)).toBe(true);
    expect(isPspNotificationAuthorized(`Bearer ${'s'.repeat(19)}`, secret)).toBe(false);
    expect(isPspNotificationAuthorized(secret, secret)).toBe(false);
    expect(isPspNotificationAuthorized(`Basic ${secret}`, secret)).toBe(false);
    expect(isPspNotificationAuthorized(undefined, secret)).toBe(false);
    expect(isPspNotificationAuthorized([`Bearer ${secret}`], secret)).toBe(false);
    expect(isPspNotificationAuthorized('Bearer ', '')).toBe(false);
  });
});
