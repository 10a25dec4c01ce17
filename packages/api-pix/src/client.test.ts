import { apiPixClient, refusal, valor, type PspFetch } from './client';

describe('API Pix client', () => {
  it('sends the client credentials form-urlencoded before Base64 (RFC 6749 2.3.1)', async () => {
    const seen: Record<string, string>[] = [];
    const fetchImpl: PspFetch = async (url, init) => {
      seen.push(init.headers);
      const body = url.endsWith('/token') ? { access_token: 't', expires_in: 60 } : { ok: true };
      return { status: 200, text: async () => JSON.stringify(body) };
    };
    const client = apiPixClient({
      apiUrl: 'https://psp.example/api',
      tokenUrl: 'https://psp.example/token',
      clientId: 'client id:1',
      clientSecret: 's3cr%t+/=',
      timeoutMs: 1000,
      fetchImpl,
    });
    expect(await client.call('GET', '/thing')).toEqual({ ok: true });
    const basic = seen[0]?.authorization?.replace(/^Basic /, '') ?? '';
    expect(Buffer.from(basic, 'base64').toString('utf8')).toBe('client+id%3A1:s3cr%25t%2B%2F%3D');
    expect(seen[1]?.authorization).toBe('Bearer t');
  });

  it("turns a refusal into an error with the PSP's words, retryable only when it may pass", () => {
    const problem = JSON.stringify({
      title: 'Invalido',
      violacoes: [{ propriedade: 'valor', razao: 'zero' }],
    });
    expect(refusal('PUT /x', 400, problem)).toMatchObject({
      retryable: false,
      status: 400,
      message: 'PSP answered PUT /x with 400: Invalido; valor: zero',
    });
    expect(refusal('PUT /x', 503, '')).toMatchObject({ retryable: true });
    expect(refusal('PUT /x', 429, '')).toMatchObject({ retryable: true });
  });

  it('writes amounts as API Pix does', () => {
    expect(valor(1)).toBe('0.01');
    expect(valor(123456)).toBe('1234.56');
    expect(() => valor(0)).toThrow(/positive/);
    expect(() => valor(1.5)).toThrow(/integer/);
  });
});
