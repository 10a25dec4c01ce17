import { apiPixClient, clip, cutCodePoints, refusal, valor, type PspFetch } from './client';

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

  it('asks the token endpoint for the scopes given, space-separated (RFC 6749 3.3)', async () => {
    const bodies: (string | undefined)[] = [];
    const fetchImpl: PspFetch = async (url, init) => {
      bodies.push(init.body);
      const body = url.endsWith('/token') ? { access_token: 't', expires_in: 60 } : { ok: true };
      return { status: 200, text: async () => JSON.stringify(body) };
    };
    const options = {
      apiUrl: 'https://psp.example/api',
      tokenUrl: 'https://psp.example/token',
      clientId: 'id',
      clientSecret: 'secret',
      timeoutMs: 1000,
      fetchImpl,
    };
    await apiPixClient({ ...options, scopes: ['cob.write', 'pix.read'] }).call('GET', '/x');
    expect(bodies[0]).toBe('grant_type=client_credentials&scope=cob.write+pix.read');
    await apiPixClient({ ...options, scopes: [] }).call('GET', '/x');
    expect(bodies[2]).toBe('grant_type=client_credentials');
    expect(() => apiPixClient({ ...options, scopes: ['cob.write pix.read'] })).toThrow(/scopes/);
  });

  it('cuts text by code points, never leaving half of a surrogate pair', () => {
    expect(cutCodePoints('abc', 5)).toBe('abc');
    expect(cutCodePoints('ab😀cd', 3)).toBe('ab😀');
    expect(cutCodePoints('ab😀cd', 2)).toBe('ab');
    expect(cutCodePoints('😀😀😀', 2)).toBe('😀😀');
    expect(cutCodePoints('', 0)).toBe('');
    // UTF-16 slicing would end in a lone high surrogate here.
    const text = `${'a'.repeat(139)}😀b`;
    expect(text.slice(0, 140)).toMatch(/\ud83d$/);
    expect(cutCodePoints(text, 140)).toBe(`${'a'.repeat(139)}😀`);
    expect(clip(`${'x'.repeat(499)}😀😀`)).toBe(`${'x'.repeat(499)}😀…`);
    expect(clip('short')).toBe('short');
  });
});
