import {
  API_BASE,
  COB,
  REFUND,
  anchorPattern,
  checkRequest,
  checkTokenRequest,
  formatConformance,
  loadSpec,
  runApiPixConformance,
  type Captured,
} from './api-pix';

// The charge adapter against the Central Bank's API Pix OpenAPI document (test/conformance/api-pix.ts;
// `npm run conformance:pix` prints the same report as a table).

describe('API Pix conformance', () => {
  it('the charge adapter speaks API Pix 2.9.0 as its OpenAPI document defines it', async () => {
    const report = await runApiPixConformance();
    expect(report.version).toBe('2.9.0');
    expect(report.failures).toEqual([]);
    expect(report.rows.map((r) => [r.operation, r.result])).toEqual([
      ['PUT /cob/{txid}', 'ok'],
      ['PUT /pix/{e2eid}/devolucao/{id}', 'ok'],
      ['GET /pix/{e2eid}/devolucao/{id}', 'ok'],
      ['POST {tokenUrl} (OAuth2 client credentials)', 'ok'],
      ['POST {webhookUrl}/pix (callback, our PspPixNotification)', 'ok'],
      ['PUT/GET /pix/envio/{idEnvio} (payouts)', 'not API Pix'],
    ]);
    const counts = Object.fromEntries(report.rows.map((r) => [r.operation, [r.requests, r.examples]]));
    // Every example answer of the spec for the operations we use: 4 cobs, 1 + 2 refunds, 5 Pix.
    expect(counts['PUT /cob/{txid}']).toEqual([5, 4]);
    expect(counts['PUT /pix/{e2eid}/devolucao/{id}']).toEqual([3, 1]);
    expect(counts['GET /pix/{e2eid}/devolucao/{id}']).toEqual([3, 2]);
    expect(counts['POST {webhookUrl}/pix (callback, our PspPixNotification)']).toEqual([0, 5]);
    expect(formatConformance(report)).toMatch(/PUT \/cob\/\{txid\} +\| 5 +\| 4 +\| ok/);
  });

  const spec = loadSpec();
  const put = (path: string, body: unknown, headers: Captured['headers'] = {}): Captured => ({
    method: 'PUT',
    path: `${API_BASE}${path}`,
    headers: { 'content-type': 'application/json', authorization: 'Bearer t', ...headers },
    body: JSON.stringify(body),
  });
  const cob = { calendario: { expiracao: 3600 }, valor: { original: '1.00' }, chave: 'k' };

  it('catches a request the spec refuses, its regular expressions anchored', () => {
    expect(checkRequest(spec, COB, put(`/cob/${'a'.repeat(35)}`, cob))).toEqual([]);
    // 36 characters: the spec's unanchored [a-zA-Z0-9]{26,35} alone would match inside it.
    expect(checkRequest(spec, COB, put(`/cob/${'a'.repeat(36)}`, cob))).toEqual([
      expect.stringMatching(/^path parameter txid=a{36}: \/ must match pattern/),
    ]);
    expect(
      checkRequest(spec, COB, put(`/cob/${'a'.repeat(35)}`, { ...cob, valor: { original: '1.5' } })),
    ).toEqual([expect.stringMatching(/^body: .*\/valor\/original must match pattern/)]);
    // A CPF as the spec means it ("/^\d{11}$/" read without its slashes), and one it refuses.
    const devedor = (cpf: string) => ({ ...cob, devedor: { cpf, nome: 'Maria' } });
    expect(checkRequest(spec, COB, put(`/cob/${'a'.repeat(35)}`, devedor('52998224725')))).toEqual([]);
    expect(checkRequest(spec, COB, put(`/cob/${'a'.repeat(35)}`, devedor('5299822472')))).not.toEqual([]);
    const e2e = 'E12345678202009091221abcdef12345';
    expect(checkRequest(spec, REFUND, put(`/pix/${e2e}/devolucao/D1`, { valor: '7.89' }))).toEqual([]);
    expect(checkRequest(spec, REFUND, put(`/pix/${e2e}9/devolucao/D1`, { valor: '7.89' }))).toEqual([
      expect.stringMatching(/^path parameter e2eid=/),
    ]);
    expect(checkRequest(spec, REFUND, put(`/pix/${e2e}/devolucao/D1`, {}))).toEqual([
      expect.stringMatching(/^body: .*valor/),
    ]);
  });

  it('catches a token request without the scopes the operations need', () => {
    const token = (body: string): Captured => ({
      method: 'POST',
      path: '/oauth/token',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: 'Basic aWQ6cw==' },
      body,
    });
    expect(
      checkTokenRequest(spec, token('grant_type=client_credentials&scope=cob.write pix.write'), [
        COB,
        REFUND,
      ]),
    ).toEqual([]);
    expect(checkTokenRequest(spec, token('grant_type=client_credentials'), [COB])).toEqual([
      'no scope cob.write for PUT /cob/{txid}',
    ]);
    expect(
      checkTokenRequest(spec, token('grant_type=client_credentials&scope=cob.write pix.send'), [COB]),
    ).toEqual(['scope pix.send is not in the spec']);
  });

  it('anchors the patterns as the spec means them', () => {
    expect(anchorPattern('[a-zA-Z0-9]{26,35}')).toBe('^(?:[a-zA-Z0-9]{26,35})$');
    expect(anchorPattern('^[0-9A-Z]{14}$')).toBe('^(?:[0-9A-Z]{14})$');
    expect(anchorPattern('/^\\d{11}$/')).toBe('^(?:\\d{11})$');
  });
});
