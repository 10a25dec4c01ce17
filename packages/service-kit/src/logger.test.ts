import { Writable } from 'node:stream';
import { createLogger, scrub } from './logger';

function capture() {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, cb) {
      lines.push(chunk.toString());
      cb();
    },
  });
  return { lines, logger: createLogger('test', 'debug', stream) };
}

describe('logs never carry secrets or full tax ids', () => {
  const key = 'mk_live_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789';
  const secret = 'whsec_c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0';

  it('scrubs API keys, webhook secrets, bearer tokens, CPFs and CNPJs from free text', () => {
    const text = scrub(
      `key ${key} secret ${secret} header Bearer abc.def cpf 529.982.247-25 and 52998224725 cnpj 11.222.333/0001-81`,
    );
    expect(text).not.toContain(key);
    expect(text).not.toContain(secret);
    expect(text).not.toContain('abc.def');
    expect(text).not.toContain('982');
    expect(text).toContain('529.***.***-25');
    expect(text).toContain('11.2**.***/****-81');
  });

  it("scrubs the order list's searches from logged paths, however they are written", () => {
    const text = scrub(
      '/sellers/orders/?status=PAID&customer_tax_id=12.ABC.345%2F01DE-35&limit=5&CUSTOMER_EMAIL=ana%40example.com',
    );
    expect(text).toBe(
      '/sellers/orders/?status=PAID&customer_tax_id=[REDACTED]&limit=5&CUSTOMER_EMAIL=[REDACTED]',
    );
  });

  it('redacts sensitive fields and scrubs messages and nested values', () => {
    const { lines, logger } = capture();
    logger.info(
      {
        headers: { authorization: `Bearer ${key}` },
        customer: { tax_id: '52998224725' },
        note: `got ${secret}`,
      },
      `using ${key}`,
    );
    const out = lines.join('');
    expect(out).not.toContain(key);
    expect(out).not.toContain(secret);
    expect(out).not.toContain('52998224725');
    expect(JSON.parse(out)).toMatchObject({
      service: 'test',
      level: 'info',
      customer: { tax_id: '[REDACTED]' },
    });
  });

  it('scrubs error messages and stacks', () => {
    const { lines, logger } = capture();
    logger.error({ err: new Error(`bad key ${key}`) }, 'failed');
    expect(lines.join('')).not.toContain(key);
    expect(lines.join('')).toContain('mk_live_[REDACTED]');
  });

  it('redacts a whole webhook secret in standard base64, with + / and = padding, and in base64url', () => {
    // 32 bytes whose standard base64 has a +, a / and the padding, and whose base64url differs.
    const bytes = Buffer.from('fb' + 'ff'.repeat(4) + '3e'.repeat(25) + 'fbef', 'hex');
    const body = bytes.toString('base64');
    expect(body).toMatch(/\+.*\/|\/.*\+/);
    expect(body.endsWith('=')).toBe(true);
    const urlBody = bytes.toString('base64url');
    const { lines, logger } = capture();
    logger.info(
      { note: `got whsec_${body} and whsec_${urlBody}`, url: `https://h.example/?s=whsec_${body}&x=1` },
      `secret whsec_${body}.`,
    );
    const out = lines.join('');
    // No piece of either secret is left, however the alphabet splits it.
    for (const piece of [...body.split(/[+/=]/), ...urlBody.split(/[-_]/)].filter((p) => p.length >= 3)) {
      expect(out).not.toContain(piece);
    }
    expect(JSON.parse(out)).toMatchObject({
      msg: 'secret whsec_[REDACTED].',
      note: 'got whsec_[REDACTED] and whsec_[REDACTED]',
      url: 'https://h.example/?s=whsec_[REDACTED]&x=1',
    });
  });
});

describe('personal data in free text', () => {
  it('masks e-mail and phone PIX keys, keeping only their edges', () => {
    const text = scrub(
      'chave ana.souza+pix@example.com.br inválida; chave +5511987654321 e +55 (21) 98765-4321 e 5511912345678' +
        ' e maria_silva@example.com',
    );
    for (const hidden of ['ana.souza', 'souza+pix', '98765432', '987654321', '98765-43', '91234567', 'silva'])
      expect(text).not.toContain(hidden);
    expect(text).toBe(
      'chave a***@example.com.br inválida; chave +55*********21 e +55*********21 e +55*********78' +
        ' e m***@example.com',
    );
  });

  it('masks alphanumeric CNPJs, punctuated or with valid check digits, in any case when punctuated', () => {
    const text = scrub('cnpj 12.ABC.345/01DE-35, 12ABC34501DE35 and 12.abc.345/01de-35');
    expect(text).not.toMatch(/ABC|abc|345|01DE|01de/);
    expect(text).toBe('cnpj 12.A**.***/****-35, 12.A**.***/****-35 and 12.a**.***/****-35');
  });

  it('masks CPFs written with spaces', () => {
    expect(scrub('cpf 123 456 789 09 and 123 456 789-09')).toBe('cpf 123.***.***-09 and 123.***.***-09');
  });

  it('leaves ids, amounts and dates readable', () => {
    const readable = [
      'order 3f6c2a1e-9b8d-4c7e-a5f4-0123456789ab',
      'uuid 0e6f1d2c-3b4a-4958-8776-a5b4c3d2e1f0',
      'e2e E1234567820261128123456789ab12',
      'e2e E00000000202611280800ABCDEF12345',
      'txid 7a8b9c0d1e2f3a4b5c6d7e8f9a0b1c2',
      'idEnvio 3f6c2a1e9b8d4c7ea5f40123456789ab',
      'refund D3F6C2A1E9B8D4C7EA5F40123456',
      // 14 characters ending in 2 digits, without a CNPJ's check digits: a code, not a CNPJ.
      'code ABCDEFGHIJKL12',
      'amount 1234.56 valor "150.00" cents 123456789',
      'at 2026-11-28T07:03:54.123Z on 2026-11-28',
      'seq 12345678901234567890 ms 1764313434123',
      'request_id 9b2f6c1e-3a4d-4e5f-8a7b-6c5d4e3f2a1b',
    ];
    for (const line of readable) expect(scrub(line)).toBe(line);
  });
});

describe('query parameters in a logged URL', () => {
  it('redacts the searches however the key is written: brackets, percent-encoding, case', () => {
    const urls = [
      '/api/v1/sellers/orders/?customer_email[]=ana%40example.com&limit=5',
      '/api/v1/sellers/orders/?customer_email%5B%5D=ana%40example.com&limit=5',
      '/api/v1/sellers/orders/?customer%5Femail=ana%40example.com&limit=5',
      '/api/v1/sellers/orders/?customer%5femail=ana%40example.com&limit=5',
      '/api/v1/sellers/orders/?Customer%255FEmail=ana%40example.com&limit=5',
      '/api/v1/sellers/orders/?customer[email]=ana%40example.com&limit=5',
      '/api/v1/sellers/orders/?customer_tax_id%5B0%5D=52998224725&limit=5',
    ];
    for (const url of urls) {
      const text = scrub(url);
      expect(text).not.toMatch(/ana|529982|%40example/);
      expect(text).toMatch(/=\[REDACTED\]&limit=5$/);
    }
  });

  it('masks personal data percent-encoded in any other parameter, and leaves the rest as sent', () => {
    expect(scrub('/x/?q=ana%40example.com&cursor=abc%3D&status=PAID')).toBe(
      '/x/?q=a***@example.com&cursor=abc%3D&status=PAID',
    );
    expect(scrub('/x/?created_after=2026-11-28T00%3A00%3A00Z&limit=100')).toBe(
      '/x/?created_after=2026-11-28T00%3A00%3A00Z&limit=100',
    );
  });
});
