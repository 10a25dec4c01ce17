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
